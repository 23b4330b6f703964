// Share of a text part taken by links: for HTML the text of <a> elements, for plain text the
// URLs written in it (Rspamd: tag content lengths or get_urls_length over the part length).
import type { TextPart } from '../../plugin-api/index.js';

/** URLs as they appear in plain text: a scheme or `www.` start, up to whitespace. */
const PLAIN_URL = /\b(?:(?:https?|ftp):\/\/|www\.)[^\s<>"]+/gi;

export function urlOnlyRatio(part: TextPart): number {
  const plen = part.text.length;
  if (plen === 0) return 0;
  let urlLen = 0;
  if (part.html) {
    for (const l of part.html.links) urlLen += l.text.length;
  } else {
    for (const m of part.text.matchAll(PLAIN_URL)) urlLen += m[0].length;
  }
  return urlLen / plen;
}
