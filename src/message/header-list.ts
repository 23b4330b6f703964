// The header block: split into header fields on byte offsets, keep each raw value (folding
// kept) and a decoded one (unfolded, 8-bit text and encoded words decoded).
import { isUtf8 } from 'node:buffer';
import { decodeEncodedWords, encodedWordBudget, type EncodedWordBudget } from './encoded-words.js';
import { MAX_HEADER_BLOCK_BYTES, MAX_HEADER_LINE_BYTES, MAX_HEADERS } from './limits.js';
import { memoize } from './memo.js';
import type { HeaderList, MessageHeader, MimeAnomaly } from './types.js';

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const TAB = 0x09;
const COLON = 0x3a;

/**
 * Rules ask for headers by constant names ('Message-Id', 'X-Mailer', …) dozens of times a scan:
 * the lower-cased key is remembered instead of made (and hashed) again on every call.
 */
const keyOf = memoize((name: string): string => name.toLowerCase());

class Headers implements HeaderList {
  readonly all: readonly MessageHeader[];
  #byKey: Map<string, MessageHeader[]> | undefined;

  constructor(all: MessageHeader[]) {
    this.all = all;
  }

  #index(): Map<string, MessageHeader[]> {
    if (this.#byKey) return this.#byKey;
    const map = new Map<string, MessageHeader[]>();
    for (const h of this.all) {
      const list = map.get(h.key);
      if (list) list.push(h);
      else map.set(h.key, [h]);
    }
    return (this.#byKey = map);
  }

  get(name: string): MessageHeader[] {
    return this.#index().get(keyOf(name)) ?? [];
  }

  first(name: string): MessageHeader | undefined {
    return this.#index().get(keyOf(name))?.[0];
  }

  has(name: string): boolean {
    return this.#index().has(keyOf(name));
  }
}

export function makeHeaderList(all: MessageHeader[]): HeaderList {
  return new Headers(all);
}

export const EMPTY_HEADERS: HeaderList = new Headers([]);

export interface HeaderBlock {
  headers: MessageHeader[];
  /** Offset of the first body byte (after the blank line), or `end` when there is no body. */
  bodyOffset: number;
  newline: '\r\n' | '\n';
  anomalies: MimeAnomaly[];
}

function hasHighByte(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i]! > 0x7f) return true;
  return false;
}

function isNameByte(c: number): boolean {
  return c > SP && c < 0x7f && c !== COLON;
}

/** Decoded value of one header: unfolded, trimmed, 8-bit bytes and encoded words decoded. */
function decodeValue(buf: Buffer, start: number, end: number, words: EncodedWordBudget): { value: string; broken: boolean } {
  let broken = false;
  let text: string;
  if (hasHighByte(buf, start, end)) {
    const slice = buf.subarray(start, end);
    if (isUtf8(slice)) text = slice.toString('utf8');
    else {
      text = slice.toString('latin1');
      broken = true;
    }
  } else text = buf.toString('latin1', start, end);
  // A value is one line: folds are undone, and a stray CR or LF (a bare CR does not end a line
  // here) is dropped too, so no rule or generated header sees a line break inside a value.
  if (text.indexOf('\n') >= 0 || text.indexOf('\r') >= 0) text = text.replace(/\r?\n(?=[ \t])/g, '').replace(/[\r\n]/g, '');
  if (text.indexOf('=?') >= 0) text = decodeEncodedWords(text, words);
  return { value: text.trim(), broken };
}

/** Offset just after the first blank line at or after `pos` (LF LF or LF CR LF), or `end`. */
function blankLineEnd(buf: Buffer, pos: number, end: number): number {
  const a = buf.indexOf('\n\n', pos - 1);
  const b = buf.indexOf('\n\r\n', pos - 1);
  const ea = a < 0 || a >= end ? end : a + 2;
  const eb = b < 0 || b >= end ? end : b + 3;
  return Math.min(ea, eb);
}

