// Byte-level mutations shared by every surface, and the dictionaries of awkward values the
// structure-aware mutators splice in.
import type { Rng } from './rng.js';

/**
 * Largest input the mutators build. Inputs are built in memory and several are in flight at
 * once; past this a mutation is dropped (the input stays as it was before it) rather than
 * making the fuzzer itself the memory problem.
 */
export const MAX_INPUT_BYTES = 8 * 1024 * 1024;
/** Most times one chunk is repeated by `repeatChunk` (the superlinear-cost probe). */
export const MAX_REPEAT = 50_000;

/** Values that break parsers: empty, huge, NUL, CR/LF injection, 8-bit, numbers at their limits. */
export const AWKWARD_STRINGS: readonly string[] = [
  '', ' ', '\t', '\0', '\r', '\n', '\r\n', '\r\n\r\n', '\r\nX-Injected: 1', ';', ',', ':', '=', '"', '\\', '(', ')', '<', '>', '@', '[', ']',
  '%', '%00', '%zz', '%%', '%25', '+', '?', '#', '&', '/', '..', '../../..', '*', '{', '}', '[]', '{}', 'null', 'true', '-1', '0', '00', '-0',
  '1e309', '-1e309', 'NaN', 'Infinity', '9007199254740993', '18446744073709551616', '0x7fffffff', '4294967296', '2147483648', '1.5', '.5', '5.',
  '\u00a0', '\u2028', '\ufeff', '\u3000', '\u1680', '\x0b', '\x0c', '\x85', '\xff', '\xc3\x28', '\xed\xa0\x80', '\xf4\x90\x80\x80',
  'é', '日本語', '\u202e', '\ud800', 'A'.repeat(256), 'A'.repeat(4097), '1'.repeat(40),
  '127.0.0.1', '::1', '[::1]', '::ffff:127.0.0.1', '256.256.256.256', '1.2.3', '0x7f.1', '2130706433', 'fe80::1%eth0', '1:2:3:4:5:6:7:8:9',
  'a@b', '<a@b>', '<>', '@', 'a@', '@b', '"a b"@c', 'a@[127.0.0.1]', '<@x,@y:a@b>', 'undisclosed-recipients:;', 'x@xn--80ak6aa92e.com',
  '=?utf-8?B?w6k=?=', '=?utf-8?Q?=C3=A9?=', '=?x?B?', '=??=', '=?utf-8?B?!!!?=',
];

/** Longest string mutateString makes by repetition. */
const MAX_REPEATED_STRING = 1024 * 1024;

export function mutateString(rng: Rng, s: string): string {
  switch (rng.int(8)) {
    case 0: return rng.pick(AWKWARD_STRINGS);
    case 1: { const i = rng.int(s.length + 1); return s.slice(0, i) + rng.pick(AWKWARD_STRINGS) + s.slice(i); }
    case 2: return s + rng.pick(AWKWARD_STRINGS).repeat(rng.count(2000));
    case 3: { const i = rng.int(s.length); return s.slice(0, i) + s.slice(i + rng.count(s.length)); }
    case 4: return s.repeat(Math.max(1, Math.min(rng.count(500), Math.floor(MAX_REPEATED_STRING / Math.max(1, s.length)))));
    case 5: { const i = rng.int(s.length + 1); return s.slice(0, i) + String.fromCharCode(rng.int(256)) + s.slice(i); }
    case 6: return s.toUpperCase();
    default: return s + rng.str(rng.count(100), 'abcAB09-_.:;,=@<>()"\\ \t');
  }
}

function clampSize(before: Buffer, after: Buffer): Buffer {
  return after.length > MAX_INPUT_BYTES ? before : after;
}

/** Flip a few bits. */
export function flip(rng: Rng, b: Buffer): Buffer {
  if (b.length === 0) return b;
  const out = Buffer.from(b);
  for (let n = rng.count(16); n > 0; n--) out[rng.int(out.length)]! ^= 1 << rng.int(8);
  return out;
}

