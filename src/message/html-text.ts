// HTML part → visible text plus the facts rules look at (tags, links with their displayed
// text, images, text hidden by its presentation). One streaming pass (html-reader.ts); no DOM
// is built.
import { readHtml } from './html-reader.js';
import { computeStyle, hexOf, isHidden, isTransparent, ROOT_STYLE, zeroFont } from './html-style.js';
import type { PresentationAttributes, StyleBlock } from './html-style.js';
import { MAX_HTML_BYTES, MAX_HTML_HIDDEN_BLOCKS, MAX_HTML_LINKS } from './limits.js';
import type { HtmlFacts, HtmlImage } from './types.js';

export interface RenderedHtml {
  text: string;
  facts: HtmlFacts;
}

// How the renderer treats an element, one bit each. Looked up once per tag event (one map
// lookup instead of a set lookup per property).
const HIDDEN = 1; // content never shown to the reader
const BLOCK = 2; // starts a new line
const CELL = 4; // a table cell: a space
const VOID = 8; // has no content, so no end tag to miss
const OPTIONAL_CLOSE = 16; // browsers close it implicitly: an implied close is not broken HTML
const KIND = new Map<string, number>();
function mark(bit: number, names: string[]): void {
  for (const n of names) KIND.set(n, (KIND.get(n) ?? 0) | bit);
}
mark(HIDDEN, ['script', 'style', 'title', 'template', 'xml']);
mark(BLOCK, [
  'p', 'div', 'br', 'tr', 'li', 'ul', 'ol', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'blockquote', 'hr', 'pre', 'section', 'article', 'header', 'footer', 'dd', 'dt', 'center',
]);
mark(CELL, ['td', 'th']);
mark(VOID, ['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr', 'basefont', 'frame', 'keygen']);
mark(OPTIONAL_CLOSE, ['p', 'li', 'td', 'th', 'tr', 'tbody', 'thead', 'tfoot', 'option', 'dd', 'dt', 'html', 'body', 'head', 'colgroup']);

/**
 * Collapse blank runs to one space and line-break runs to one newline. The patterns match only
 * what changes (not every lone space or newline), which halves the cost on ordinary text.
 */
export function collapseWhitespace(s: string): string {
  // CRLF text would have each CR replaced by the first pattern and its space removed by the
  // second: a split and join does the same in one native pass, which is much cheaper.
  if (s.indexOf('\r\n') >= 0) s = s.split('\r\n').join('\n');
  return s.replace(/[ \t\f\v\u00a0\r]{2,}|[\t\f\v\u00a0\r]/g, ' ').replace(/ \n[\s\u00a0]*|\n[\s\u00a0]+/g, '\n').trim();
}

/** An integer width/height attribute (`600`, `600px`); 0 when absent or not a number. */
function dimension(v: string | undefined): number {
  const n = v === undefined ? NaN : parseInt(v, 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Elements whose attributes the renderer reads. */
const ATTRIBUTE_TAGS: ReadonlySet<string> = new Set(['a', 'area', 'img', 'link']);
/** Attributes read on every element: its presentation. */
const PRESENTATION_ATTRIBUTES: ReadonlySet<string> = new Set(['style', 'color', 'bgcolor', 'hidden']);
/** Elements whose hidden or low-contrast text is reported (Rspamd's rules/html.lua looks at these). */
const TEXT_BLOCK_TAGS: ReadonlySet<string> = new Set(['font', 'span', 'div', 'p', 'td']);

/** An open element, as the renderer tracks it. */
interface Frame {
  name: string;
  style: StyleBlock;
  /** Non-blank text characters seen (shown or not) before it opened. */
  charsAtOpen: number;
  /** It has child elements. */
  parent: boolean;
}

/** Non-blank characters of `s`. */
function solidChars(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x20 && c !== 0xa0) n++;
  }
  return n;
}

/**
 * Render `html`, at most `maxChars` of it (MAX_HTML_BYTES, or what the message's budget has
 * left); `facts.truncated` says when the rest was not read.
 */
