// Charset conversion of body and header bytes to UTF-8. Native Buffer decoding covers the
// common charsets; iconv-lite covers most of the rest, and the WHATWG decoders of Node's ICU the
// few it lacks (ISO-2022-JP, common in Japanese mail). A charset we cannot name falls back to
// UTF-8 when the bytes are valid UTF-8, else latin1, and says so.
import { isAscii, isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import iconv from 'iconv-lite';

export interface DecodedText {
  text: string;
  /** The charset was unknown, or the bytes were not valid in it. */
  bad: boolean;
}

const UTF8_NAMES = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'x-unicode20utf8']);
const ASCII_NAMES = new Set(['us-ascii', 'ascii', 'ansi_x3.4-1968', 'iso646-us', 'default', '']);
const LATIN1_NAMES = new Set(['iso-8859-1', 'iso8859-1', 'latin1', 'l1', 'iso_8859-1']);

// Names seen in the wild that iconv-lite does not know under that spelling.
const ALIASES: Record<string, string> = {
  'x-mac-cyrillic': 'maccyrillic',
  'ks_c_5601-1987': 'cp949',
  'x-sjis': 'shift_jis',
  'x-euc-jp': 'euc-jp',
  'x-gbk': 'gbk',
  'windows-874': 'cp874',
  'unicode': 'utf-16le',
};

/** Lower-cased, quote-stripped, trimmed charset label (blanks inside the quotes too: `" utf-8"`). */
export function normaliseCharset(label: string | undefined): string {
  if (!label) return '';
  return label.trim().replace(/^["']|["']$/g, '').trim().toLowerCase();
}

/** WHATWG decoders by label, made on first use; null where the label is unknown or useless. */
const whatwgDecoders = new Map<string, TextDecoder | null>();

function whatwgDecoder(name: string): TextDecoder | null {
  let d = whatwgDecoders.get(name);
  if (d !== undefined) return d;
  try {
    d = new TextDecoder(name, { fatal: true });
    // The "replacement" encoding (ISO-2022-KR, HZ) decodes everything to U+FFFD.
    if (d.encoding === 'replacement') d = null;
  } catch {
    d = null;
  }
  whatwgDecoders.set(name, d);
  return d;
}

function hasHighBytes(buf: Buffer): boolean {
  return !isAscii(buf);
}

/** true when `charset` is something we can convert from. */
export function isKnownCharset(charset: string): boolean {
  const cs = normaliseCharset(charset);
  if (UTF8_NAMES.has(cs) || ASCII_NAMES.has(cs) || LATIN1_NAMES.has(cs)) return true;
  return iconv.encodingExists(ALIASES[cs] ?? cs) || whatwgDecoder(cs) !== null;
}

/** Decode `buf` declared as `charset` to a JS string. Never throws. */
export function decodeCharset(buf: Buffer, charset: string | undefined): DecodedText {
  const cs = normaliseCharset(charset);
  if (UTF8_NAMES.has(cs) || ASCII_NAMES.has(cs)) {
    if (isUtf8(buf)) return { text: buf.toString('utf8'), bad: false };
    // Undeclared or mis-declared 8-bit text: latin1 keeps every byte visible.
    return { text: buf.toString('latin1'), bad: UTF8_NAMES.has(cs) };
  }
  if (LATIN1_NAMES.has(cs)) {
    // Mail clients label windows-1252 text as iso-8859-1; 0x80-0x9f are its printable extras.
    // ASCII (most such parts) reads the same in both, natively.
    return { text: hasHighBytes(buf) ? iconv.decode(buf, 'windows-1252') : buf.toString('latin1'), bad: false };
  }
  const name = ALIASES[cs] ?? cs;
  if (iconv.encodingExists(name)) {
    if (!hasHighBytes(buf) && !name.startsWith('utf-16') && !name.startsWith('utf-32') && !name.startsWith('utf-7')) {
      return { text: buf.toString('latin1'), bad: false };
    }
    try {
      return { text: iconv.decode(buf, name), bad: false };
    } catch {
      // iconv-lite throws only on codec construction bugs; fall through to the unknown path.
    }
  }
  const whatwg = whatwgDecoder(name);
  if (whatwg) {
    try {
      return { text: whatwg.decode(buf), bad: false };
    } catch {
      // Bytes invalid in the declared charset: fall through and say so.
    }
  }
  if (isUtf8(buf)) return { text: buf.toString('utf8'), bad: true };
  return { text: buf.toString('latin1'), bad: true };
}
