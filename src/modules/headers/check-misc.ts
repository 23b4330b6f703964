// Header-block structure and assorted header facts (MULTIPLE_UNIQUE_HEADERS, BROKEN_HEADERS,
// MISSING_MIME_VERSION, R_BAD_CTE_7BIT, subject checks, list and priority headers).
import { isAscii } from 'node:buffer';
import type { Task } from '../../plugin-api/index.js';
import { countBucket } from './util.js';

/** Headers RFC 5322 allows once, with Rspamd's weight for a repeat of each. */
const UNIQUE_HEADERS: ReadonlyArray<readonly [string, number]> = [
  ['Content-Type', 1.0],
  ['Content-Transfer-Encoding', 1.0],
  ['Date', 0.1],
  ['From', 1.0],
  ['Sender', 1.0],
  ['Reply-To', 1.0],
  ['To', 0.2],
  ['Cc', 0.1],
  ['Bcc', 0.1],
  ['Message-ID', 0.7],
  ['In-Reply-To', 0.7],
  ['References', 0.3],
  ['Subject', 0.7],
];

export function checkUniqueHeaders(task: Task): void {
  const found: string[] = [];
  let weight = 0;
  for (const [name, mult] of UNIQUE_HEADERS) {
    if (task.message.headers.get(name).length > 1) {
      found.push(name);
      if (mult > weight) weight = mult;
    }
  }
  if (found.length) task.insert('MULTIPLE_UNIQUE_HEADERS', weight, found.join(','));
}

/**
 * A header block never closed by a blank line: Rspamd's parser flags such input broken_headers
 * (as its recorded replies show). Input with no header lines at all is just a body and is not broken.
 */
function unterminatedHeaders(raw: Buffer): boolean {
  return raw.length > 0 && raw.indexOf('\n\n') < 0 && raw.indexOf('\r\n\r\n') < 0;
}

export function checkBrokenHeaders(task: Task): void {
  const m = task.message;
  const unterminated = !task.meta.raw && m.headers.all.length > 0 && unterminatedHeaders(m.raw);
  if (task.flags.has('broken_headers') || task.meta.brokenEnvelope || unterminated) {
    task.insert('BROKEN_HEADERS');
  }
}

export function checkMimeVersion(task: Task): void {
  const h = task.message.headers;
  // A plain RFC 822 message without MIME headers does not need MIME-Version.
  if (!h.has('mime-version') && (h.has('content-type') || h.has('content-transfer-encoding'))) {
    task.insert('MISSING_MIME_VERSION');
  }
}

/** Transfer encodings whose raw form is pure ASCII even when the content is not. */
const ASCII_SAFE_CTE = new Set(['8bit', 'base64', 'quoted-printable']);

/** Native (isAscii): a byte loop in JS took a quarter of a second over a 40 MB part. */
function hasEightBitBytes(buf: Buffer): boolean {
  return !isAscii(buf);
}

export function checkBadCte(task: Task): void {
  for (const tp of task.message.textParts) {
    const part = tp.part;
    // Without a CTE header Rspamd guesses 8bit for 8-bit content: only a declared encoding can be wrong.
    if (!part.headers.has('content-transfer-encoding')) continue;
    if (ASCII_SAFE_CTE.has(part.transferEncoding) || !hasEightBitBytes(part.content)) continue;
    // People rarely know UTF-8 is an 8-bit encoding: Rspamd softens the rule for it.
    const utf8 = part.contentType.params['charset']?.toLowerCase() === 'utf-8';
    task.insert('R_BAD_CTE_7BIT', utf8 ? 0.3 : 1, utf8 ? [part.transferEncoding, 'utf8'] : [part.transferEncoding]);
    return;
  }
}

export function checkMissingCharset(task: Task): void {
  for (const part of task.message.parts) {
    // A part without Content-Type is text/plain too (Rspamd's regexp sees the default type).
    if (part.contentType.type !== 'text/plain' || part.contentType.params['charset'] !== undefined) continue;
    if (part.content.length === 0) continue;
    // Without a CTE header Rspamd guesses 8bit when the bytes need it, 7bit otherwise.
    const cte = part.headers.first('content-transfer-encoding')?.value.toLowerCase() ?? (hasEightBitBytes(part.content) ? '8bit' : '7bit');
    if (cte === '7bit') continue;
    task.insert('R_MISSING_CHARSET');
    return;
  }
}

/** Reply and forward prefixes stripped before judging a subject. */
const SUBJECT_PREFIX = /^(?:(?:Re|Fwd|Fw|Aw|Antwort|Sv):\s*)+(.+)$/is;
const LONG_SUBJECT_CHARS = 200;

function strippedSubject(task: Task): string | undefined {
  const s = task.message.headers.first('subject')?.value;
  if (s === undefined) return undefined;
  return SUBJECT_PREFIX.exec(s)?.[1] ?? s;
}

/** Linear weight capped at 1, as Rspamd's subject rules do. */
const linear = (rate: number, len: number): number => Math.min(rate * len, 1);

export function checkSubject(task: Task): void {
  const h = task.message.headers.first('subject');
  if (!h) {
    task.insert('MISSING_SUBJECT');
    return;
  }
  if (h.value === '') {
    task.insert('EMPTY_SUBJECT');
    return;
  }
  const s = strippedSubject(task) ?? '';
  const len = [...s].length;
  if (/\p{L}/u.test(s) && s === s.toUpperCase() && s !== s.toLowerCase()) {
    task.insert('SUBJ_ALL_CAPS', linear(1 / 40, len), String(len));
  }
  if (len > LONG_SUBJECT_CHARS) task.insert('LONG_SUBJ', linear(1 / 400, len), String(len));
  if (/^re:/i.test(h.value) && !task.message.headers.has('references') && !task.message.headers.has('in-reply-to')) {
    task.insert('FAKE_REPLY');
  }
}

export function checkListUnsub(task: Task): void {
  if (task.message.headers.has('list-unsubscribe')) task.insert('HAS_LIST_UNSUB');
}

const PRIO_BUCKETS = [
  [1, 'ONE'],
  [2, 'TWO'],
  [3, 'THREE'],
  [5, 'FIVE'],
] as const;

export function checkXPriority(task: Task): void {
  const v = task.message.headers.first('x-priority')?.value;
  if (v === undefined) return;
  const m = /^\s?(\d+)/.exec(v);
  if (!m) return;
  const x = Number(m[1]);
  task.insert(`HAS_X_PRIO_${countBucket(x, PRIO_BUCKETS)}`, 1, String(x));
}
