// A text/plain or text/html part → TextPart: bytes converted to UTF-8 from whatever charset
// they claim, HTML rendered to visible text.
import { decodeCharset, isKnownCharset, normaliseCharset } from './charset.js';
import { collapseWhitespace, renderHtml } from './html-text.js';
import { MAX_HTML_BYTES, MAX_HTML_BYTES_PER_MESSAGE } from './limits.js';
import type { MimePart, TextPart } from './types.js';

/** Bytes of an HTML part searched for a `<meta charset>` when the header names none. */
const META_SNIFF_BYTES = 2048;
/** `charset=` inside one meta tag (the tag's text is found by indexOf, so nothing here backtracks over the sniffed bytes). */
const META_CHARSET = /charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)/i;

/**
 * The charset a `<meta … charset=…>` tag in `head` names. Each `<meta` is looked at up to its
 * `>`: the regexp `/<meta[^>]+charset…/` this replaces rescanned the rest of the head from every
 * `<meta`, a millisecond per part of `<meta <meta <meta …`.
 */
function metaCharset(head: string): string | undefined {
  const lower = head.toLowerCase();
  for (let at = lower.indexOf('<meta'); at >= 0; at = lower.indexOf('<meta', at + 5)) {
    const gt = lower.indexOf('>', at + 5);
    const m = META_CHARSET.exec(head.slice(at + 5, gt < 0 ? head.length : gt));
    if (m) return m[1];
  }
  return undefined;
}

/** What is left of the message's HTML rendering budget (MAX_HTML_BYTES_PER_MESSAGE). */
export interface TextBudget {
  htmlChars: number;
}

function countLines(s: string): number {
  if (!s) return 0;
  let n = 1;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return s.endsWith('\n') ? n - 1 : n;
}

export function isTextBodyPart(part: MimePart): boolean {
  if (part.isMultipart || part.isMessage || part.isAttachment) return false;
  const t = part.contentType.type;
  return t === 'text/plain' || t === 'text/html' || t.startsWith('multipart/');
}

export function makeTextPart(part: MimePart, budget: TextBudget = { htmlChars: MAX_HTML_BYTES_PER_MESSAGE }): TextPart {
  const kind = part.contentType.type === 'text/html' ? 'html' : 'plain';
  let charset = normaliseCharset(part.contentType.params['charset']) || undefined;
  if (!charset && kind === 'html') {
    const head = part.content.toString('latin1', 0, Math.min(part.content.length, META_SNIFF_BYTES));
    const named = metaCharset(head);
    if (named !== undefined) charset = normaliseCharset(named);
  }
  const decoded = decodeCharset(part.content, charset);
  let utf8 = decoded.text;
  if (utf8.charCodeAt(0) === 0xfeff) utf8 = utf8.slice(1);
  const badCharset = decoded.bad || (charset !== undefined && !isKnownCharset(charset));
  let text: string;
  const tp: TextPart = { part, kind, utf8, text: '', badCharset, lines: countLines(utf8), empty: true };
  if (charset !== undefined) tp.charset = charset;
  if (kind === 'html') {
    const rendered = renderHtml(utf8, budget.htmlChars);
    budget.htmlChars = Math.max(0, budget.htmlChars - Math.min(utf8.length, MAX_HTML_BYTES));
    text = rendered.text;
    tp.html = rendered.facts;
  } else text = collapseWhitespace(utf8);
  tp.text = text;
  tp.empty = text.length === 0;
  return tp;
}
