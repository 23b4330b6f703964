// Controller passwords: a configured `password`/`enable_password` is
// plain text or a hash. Hashes we verify: Rspamd's `$1$salt$key` (PBKDF2-BLAKE2b, 16000
// rounds) and `$2$salt$key` (Catena-Butterfly, `rspamadm pw`'s default), both with Rspamd
// base32, a 20-byte salt and a 32-byte key; and mailsift's own
// `$scrypt$ln=15,r=8,p=1$<salt>$<key>` (PHC string, unpadded base64), the default of
// `mailsift pw`. Every comparison is constant-time; a malformed hash never matches.

import { createHmac, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { base32DecodeExact, base32Encode } from '../core/base32.js';
import { catena, RSPAMD_CATENA } from './password-catena.js';
import { pbkdf2Blake2b } from './password-pbkdf2.js';

export type PasswordHashType = 'scrypt' | 'catena' | 'pbkdf2';
export type StoredPasswordKind = PasswordHashType | 'plain';

/** Rspamd's hashes: salt and key sizes (`rspamd_cryptobox_pbkdf` table in Rspamd 3.4). */
const RSPAMD_SALT_BYTES = 20;
const RSPAMD_KEY_BYTES = 32;
/** Rspamd's `$1$` round count. */
const PBKDF2_ROUNDS = 16_000;
/** Rspamd's `$2$` complexity: garlic 10 (2^10 vertices per row). */
const CATENA_GARLIC = 10;

/** scrypt cost of new hashes: 2^15 × 128 × r = 32 MiB and ~0.1 s per verification. */
const SCRYPT_DEFAULT = { ln: 15, r: 8, p: 1 } as const;
const SCRYPT_SALT_BYTES = 16;
const SCRYPT_KEY_BYTES = 32;
/** Largest scrypt parameters a stored hash may ask for: caps the memory (1 GiB) and time one check costs. */
const SCRYPT_MAX = { ln: 20, r: 32, p: 16, memBytes: 1024 * 1024 * 1024 } as const;

/**
 * Verified passwords are remembered per stored hash (as Rspamd does) so the web UI's
 * request-per-poll does not pay the KDF each time. Only a keyed digest of the given
 * password is kept; the key lives in this process only. The bound keeps memory fixed when
 * many distinct hashes are checked (a config has a handful).
 */
const VERIFIED_CACHE_MAX = 64;
const CACHE_KEY = randomBytes(32);
const verified = new Map<string, Buffer>();

function digest(text: string): Buffer {
  return createHmac('sha256', CACHE_KEY).update(text, 'utf8').digest();
}

/** How a configured password string is read: Rspamd's rule is `$<digits of a known id>$…`. */
export function storedPasswordKind(stored: string): StoredPasswordKind {
  if (stored.startsWith('$1$')) return 'pbkdf2';
  if (stored.startsWith('$2$')) return 'catena';
  if (stored.startsWith('$scrypt$')) return 'scrypt';
  return 'plain';
}

export function isHashedPassword(stored: string): boolean {
  return storedPasswordKind(stored) !== 'plain';
}

/**
 * Does `given` match the configured `stored` password (plain or hashed)? Plain text is
 * compared through keyed digests so neither content nor length leaks through timing.
 */
export function verifyPassword(stored: string, given: string): boolean {
  const kind = storedPasswordKind(stored);
  const givenDigest = digest(given);
  if (kind === 'plain') return timingSafeEqual(digest(stored), givenDigest);
  const known = verified.get(stored);
  if (known && timingSafeEqual(known, givenDigest)) return true;
  const derived = deriveFor(stored, kind, given);
  if (!derived || !timingSafeEqual(derived.computed, derived.expected)) return false;
  if (verified.size >= VERIFIED_CACHE_MAX) verified.delete(verified.keys().next().value!);
  verified.set(stored, givenDigest);
  return true;
}

/** Recomputes the key for `given` with the stored parameters; undefined when `stored` is malformed. */
function deriveFor(stored: string, kind: PasswordHashType, given: string): { computed: Buffer; expected: Buffer } | undefined {
  const pwd = Buffer.from(given, 'utf8');
  if (kind === 'scrypt') {
    const parsed = parseScrypt(stored);
    if (!parsed) return undefined;
    const { ln, r, p, salt, key } = parsed;
    const computed = scryptSync(pwd, salt, key.length, { N: 2 ** ln, r, p, maxmem: SCRYPT_MAX.memBytes });
    return { computed, expected: key };
  }
  const parts = stored.split('$');
  if (parts.length !== 4) return undefined;
  const salt = base32DecodeExact(parts[2]!, RSPAMD_SALT_BYTES);
  const key = base32DecodeExact(parts[3]!, RSPAMD_KEY_BYTES);
  if (!salt || !key) return undefined;
  return { computed: rspamdKey(kind, pwd, salt), expected: Buffer.from(key) };
}

function rspamdKey(kind: 'catena' | 'pbkdf2', pwd: Uint8Array, salt: Uint8Array): Buffer {
  return kind === 'catena'
    ? Buffer.from(catena(pwd, salt, { ...RSPAMD_CATENA, minGarlic: CATENA_GARLIC, garlic: CATENA_GARLIC, hashLen: RSPAMD_KEY_BYTES }))
    : pbkdf2Blake2b(pwd, salt, PBKDF2_ROUNDS, RSPAMD_KEY_BYTES);
}

interface ScryptHash {
  ln: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

const SCRYPT_RE = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]{8,})\$([A-Za-z0-9+/]{22,})$/;

function parseScrypt(stored: string): ScryptHash | undefined {
  const m = SCRYPT_RE.exec(stored);
  if (!m) return undefined;
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (ln < 1 || ln > SCRYPT_MAX.ln || r < 1 || r > SCRYPT_MAX.r || p < 1 || p > SCRYPT_MAX.p) return undefined;
  // scrypt's working set is 128·r·N bytes (plus 128·r·p): refuse what would exceed the cap.
  if (128 * r * (2 ** ln + p) > SCRYPT_MAX.memBytes) return undefined;
  return { ln, r, p, salt: Buffer.from(m[4]!, 'base64'), key: Buffer.from(m[5]!, 'base64') };
}

function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replace(/=+$/, '');
}

/**
 * Hashes `plain` for the controller's `password`/`enable_password`. `scrypt` is mailsift's
 * own format; `catena` and `pbkdf2` produce Rspamd's `$2$`/`$1$` strings, which Rspamd
 * accepts too (useful for a configuration shared with Rspamd).
 */
export function hashPassword(plain: string, type: PasswordHashType = 'scrypt'): string {
  const pwd = Buffer.from(plain, 'utf8');
  if (type === 'scrypt') {
    const { ln, r, p } = SCRYPT_DEFAULT;
    const salt = randomBytes(SCRYPT_SALT_BYTES);
    const key = scryptSync(pwd, salt, SCRYPT_KEY_BYTES, { N: 2 ** ln, r, p, maxmem: SCRYPT_MAX.memBytes });
    return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
  }
  const salt = randomBytes(RSPAMD_SALT_BYTES);
  const id = type === 'catena' ? 2 : 1;
  return `$${id}$${base32Encode(salt)}$${base32Encode(rspamdKey(type, pwd, salt))}`;
}
