// Content-Transfer-Encoding: undo base64 and quoted-printable on raw body bytes. Both decoders
// are lenient (they decode what they can) and report whether the input was broken.
import type { MimeAnomaly } from './types.js';

export interface Decoded {
  content: Buffer;
  anomaly?: MimeAnomaly;
}

const BASE64_JUNK = /[^A-Za-z0-9+/=\s]/;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

/**
 * Truncation check without rewriting the whole text: encoders write equal lines whose length
 * is a multiple of 4, so only the last line can be short, and only it may hold `=` padding.
 */
function badBase64Tail(raw: Buffer): boolean {
  let end = raw.length;
  while (end > 0 && isSpace(raw[end - 1]!)) end--;
  if (end === 0) return false;
  let start = raw.lastIndexOf(0x0a, end - 1) + 1;
  while (start < end && isSpace(raw[start]!)) start++;
  let chars = 0;
  for (let i = start; i < end; i++) if (!isSpace(raw[i]!)) chars++;
  if (chars % 4 !== 0) return true;
  const pad = raw.indexOf(0x3d);
  return pad >= 0 && pad < start;
}

function decodeBase64(raw: Buffer): Decoded {
  const text = raw.toString('latin1');
  const content = Buffer.from(text, 'base64');
  const broken = BASE64_JUNK.test(text) || badBase64Tail(raw);
  return broken ? { content, anomaly: 'bad_base64' } : { content };
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function decodeQuotedPrintable(raw: Buffer): Decoded {
  // Fast path: no escapes at all.
  if (raw.indexOf(0x3d) < 0) return { content: raw };
  const out = Buffer.allocUnsafe(raw.length);
  let n = 0;
  let broken = false;
  const len = raw.length;
  for (let i = 0; i < len; i++) {
    const c = raw[i]!;
    if (c !== 0x3d) {
      out[n++] = c;
      continue;
    }
    const a = i + 1 < len ? raw[i + 1]! : -1;
    // Soft line break: '=' then optional trailing blanks, then CRLF or LF.
    let j = i + 1;
    while (j < len && (raw[j] === 0x20 || raw[j] === 0x09)) j++;
    if (j < len && raw[j] === 0x0d && raw[j + 1] === 0x0a) {
      i = j + 1;
      continue;
    }
    if (j < len && raw[j] === 0x0a) {
      i = j;
      continue;
    }
    if (j >= len) {
      i = len;
      continue;
    }
    const b = i + 2 < len ? raw[i + 2]! : -1;
    const hi = a < 0 ? -1 : hexValue(a);
    const lo = b < 0 ? -1 : hexValue(b);
    if (hi >= 0 && lo >= 0) {
      out[n++] = (hi << 4) | lo;
      i += 2;
    } else {
      broken = true;
      out[n++] = c;
    }
  }
  const content = out.subarray(0, n);
  return broken ? { content, anomaly: 'bad_qp' } : { content };
}

/** true for the encodings we understand (the identity ones included). */
export function isKnownTransferEncoding(cte: string): boolean {
  return cte === '7bit' || cte === '8bit' || cte === 'binary' || cte === 'base64' || cte === 'quoted-printable';
}

/** Undo `cte` on `raw`. Unknown encodings pass the bytes through with an anomaly. */
export function decodeTransfer(raw: Buffer, cte: string): Decoded {
  switch (cte) {
    case 'base64':
      return decodeBase64(raw);
    case 'quoted-printable':
      return decodeQuotedPrintable(raw);
    case '7bit':
    case '8bit':
    case 'binary':
    case '':
      return { content: raw };
    default:
      // x-uuencode and friends: scanned as is, flagged.
      return { content: raw, anomaly: 'bad_transfer_encoding' };
  }
}
