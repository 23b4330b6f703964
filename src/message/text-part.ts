// A text/plain or text/html part → TextPart: bytes converted to UTF-8 from whatever charset
// they claim, HTML rendered to visible text.
import { decodeCharset, isKnownCharset, normaliseCharset } from './charset.js';
import { collapseWhitespace, renderHtml } from './html-text.js';
import type { MimePart, TextPart } from './types.js';

/** Bytes of an HTML part searched for a `<meta charset>` when the header names none. */
const META_SNIFF_BYTES = 2048;
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)/i;

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

export function makeTextPart(part: MimePart): TextPart {
  const kind = part.contentType.type === 'text/html' ? 'html' : 'plain';
  let charset = normaliseCharset(part.contentType.params['charset']) || undefined;
  if (!charset && kind === 'html') {
    const head = part.content.toString('latin1', 0, Math.min(part.content.length, META_SNIFF_BYTES));
    const m = META_CHARSET.exec(head);
    if (m) charset = normaliseCharset(m[1]);
  }
  const decoded = decodeCharset(part.content, charset);
  let utf8 = decoded.text;
  if (utf8.charCodeAt(0) === 0xfeff) utf8 = utf8.slice(1);
  const badCharset = decoded.bad || (charset !== undefined && !isKnownCharset(charset));
  let text: string;
  const tp: TextPart = { part, kind, utf8, text: '', badCharset, lines: countLines(utf8), empty: true };
  if (charset !== undefined) tp.charset = charset;
  if (kind === 'html') {
    const rendered = renderHtml(utf8);
    text = rendered.text;
    tp.html = rendered.facts;
  } else text = collapseWhitespace(utf8);
  tp.text = text;
  tp.empty = text.length === 0;
  return tp;
}
