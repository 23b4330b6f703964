// Property tests of the HTML reader and renderer and of URL extraction in src/message/: any
// input reads without throwing within the caps and bounded CPU, the reader's elements nest, the
// renderer's text is collapsed, generated HTML reads like htmlparser2 reads it, and a URL in
// text or in a link is found with its host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Parser } from 'htmlparser2';
import { readHtml } from '../../src/message/html-reader.js';
import { collapseWhitespace, renderHtml } from '../../src/message/html-text.js';
import { MAX_BODY_EMAILS, MAX_HTML_LINKS, MAX_URLS } from '../../src/message/limits.js';
import { UrlCollector } from '../../src/message/urls.js';
import { CALL_CPU_MS, cheap, check, mailText, parserInput, repeated } from './property-helpers.js';

const HTML_TOKENS = [
  '<', '>', '</', '/>', '<!--', '-->', '<!', '<?', '<![CDATA[', ']]>', '=', '"', "'", '&amp;', '&#x41;', '&', ';',
  '<p>', '</p>', '<a href="http://x.example/">', '</a>', '<b>', '</b>', '<br>', '</br>', '<img src=y.png>', '<table>', '<td>', '<tr>',
  '<script>', '</script>', '<style>', '</style>', '<title>', '</title>', '<textarea>', '<plaintext>', '<svg>', '</svg>', '<math>',
  '<foreignObject>', '</foreignObject>', '<lineargradient>', '<form>', '</form>', '<li>', '<div>', '</div>', '<x', '</x>', 'a', 'b', ' ',
];

interface Recorded {
  events: string[];
  /** Every onclosetag closed the innermost element reported open (see record). */
  nested: boolean;
}

/**
 * The reader's events, and whether its elements nest. One exception: a tag cut off by the end
 * of the input opens its element without an onopentag (as htmlparser2 does), so the closes at
 * the end may hold one element never reported; it must be the first of them.
 */
function record(html: string): Recorded {
  const events: string[] = [];
  const open: string[] = [];
  let phantomAt = -1;
  let nested = true;
  readHtml(html, {
    onattribute() {},
    onopentag(name) {
      if (phantomAt >= 0) nested = false;
      events.push(`<${name}>`);
      open.push(name);
    },
    ontext(text) {
      if (phantomAt >= 0) nested = false;
      events.push(`"${text}"`);
    },
    onclosetag(name) {
      events.push(`</${name}>`);
      if (open[open.length - 1] === name) open.pop();
      else if (phantomAt < 0) phantomAt = events.length - 1;
      else nested = false;
    },
  }, new Set(['a', 'img', 'area', 'link']));
  return { events, nested };
}

test('readHtml and renderHtml: any input reads without throwing, in bounded CPU; elements nest; the caps hold', () => {
  check(500, fc.property(parserInput(HTML_TOKENS, 300), (html) => {
    const r = cheap('readHtml', CALL_CPU_MS, () => record(html));
    assert.ok(r.nested, r.events.join(''));
    const { text, facts } = cheap('renderHtml', CALL_CPU_MS, () => renderHtml(html));
    assert.ok(!text.includes('\r'));
    assert.equal(text, text.trim());
    assert.ok(facts.links.length <= MAX_HTML_LINKS && facts.images.length <= MAX_HTML_LINKS);
  }));
  check(80, fc.property(repeated(mailText(8, HTML_TOKENS), 6000), (html) => {
    cheap('renderHtml', CALL_CPU_MS * 2, () => renderHtml(html));
  }));
});

