// Rspamd's cryptobox: the X25519 + HChaCha20 shared key and the
// XChaCha20 + Poly1305 construction used by HTTPCrypt (and by the fuzzy UDP protocol).
// It is neither libsodium's box nor the IETF AEAD: the plaintext starts at keystream block 1
// and the MAC covers the bare ciphertext, so the primitives are composed here by hand.

import { hchacha, xchacha20 } from '@noble/ciphers/chacha.js';
import { poly1305 } from '@noble/ciphers/_poly1305.js';
import { equalBytes, randomBytes } from '@noble/ciphers/utils.js';
import { x25519SharedSecret } from './x25519.js';

export const KEY_BYTES = 32;
export const NONCE_BYTES = 24;
export const MAC_BYTES = 16;
/** Smallest sealed box: nonce and MAC around an empty ciphertext. */
export const BOX_OVERHEAD = NONCE_BYTES + MAC_BYTES;

/** "expand 32-byte k" as little-endian words: the ChaCha constants HChaCha20 starts from. */
const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);
const ZERO16 = new Uint8Array(16);
const ZERO32 = new Uint8Array(32);

function wordsLE(bytes: Uint8Array): Uint32Array {
  const out = new Uint32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) {
    const o = i * 4;
    out[i] = (bytes[o]! | (bytes[o + 1]! << 8) | (bytes[o + 2]! << 16) | (bytes[o + 3]! << 24)) >>> 0;
  }
  return out;
}

/** HChaCha20(key, 16-byte input) → 32 bytes (libsodium `crypto_core_hchacha20`). */
export function hchacha20(key: Uint8Array, input: Uint8Array): Uint8Array {
  if (key.length !== KEY_BYTES || input.length !== 16) throw new RangeError('hchacha20 needs a 32-byte key and a 16-byte input');
  const out = new Uint32Array(8);
  hchacha(SIGMA, wordsLE(key), wordsLE(input), out);
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const w = out[i]!;
    bytes[i * 4] = w & 0xff;
    bytes[i * 4 + 1] = (w >>> 8) & 0xff;
    bytes[i * 4 + 2] = (w >>> 16) & 0xff;
    bytes[i * 4 + 3] = (w >>> 24) & 0xff;
  }
  return bytes;
}

/**
 * The shared key `nm` = HChaCha20(X25519(secret, peer), 0¹⁶); both sides derive the same one.
 * Undefined for a peer key of low order (the X25519 result would be all zeros).
 */
export function sharedKey(secretKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array | undefined {
  if (secretKey.length !== KEY_BYTES || peerPublicKey.length !== KEY_BYTES) return undefined;
  let s: Uint8Array;
  try {
    s = x25519SharedSecret(secretKey, peerPublicKey);
  } catch {
    return undefined; // OpenSSL refuses an all-zero result (a low-order peer key)
  }
  return hchacha20(s, ZERO16);
}

export function randomNonce(): Uint8Array {
  return randomBytes(NONCE_BYTES);
}

/** Poly1305 key for one message: the first half of keystream block 0. */
function polyKey(nm: Uint8Array, nonce: Uint8Array): Uint8Array {
  return xchacha20(nm, nonce, ZERO32, undefined, 0);
}

/** Encrypts `plaintext` with `nm` and `nonce`: the MAC and the ciphertext (same length as the plaintext). */
export function sealDetached(nm: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): { mac: Uint8Array; ciphertext: Uint8Array } {
  if (nm.length !== KEY_BYTES || nonce.length !== NONCE_BYTES) throw new RangeError('seal needs a 32-byte key and a 24-byte nonce');
  const ciphertext = xchacha20(nm, nonce, plaintext, undefined, 1);
  return { mac: poly1305(ciphertext, polyKey(nm, nonce)), ciphertext };
}

/** `nonce ‖ MAC ‖ ciphertext`, the body of an encrypted HTTP message. A fresh random nonce unless given. */
export function seal(nm: Uint8Array, plaintext: Uint8Array, nonce: Uint8Array = randomNonce()): Buffer {
  const { mac, ciphertext } = sealDetached(nm, nonce, plaintext);
  const out = Buffer.allocUnsafe(BOX_OVERHEAD + ciphertext.length);
  out.set(nonce, 0);
  out.set(mac, NONCE_BYTES);
  out.set(ciphertext, BOX_OVERHEAD);
  return out;
}

/** Checks the MAC of `nonce ‖ MAC ‖ ciphertext` in constant time (false for a box shorter than 40 bytes). */
export function verify(nm: Uint8Array, box: Uint8Array): boolean {
  if (box.length < BOX_OVERHEAD) return false;
  const nonce = box.subarray(0, NONCE_BYTES);
  const expected = poly1305(box.subarray(BOX_OVERHEAD), polyKey(nm, nonce));
  return equalBytes(expected, box.subarray(NONCE_BYTES, BOX_OVERHEAD));
}

/** Verifies, then decrypts; undefined when the box is short or the MAC does not match. */
export function open(nm: Uint8Array, box: Uint8Array): Buffer | undefined {
  if (!verify(nm, box)) return undefined;
  return decryptUnchecked(nm, box);
}

/** Decrypts a box whose MAC the caller has already verified. */
export function decryptUnchecked(nm: Uint8Array, box: Uint8Array): Buffer {
  const plain = xchacha20(nm, box.subarray(0, NONCE_BYTES), box.subarray(BOX_OVERHEAD), undefined, 1);
  return Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
}