/**
 * Parse the header block that starts at `start` in `buf` (up to `end`). Never throws: a line
 * that is not a header is skipped (or, as the first line, means there is no header block).
 * `words`: the message's encoded-word budget (a block of its own without one).
 */
export function parseHeaderBlock(buf: Buffer, start: number, end: number, words: EncodedWordBudget = encodedWordBudget()): HeaderBlock {
  const headers: MessageHeader[] = [];
  const anomalies: MimeAnomaly[] = [];
  let newline: '\r\n' | '\n' = '\n';
  const firstLf = buf.indexOf(LF, start);
  if (firstLf > start && firstLf < end && buf[firstLf - 1] === CR) newline = '\r\n';
  const limit = Math.min(end, start + MAX_HEADER_BLOCK_BYTES);
  let pos = start;
  // Current field: [fieldStart, fieldEnd) is the whole logical line (continuations included).
  let fieldStart = -1;
  let fieldEnd = -1;
  let colon = -1;
  let tooLong = false;
  let eightBit = false;

  const finish = (): void => {
    if (fieldStart < 0) return;
    if (headers.length >= MAX_HEADERS) {
      fieldStart = -1;
      return;
    }
    let vEnd = fieldEnd;
    if (vEnd - colon - 1 > MAX_HEADER_LINE_BYTES) {
      vEnd = colon + 1 + MAX_HEADER_LINE_BYTES;
      tooLong = true;
    }
    let nameEnd = colon;
    while (nameEnd > fieldStart && (buf[nameEnd - 1] === SP || buf[nameEnd - 1] === TAB)) nameEnd--;
    const name = buf.toString('latin1', fieldStart, nameEnd);
    const vStart = colon + 1;
    const { value, broken } = decodeValue(buf, vStart, vEnd, words);
    if (broken) eightBit = true;
    const h: MessageHeader = {
      name,
      key: name.toLowerCase(),
      raw: buf.toString('latin1', vStart, vEnd),
      value,
      order: headers.length,
    };
    if (broken) h.broken = true;
    headers.push(h);
    fieldStart = -1;
  };

  while (pos < limit) {
    let lf = buf.indexOf(LF, pos);
    if (lf < 0 || lf >= end) lf = end;
    let lineEnd = lf;
    if (lineEnd > pos && buf[lineEnd - 1] === CR) lineEnd--;
    const next = lf < end ? lf + 1 : end;
    if (lineEnd === pos) {
      // Blank line: the header block ends here.
      finish();
      return done(next);
    }
    if (headers.length >= MAX_HEADERS) {
      // Enough headers kept: jump to the blank line instead of walking the rest line by line.
      finish();
      anomalies.push('too_many_headers');
      return done(blankLineEnd(buf, pos, end));
    }
    const c = buf[pos]!;
    if ((c === SP || c === TAB) && fieldStart >= 0) {
      fieldEnd = lineEnd;
    } else {
      finish();
      let i = pos;
      while (i < lineEnd && isNameByte(buf[i]!)) i++;
      let j = i;
      while (j < lineEnd && (buf[j] === SP || buf[j] === TAB)) j++;
      if (i > pos && j < lineEnd && buf[j] === COLON) {
        fieldStart = pos;
        colon = j;
        fieldEnd = lineEnd;
      } else if (headers.length === 0) {
        // The very first line is not a header: the input has no header block at all.
        anomalies.push('no_headers');
        return { headers, bodyOffset: start, newline, anomalies };
      }
      // Otherwise a stray non-header line inside the block: skipped.
    }
    pos = next;
  }
  finish();
  if (pos < end) tooLong = true;
  return done(pos);

  function done(bodyOffset: number): HeaderBlock {
    if (tooLong) anomalies.push('header_too_long');
    if (eightBit) anomalies.push('eight_bit_header');
    return { headers, bodyOffset: Math.min(bodyOffset, end), newline, anomalies };
  }
}
