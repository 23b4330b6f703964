// RFC 2047 encoded words in header values (`=?charset?B?...?=`, `=?charset?Q?...?=`), including
// RFC 2231 language suffixes (`=?utf-8*en?Q?...?=`). Adjacent encoded words of one charset are
// joined before decoding so a multi-byte character split across two words survives.
import { decodeCharset } from './charset.js';
import { MAX_ENCODED_WORDS } from './limits.js';

const ENCODED_WORD = /=\?([^?\s*]+)(?:\*[^?\s]*)?\?([bBqQ])\?([^?\s]*)\?=/g;
const ONLY_SPACE = /^[ \t\r\n]*$/;
const HEX2 = /^[0-9a-fA-F]{2}$/;

function qWordBytes(text: string): Buffer {
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5f) out[n++] = 0x20; // '_' is a space in Q encoding
    else if (c === 0x3d && i + 2 < text.length) {
      const hex = text.slice(i + 1, i + 3);
      const v = HEX2.test(hex) ? parseInt(hex, 16) : NaN;
      if (Number.isNaN(v)) out[n++] = c;
      else {
        out[n++] = v;
        i += 2;
      }
    } else out[n++] = c & 0xff;
  }
  return out.subarray(0, n);
}

function wordBytes(enc: string, text: string): Buffer {
  if (enc === 'b' || enc === 'B') return Buffer.from(text, 'base64');
  return qWordBytes(text);
}

/** Encoded words a message may still have decoded (MAX_ENCODED_WORDS); shared by its header blocks. */
export interface EncodedWordBudget {
  left: number;
  /** Set when a word was left as written because the budget was spent. */
  exhausted: boolean;
}

/** A fresh budget of MAX_ENCODED_WORDS: one per message (parse-message.ts), or per call. */
export function encodedWordBudget(): EncodedWordBudget {
  return { left: MAX_ENCODED_WORDS, exhausted: false };
}

/**
 * Decode every encoded word in `value`; text around them is kept as is. Each word decoded spends
 * one of `budget` (the message's, or a fresh one for this value alone); once none is left the
 * rest of the value stays as written. Never throws.
 */
export function decodeEncodedWords(value: string, budget: EncodedWordBudget = encodedWordBudget()): string {
  if (value.indexOf('=?') < 0) return value;
  let out = '';
  let last = 0;
  let pendingCharset = '';
  let pending: Buffer[] = [];
  const flush = (): void => {
    if (pending.length) out += decodeCharset(Buffer.concat(pending), pendingCharset).text;
    pending = [];
  };
  ENCODED_WORD.lastIndex = 0;
  for (let m = ENCODED_WORD.exec(value); m; m = ENCODED_WORD.exec(value)) {
    if (budget.left <= 0) {
      budget.exhausted = true;
      break;
    }
    budget.left--;
    const between = value.slice(last, m.index);
    const charset = m[1]!.toLowerCase();
    // Whitespace between two encoded words is not part of the text (RFC 2047 §6.2). Words of one
    // charset are joined (a multi-byte character may be split between them), but not ISO-2022
    // ones: each ends by shifting back to ASCII, and a decoder refuses a shift straight after
    // another (WHATWG ISO-2022-JP), as Rspamd never joins them either.
    if (pending.length && ONLY_SPACE.test(between) && charset === pendingCharset && !charset.startsWith('iso-2022')) {
      pending.push(wordBytes(m[2]!, m[3]!));
    } else {
      flush();
      if (!(last > 0 && ONLY_SPACE.test(between))) out += between;
      pendingCharset = charset;
      pending.push(wordBytes(m[2]!, m[3]!));
    }
    last = m.index + m[0].length;
  }
  flush();
  return out + value.slice(last);
}