export function renderHtml(html: string, maxChars = MAX_HTML_BYTES): RenderedHtml {
  const imageTags: HtmlImage[] = [];
  const linkTags: string[] = [];
  const facts: HtmlFacts = { tags: new Set(), links: [], images: [], unbalanced: false, imageTags, linkTags };
  // Open <a href> elements: an image inside one is a clickable image.
  let openAnchors = 0;
  const out: string[] = [];
  let hidden = 0;
  let link: { href: string; text: string } | undefined;
  // The attributes of the tag being read (the first of a repeated name counts).
  let href: string | undefined;
  let src: string | undefined;
  let width: string | undefined;
  let height: string | undefined;
  let presentation: PresentationAttributes = {};
  // Open elements with their presentation; the document's block at the bottom.
  const frames: Frame[] = [{ name: '', style: ROOT_STYLE, charsAtOpen: 0, parent: false }];
  let chars = 0;
  let hiddenChars = 0;
  const hiddenBlocks: NonNullable<HtmlFacts['hiddenBlocks']> = [];
  const limit = Math.min(maxChars, MAX_HTML_BYTES);
  if (html.length > limit) facts.truncated = true;
  readHtml(html.length > limit ? html.slice(0, limit) : html, {
    onattribute(name, value) {
      if (name === 'style') presentation.style ??= value;
      else if (name === 'color') presentation.color ??= value;
      else if (name === 'bgcolor') presentation.bgcolor ??= value;
      else if (name === 'hidden') presentation.hidden = true;
      else if (name === 'href') href ??= value;
      else if (name === 'src') src ??= value;
      else if (name === 'width') width ??= value;
      else if (name === 'height') height ??= value;
    },
    onopentag(name) {
      facts.tags.add(name);
      const top = frames[frames.length - 1]!;
      top.parent = true;
      frames.push({ name, style: computeStyle(top.style, presentation), charsAtOpen: chars, parent: false });
      presentation = {};
      const kind = KIND.get(name) ?? 0;
      if (kind & HIDDEN) hidden++;
      else if (kind & BLOCK) out.push('\n');
      else if (kind & CELL) out.push(' ');
      if ((name === 'a' || name === 'area') && href !== undefined) {
        if (facts.links.length < MAX_HTML_LINKS) {
          const l: HtmlFacts['links'][number] = name === 'area' ? { href: href.trim(), text: '', tag: 'area' } : { href: href.trim(), text: '' };
          facts.links.push(l);
          if (name === 'a') link = l;
        } else facts.linksTruncated = true;
      } else if (name === 'img' && src !== undefined) {
        if (facts.images.length < MAX_HTML_LINKS) {
          const s = src.trim();
          facts.images.push(s);
          const lower = s.slice(0, 5).toLowerCase();
          imageTags.push({
            src: s,
            width: dimension(width),
            height: dimension(height),
            linked: openAnchors > 0,
            embedded: lower.startsWith('cid:') || lower.startsWith('data:'),
          });
        } else facts.linksTruncated = true;
      } else if (name === 'link' && href !== undefined) {
        if (linkTags.length < MAX_HTML_LINKS) linkTags.push(href.trim());
        else facts.linksTruncated = true;
      }
      if (name === 'a' && href !== undefined) openAnchors++;
      href = src = width = height = undefined;
    },
    ontext(text) {
      if (hidden > 0) return;
      const solid = solidChars(text);
      chars += solid;
      if (isHidden(frames[frames.length - 1]!.style)) {
        hiddenChars += solid;
        return;
      }
      // Source line breaks are plain whitespace in HTML; only block elements break lines.
      out.push(text.indexOf('\n') >= 0 ? text.replace(/[\r\n]+/g, ' ') : text);
      if (link) link.text += text;
    },
    onclosetag(name, isImplied) {
      // Events are balanced: this closes the innermost frame.
      const frame = frames.length > 1 ? frames.pop()! : undefined;
      if (frame && !frame.parent && TEXT_BLOCK_TAGS.has(name) && chars > frame.charsAtOpen) {
        const s = frame.style;
        const hiddenBlock = isHidden(s);
        const transparent = !hiddenBlock && isTransparent(s);
        if (hiddenBlock || transparent) {
          if (hiddenBlocks.length < MAX_HTML_HIDDEN_BLOCKS) {
            hiddenBlocks.push({
              tag: name, chars: chars - frame.charsAtOpen, hidden: hiddenBlock, zeroFont: zeroFont(s), transparent,
              color: hexOf(s.color), background: hexOf(s.background),
            });
          }
        }
      }
      const kind = KIND.get(name) ?? 0;
      if (kind & HIDDEN) hidden = Math.max(0, hidden - 1);
      else if (kind & BLOCK && name !== 'br') out.push('\n');
      if (name === 'a' && openAnchors > 0) openAnchors--;
      if (name === 'a' && link) {
        link.text = link.text.trim().replace(/\s+/g, ' ');
        link = undefined;
      }
      if (isImplied && (kind & (VOID | OPTIONAL_CLOSE)) === 0) facts.unbalanced = true;
    },
  }, ATTRIBUTE_TAGS, PRESENTATION_ATTRIBUTES);
  if (link) link.text = link.text.trim().replace(/\s+/g, ' ');
  if (hiddenBlocks.length > 0) facts.hiddenBlocks = hiddenBlocks;
  if (hiddenChars > 0) facts.hiddenChars = hiddenChars;
  return { text: collapseWhitespace(out.join('')), facts };
}
