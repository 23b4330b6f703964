// Rspamd's base32 (z-base-32 alphabet, bits least significant first): what is encoded decodes
// back to the same bytes at every length, and each character carries the next five bits of the
// input, read from the bytes one bit at a time here rather than the encoder's accumulator.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { base32DecodeExact, base32Encode } from '../../src/core/base32.js';

const ALPHABET = 'ybndrfg8ejkmcpqxot1uwisza345h769';

/** Bit `i` of `bytes`, least significant bit of the first byte first; 0 past the end. */
function bit(bytes: Uint8Array, i: number): number {
  const b = bytes[i >> 3];
  return b === undefined ? 0 : (b >> (i & 7)) & 1;
}

test('base32Encode: every length up to 80 bytes round-trips, and each character is the next five bits', () => {
  for (let n = 0; n <= 80; n++) {
    for (let trial = 0; trial < 5; trial++) {
      const bytes = randomBytes(n);
      const text = base32Encode(bytes);
      assert.equal(text.length, Math.ceil((8 * n) / 5), `length for ${n} bytes`);
      for (let c = 0; c < text.length; c++) {
        let v = 0;
        for (let k = 0; k < 5; k++) v |= bit(bytes, 5 * c + k) << k;
        assert.equal(text[c], ALPHABET[v], `character ${c} of ${n} bytes`);
      }
      if (n > 0) assert.deepEqual(Buffer.from(base32DecodeExact(text, n) ?? []), bytes, `round trip of ${n} bytes`);
    }
  }
});
