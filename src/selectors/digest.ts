// Digests for the `digest` transform and the `attachments` extractor: a hash
// (keyed BLAKE2b-512 by default, keyed with BLAKE2b-512("rspamd") like Rspamd's MIME part
// digests) in one of Rspamd's encodings.

import { createHash } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';
import { base32Encode } from '../core/base32.js';

export const DIGEST_ENCODINGS = ['hex', 'base32', 'bleach32', 'rbase32', 'base64'] as const;
export const DIGEST_HASHES = ['blake2', 'sha256', 'sha1', 'sha512', 'md5'] as const;
export type DigestEncoding = (typeof DIGEST_ENCODINGS)[number];
export type DigestHash = (typeof DIGEST_HASHES)[number];

const RSPAMD_KEY = blake2b(new TextEncoder().encode('rspamd'), { dkLen: 64 });

export function rawDigest(data: Uint8Array, hash: DigestHash): Uint8Array {
  if (hash === 'blake2') return blake2b(data, { key: RSPAMD_KEY, dkLen: 64 });
  return createHash(hash).update(data).digest();
}

/** Most-significant-bit-first base32 over `alphabet`, no padding (RFC 4648 order). */
function base32Msb(bytes: Uint8Array, alphabet: string): string {
  let out = '';
  let acc = 0;
  let nbits = 0;
  for (const b of bytes) {
    acc = ((acc << 8) | b) & 0xffff;
    nbits += 8;
    while (nbits >= 5) {
      out += alphabet[(acc >>> (nbits - 5)) & 31];
      nbits -= 5;
    }
  }
  if (nbits > 0) out += alphabet[(acc << (5 - nbits)) & 31];
  return out;
}

const RFC_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const BLEACH_ALPHABET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

export function encodeDigest(bytes: Uint8Array, encoding: DigestEncoding): string {
  switch (encoding) {
    case 'hex':
      return Buffer.from(bytes).toString('hex');
    case 'base32':
      return base32Encode(bytes);
    case 'bleach32':
      return base32Msb(bytes, BLEACH_ALPHABET);
    case 'rbase32':
      return base32Msb(bytes, RFC_ALPHABET);
    case 'base64':
      return Buffer.from(bytes).toString('base64');
  }
}

export function digestOf(data: Uint8Array, encoding: DigestEncoding = 'hex', hash: DigestHash = 'blake2'): string {
  return encodeDigest(rawDigest(data, hash), encoding);
}