/** htmlparser2's events in the same form (the parser the reader replaced; see html-reader.test.ts). */
function reference(html: string): string[] {
  const events: string[] = [];
  const parser = new Parser({
    onopentag: (name) => void events.push(`<${name}>`),
    ontext: (text) => void events.push(`"${text}"`),
    onclosetag: (name) => void events.push(`</${name}>`),
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  parser.write(html);
  parser.end();
  return events;
}

/** Adjacent text events merged: the two parsers split text runs differently. */
function merged(events: string[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const last = out.length - 1;
    if (e.startsWith('"') && last >= 0 && out[last]!.startsWith('"')) out[last] = `${out[last]!.slice(0, -1)}${e.slice(1)}`;
    else out.push(e);
  }
  return out.filter((e) => e !== '""');
}

test('readHtml reads generated well-formed HTML as htmlparser2 does', () => {
  const name = fc.constantFrom('p', 'div', 'b', 'i', 'a', 'span', 'table', 'tr', 'td', 'li', 'ul', 'h1', 'form', 'svg', 'math', 'title', 'script', 'br', 'img', 'hr');
  const text = fc.stringMatching(/^[a-z &;.,]{0,12}$/);
  const html = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text,
      fc.tuple(name, fc.array(tie('node'), { maxLength: 4 }), fc.boolean()).map(([n, kids, close]) => `<${n}>${kids.join('')}${close ? `</${n}>` : ''}`),
    ),
  })).node;
  check(400, fc.property(html, (h) => {
    // Both sides end with every open element closed; only the text run boundaries differ.
    assert.deepEqual(merged(record(h).events), merged(reference(h)), h);
  }));
});

test('collapseWhitespace: the same result as before the CRLF split and join; idempotent', () => {
  const before = (s: string): string => s.replace(/[ \t\f\v\u00a0\r]{2,}|[\t\f\v\u00a0\r]/g, ' ').replace(/ \n[\s\u00a0]*|\n[\s\u00a0]+/g, '\n').trim();
  check(600, fc.property(parserInput(['\r\n', '\r', '\n', ' ', '\t', '\u00a0', '\r\r\n', ' \r\n '], 200), (s) => {
    const got = collapseWhitespace(s);
    assert.equal(got, before(s));
    assert.equal(collapseWhitespace(got), got);
  }));
});

const URL_TOKENS = ['http://', 'https://', 'ftp://', 'mailto:', 'www.', '.com', '.example', '.co.uk', '@', 'a@b.example', ':', '//', '/', '?', '#', '%', '[', ']', '::1', '192.0.2.1', 'xn--', '.', ',', '(', ')', '0x7f.1'];

test('UrlCollector: any text and links scan without throwing within the caps; what it keeps is a URL', () => {
  check(400, fc.property(parserInput(URL_TOKENS, 300), fc.array(parserInput(URL_TOKENS, 40), { maxLength: 5 }), (text, hrefs) => {
    const c = new UrlCollector();
    cheap('scanText', CALL_CPU_MS, () => c.scanText(text, ['text']));
    cheap('scanHtml', CALL_CPU_MS, () => c.scanHtml({ tags: new Set(), links: hrefs.map((href) => ({ href, text })), images: hrefs, unbalanced: false }));
    assert.ok(c.urls.size <= MAX_URLS && c.emails.size <= MAX_BODY_EMAILS);
    for (const u of c.urls.values()) {
      if (u.isEmail) assert.match(u.url, /^mailto:[^@]+@/);
      else assert.doesNotThrow(() => new URL(u.url), u.url);
      assert.equal(u.hostAscii, u.hostAscii.toLowerCase());
    }
    for (const e of c.emails.values()) assert.ok(!e.invalid);
  }));
});

test('UrlCollector: a web URL in prose or in a link is found with its host', () => {
  const url = fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }).filter((u) => !/[\s"'<>`]/.test(u) && !new URL(u).hostname.startsWith('['));
  check(300, fc.property(url, fc.constantFrom('see %s now', '%s', '(%s)', 'go to %s.', 'x\n%s\ny'), (u, frame) => {
    const host = new URL(u).hostname;
    const c = new UrlCollector();
    c.scanText(frame.replace('%s', u), ['text']);
    assert.ok([...c.urls.values()].some((f) => f.hostAscii === host), `${u} in ${JSON.stringify(frame)}: ${[...c.urls.keys()].join(' ')}`);
    const h = new UrlCollector();
    h.scanHtml({ tags: new Set(), links: [{ href: u, text: 'click' }], images: [], unbalanced: false });
    assert.ok([...h.urls.values()].some((f) => f.hostAscii === host), u);
  }));
});
