// Dates of Date and Received headers: RFC 5322 date-time text, often followed by a comment
// naming the zone (`(PDT)`, `(UTC)`), which Date.parse does not accept.
import { isBlank } from './blank.js';

/** Characters of a date read: real ones are under 64; Date.parse on a 64 KiB value is wasted work. */
const MAX_DATE_CHARS = 256;
const CLOSE_PAREN = 0x29;

/**
 * `text` without a trailing `(comment)` and the blanks around it: what
 * `text.replace(/\s*\([^)]*\)\s*$/, '')` gives, found by scanning instead. That regexp
 * backtracks quadratically (a Date header of a 64 KiB run of blanks took it 9 s).
 */
export function stripTrailingComment(text: string): string {
  let end = text.length;
  while (end > 0 && isBlank(text.charCodeAt(end - 1))) end--;
  if (end === 0 || text.charCodeAt(end - 1) !== CLOSE_PAREN) return text;
  // The comment holds no `)` of its own and starts at the first `(` after the one before it.
  const open = text.indexOf('(', text.lastIndexOf(')', end - 2) + 1);
  if (open < 0 || open >= end - 1) return text;
  let start = open;
  while (start > 0 && isBlank(text.charCodeAt(start - 1))) start--;
  return text.slice(0, start);
}

/** The date in a Date header or after a Received header's `;`, or undefined. */
export function parseMailDate(text: string): Date | undefined {
  const t = stripTrailingComment(text.length > MAX_DATE_CHARS ? text.slice(0, MAX_DATE_CHARS) : text).trim();
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