/** Overwrite a byte with an interesting one. */
export function setByte(rng: Rng, b: Buffer): Buffer {
  if (b.length === 0) return b;
  const out = Buffer.from(b);
  out[rng.int(out.length)] = rng.pick([0x00, 0xff, 0x7f, 0x80, 0x0d, 0x0a, 0x20, 0x09, 0x0b, 0x0c, 0x22, 0x3a, 0x3b, 0x3c, 0x3e, 0x3d, 0x2d]);
  return out;
}

export function insertBytes(rng: Rng, b: Buffer): Buffer {
  const at = rng.int(b.length + 1);
  const ins = rng.chance(0.5) ? rng.bytes(rng.count(64)) : Buffer.from(rng.pick(AWKWARD_STRINGS), 'latin1');
  return clampSize(b, Buffer.concat([b.subarray(0, at), ins, b.subarray(at)]));
}

export function deleteBytes(rng: Rng, b: Buffer): Buffer {
  if (b.length === 0) return b;
  const at = rng.int(b.length);
  const n = Math.min(b.length - at, rng.count(b.length));
  return Buffer.concat([b.subarray(0, at), b.subarray(at + n)]);
}

/** Replace a range of `b` with a range of `other` (another seed input). */
export function splice(rng: Rng, b: Buffer, other: Buffer): Buffer {
  if (other.length === 0) return b;
  const at = rng.int(b.length + 1);
  const cut = rng.int(Math.min(b.length - at, 4096) + 1);
  const from = rng.int(other.length);
  const n = Math.min(other.length - from, rng.count(other.length));
  return clampSize(b, Buffer.concat([b.subarray(0, at), other.subarray(from, from + n), b.subarray(at + cut)]));
}

/** Repeat one chunk of the input many times in place: finds costs that grow faster than the input. */
export function repeatChunk(rng: Rng, b: Buffer): Buffer {
  if (b.length === 0) return b;
  const at = rng.int(b.length);
  const len = Math.min(b.length - at, rng.count(1024));
  const chunk = b.subarray(at, at + len);
  const times = Math.min(rng.count(MAX_REPEAT), Math.floor(MAX_INPUT_BYTES / 2 / Math.max(1, len)));
  const parts: Buffer[] = [b.subarray(0, at)];
  for (let i = 0; i < times; i++) parts.push(chunk);
  parts.push(b.subarray(at));
  return clampSize(b, Buffer.concat(parts));
}

export function truncate(rng: Rng, b: Buffer): Buffer {
  return b.subarray(0, rng.int(b.length + 1));
}

/** One or more byte-level mutations; `others` supplies material for splicing. */
export function byteMutate(rng: Rng, b: Buffer, others: readonly Buffer[] = []): Buffer {
  let out = b;
  for (let n = rng.count(4); n > 0; n--) {
    switch (rng.int(7)) {
      case 0: out = flip(rng, out); break;
      case 1: out = setByte(rng, out); break;
      case 2: out = insertBytes(rng, out); break;
      case 3: out = deleteBytes(rng, out); break;
      case 4: out = others.length ? splice(rng, out, rng.pick(others)) : flip(rng, out); break;
      case 5: out = repeatChunk(rng, out); break;
      default: out = rng.chance(0.2) ? truncate(rng, out) : flip(rng, out);
    }
  }
  return out;
}

/** Each byte as pct() writes it: itself when encodeURIComponent keeps it, else %XX. */
const PCT_BYTE: readonly string[] = Array.from({ length: 256 }, (_, c) => (/[A-Za-z0-9\-_.!~*'()]/.test(String.fromCharCode(c)) ? String.fromCharCode(c) : `%${c.toString(16).toUpperCase().padStart(2, '0')}`));

/** encodeURIComponent that accepts lone surrogates (written as their UTF-8 replacement). */
export function pct(s: string): string {
  let out = '';
  for (const c of Buffer.from(s, 'utf8')) out += PCT_BYTE[c]!;
  return out;
}
