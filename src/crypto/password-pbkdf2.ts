// PBKDF2 with keyed BLAKE2b-512 as the PRF, the `$1$` controller hash of Rspamd
// (`rspamadm pw -t pbkdf2`). Not HMAC: the password is the BLAKE2b key and each block
// starts from salt ‖ big-endian block counter, as in RFC 8018 otherwise. A password longer
// than BLAKE2b's 64-byte key limit is first reduced to its unkeyed BLAKE2b-512 digest,
// Rspamd's own (non-standard) rule, kept so such passwords still verify.

import { createHash } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';

/** BLAKE2b's largest key and output size. */
const BLAKE2B_MAX = 64;
/** Most rounds accepted: bounds the CPU a hash string can make a verification cost. */
export const PBKDF2_MAX_ROUNDS = 1_000_000;

export function pbkdf2Blake2b(password: Uint8Array, salt: Uint8Array, rounds: number, keyLen: number): Buffer {
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > PBKDF2_MAX_ROUNDS) throw new RangeError('pbkdf2: bad round count');
  const key = password.length <= BLAKE2B_MAX ? password : createHash('blake2b512').update(password).digest();
  // An empty key is plain (unkeyed) BLAKE2b, as libsodium treats a zero-length key.
  const prf = (msg: Uint8Array): Uint8Array => (key.length ? blake2b(msg, { key, dkLen: BLAKE2B_MAX }) : blake2b(msg, { dkLen: BLAKE2B_MAX }));
  const out = Buffer.alloc(keyLen);
  const block = Buffer.alloc(salt.length + 4);
  block.set(salt);
  for (let counter = 1, filled = 0; filled < keyLen; counter++) {
    block.writeUInt32BE(counter, salt.length);
    let d = prf(block);
    const acc = Buffer.from(d);
    for (let i = 1; i < rounds; i++) {
      d = prf(d);
      for (let k = 0; k < BLAKE2B_MAX; k++) acc[k] = acc[k]! ^ d[k]!;
    }
    filled += acc.copy(out, filled, 0, Math.min(BLAKE2B_MAX, keyLen - filled));
  }
  return out;
}
