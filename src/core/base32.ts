// Rspamd's base32: the z-base-32 alphabet, but read as one little-endian
// bit string, least significant bit first. Every key and key id on the wire uses it, so it
// must match Rspamd bit for bit, including how a trailing partial character is treated.

/** Value → character. Lower case only; Rspamd rejects upper case, `0`, `2`, `l`, `v`. */
const ALPHABET = 'ybndrfg8ejkmcpqxot1uwisza345h769';

/** Character code → value, -1 for characters outside the alphabet. */
const VALUES: Int8Array = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i;
  return t;
})();

/** Value → character code, for building the text in a byte buffer. */
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));

/** Encodes `bytes`; the output has ⌈8n/5⌉ characters and no padding. */
export function base32Encode(bytes: Uint8Array): string {
  // The characters go into a byte buffer read once as latin1: appending them to a string one by
  // one made a string object per character (103 for a BLAKE2b digest, hashed list keys and
  // PhishTank names are made several times a message).
  const out = Buffer.allocUnsafe(Math.ceil((bytes.length * 8) / 5));
  let o = 0;
  let acc = 0;
  let nbits = 0;
  for (let i = 0; i < bytes.length; i++) {
    acc |= bytes[i]! << nbits;
    nbits += 8;
    while (nbits >= 5) {
      out[o++] = CODES[acc & 31]!;
      acc >>>= 5;
      nbits -= 5;
    }
  }
  if (nbits > 0) out[o++] = CODES[acc & 31]!;
  return out.toString('latin1', 0, o);
}

/**
 * Decodes as Rspamd does: ⌊5(n−1)/8⌋+1 bytes for n ≥ 1 characters, surplus high bits of the
 * last character dropped. Returns undefined for any character outside the alphabet.
 */
export function base32Decode(text: string): Uint8Array | undefined {
  if (text.length === 0) return new Uint8Array(0);
  const out = new Uint8Array(Math.floor((5 * (text.length - 1)) / 8) + 1);
  let o = 0;
  let acc = 0;
  let nbits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? VALUES[c]! : -1;
    if (v < 0) return undefined;
    if (nbits >= 8) {
      out[o++] = acc & 0xff;
      acc >>>= 8;
      nbits -= 8;
    }
    acc |= v << nbits;
    nbits += 5;
  }
  if (nbits > 0) out[o++] = acc & 0xff;
  return o === out.length ? out : out.subarray(0, o);
}

/** Decodes and requires exactly `size` bytes (a 32-byte key accepts 51 or 52 characters, like Rspamd). */
export function base32DecodeExact(text: string, size: number): Uint8Array | undefined {
  const bytes = base32Decode(text);
  return bytes && bytes.length === size ? bytes : undefined;
}
