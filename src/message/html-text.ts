// HTML part → visible text plus the facts rules look at (tags, links with their displayed
// text, images). One streaming pass with htmlparser2; no DOM is built.
import { Parser } from 'htmlparser2';
import { MAX_HTML_BYTES, MAX_HTML_LINKS } from './limits.js';
import type { HtmlFacts, HtmlImage } from './types.js';

export interface RenderedHtml {
  text: string;
  facts: HtmlFacts;
}

// Content of these elements is never shown to the reader.
const HIDDEN = new Set(['script', 'style', 'title', 'template', 'xml']);
// Elements that start a new line when rendered.
const BLOCK = new Set([
  'p', 'div', 'br', 'tr', 'li', 'ul', 'ol', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'blockquote', 'hr', 'pre', 'section', 'article', 'header', 'footer', 'dd', 'dt', 'center',
]);
const CELL = new Set(['td', 'th']);
const VOID = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source',
  'track', 'wbr', 'basefont', 'frame', 'keygen',
]);
// Elements browsers close implicitly; an implied close of these is not a sign of broken HTML.
const OPTIONAL_CLOSE = new Set(['p', 'li', 'td', 'th', 'tr', 'tbody', 'thead', 'tfoot', 'option', 'dd', 'dt', 'html', 'body', 'head', 'colgroup']);

/**
 * Collapse blank runs to one space and line-break runs to one newline. The patterns match only
 * what changes (not every lone space or newline), which halves the cost on ordinary text.
 */
export function collapseWhitespace(s: string): string {
  return s.replace(/[ \t\f\v\u00a0\r]{2,}|[\t\f\v\u00a0\r]/g, ' ').replace(/ \n[\s\u00a0]*|\n[\s\u00a0]+/g, '\n').trim();
}

/** An integer width/height attribute (`600`, `600px`); 0 when absent or not a number. */
function dimension(v: string | undefined): number {
  const n = v === undefined ? NaN : parseInt(v, 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

export function renderHtml(html: string): RenderedHtml {
  const imageTags: HtmlImage[] = [];
  const linkTags: string[] = [];
  const facts: HtmlFacts = { tags: new Set(), links: [], images: [], unbalanced: false, imageTags, linkTags };
  // Open <a href> elements: an image inside one is a clickable image.
  let openAnchors = 0;
  const out: string[] = [];
  let hidden = 0;
  let link: { href: string; text: string } | undefined;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        facts.tags.add(name);
        if (HIDDEN.has(name)) hidden++;
        else if (BLOCK.has(name)) out.push('\n');
        else if (CELL.has(name)) out.push(' ');
        if ((name === 'a' || name === 'area') && attribs['href'] !== undefined && facts.links.length < MAX_HTML_LINKS) {
          const l = { href: attribs['href'].trim(), text: '' };
          facts.links.push(l);
          if (name === 'a') link = l;
        } else if (name === 'img' && attribs['src'] !== undefined && facts.images.length < MAX_HTML_LINKS) {
          const src = attribs['src'].trim();
          facts.images.push(src);
          const lower = src.slice(0, 5).toLowerCase();
          imageTags.push({
            src,
            width: dimension(attribs['width']),
            height: dimension(attribs['height']),
            linked: openAnchors > 0,
            embedded: lower.startsWith('cid:') || lower.startsWith('data:'),
          });
        } else if (name === 'link' && attribs['href'] !== undefined && linkTags.length < MAX_HTML_LINKS) {
          linkTags.push(attribs['href'].trim());
        }
        if (name === 'a' && attribs['href'] !== undefined) openAnchors++;
      },
      ontext(text) {
        if (hidden > 0) return;
        // Source line breaks are plain whitespace in HTML; only block elements break lines.
        out.push(text.indexOf('\n') >= 0 ? text.replace(/[\r\n]+/g, ' ') : text);
        if (link) link.text += text;
      },
      onclosetag(name, isImplied) {
        if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        else if (BLOCK.has(name) && name !== 'br') out.push('\n');
        if (name === 'a' && openAnchors > 0) openAnchors--;
        if (name === 'a' && link) {
          link.text = link.text.trim().replace(/\s+/g, ' ');
          link = undefined;
        }
        if (isImplied && !VOID.has(name) && !OPTIONAL_CLOSE.has(name)) facts.unbalanced = true;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html.length > MAX_HTML_BYTES ? html.slice(0, MAX_HTML_BYTES) : html);
  parser.end();
  if (link) link.text = link.text.trim().replace(/\s+/g, ' ');
  return { text: collapseWhitespace(out.join('')), facts };
}
