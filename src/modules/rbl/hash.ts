// Hashed list keys (e-mail lists): the digest Rspamd names, in its text formats. Rspamd's
// `blake2` is BLAKE2b-512 and its base32 is z-base-32 read least significant bit first.
import { createHash } from 'node:crypto';
import { base32Encode } from '../../core/base32.js';

export type HashName = 'md5' | 'sha1' | 'sha256' | 'sha384' | 'sha512' | 'blake2';

const NODE_NAME: Record<HashName, string> = { md5: 'md5', sha1: 'sha1', sha256: 'sha256', sha384: 'sha384', sha512: 'sha512', blake2: 'blake2b512' };

/** The list key for `data`: its digest in `format`, cut to `len` characters when given. */
export function hashKey(data: string, hash: HashName, format: 'hex' | 'base32' | 'base64', len?: number): string {
  const digest = createHash(NODE_NAME[hash]).update(data, 'utf8').digest();
  const text = format === 'base32' ? base32Encode(digest) : format === 'base64' ? digest.toString('base64') : digest.toString('hex');
  return len !== undefined ? text.slice(0, len) : text;
}
