// X25519 key-exchange keypairs as Rspamd prints and loads them: key ids
// (BLAKE2b-512 of the public key), the 5-byte short id sent in `Key:`, the keypair-file format
// of `rspamadm keypair` / `mailsift keypair`, and its loading rules.

import { randomBytes } from '@noble/ciphers/utils.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { base32DecodeExact, base32Encode } from '../core/base32.js';
import { KEY_BYTES } from './cryptobox.js';
import { x25519PublicKey } from './x25519.js';

/** Bytes of a full key id (BLAKE2b-512). */
export const KEY_ID_BYTES = 64;
/** Bytes of the short id in the `Key:` header: 5 bytes, 8 base32 characters. */
export const SHORT_ID_BYTES = 5;

export type KeyEncoding = 'base32' | 'hex';

export interface KexKeypair {
  /** 32-byte clamped X25519 secret. */
  secretKey: Uint8Array;
  publicKey: Uint8Array;
  /** BLAKE2b-512 of the public key. */
  id: Uint8Array;
}

/** The printed form: the fields of `rspamadm keypair -j` (inner object). */
export interface KeypairText {
  privkey: string;
  id: string;
  pubkey: string;
  type: 'kex';
  algorithm: 'curve25519';
  encoding: KeyEncoding;
}

export function keyId(publicKey: Uint8Array): Uint8Array {
  return blake2b(publicKey, { dkLen: KEY_ID_BYTES });
}

/** Rspamd stores secrets already clamped (and clamps again before use). */
function clamp(sk: Uint8Array): Uint8Array {
  sk[0]! &= 248;
  sk[31]! &= 127;
  sk[31]! |= 64;
  return sk;
}

export function keypairFromSecret(secretKey: Uint8Array, publicKey?: Uint8Array): KexKeypair {
  const pk = publicKey ?? x25519PublicKey(secretKey);
  return { secretKey, publicKey: pk, id: keyId(pk) };
}

export function generateKeypair(): KexKeypair {
  return keypairFromSecret(clamp(randomBytes(KEY_BYTES)));
}

export function encodeKey(bytes: Uint8Array, encoding: KeyEncoding = 'base32'): string {
  return encoding === 'hex' ? Buffer.from(bytes).toString('hex') : base32Encode(bytes);
}

function decodeKey(text: string, encoding: KeyEncoding, size: number): Uint8Array | undefined {
  if (encoding === 'base32') return base32DecodeExact(text, size);
  if (text.length !== size * 2 || !/^[0-9a-fA-F]*$/.test(text)) return undefined;
  return new Uint8Array(Buffer.from(text, 'hex'));
}

/** A bare public key as `rspamc --key` and the proxy's upstream `key` take it: base32 only. */
export function decodePublicKey(text: string): Uint8Array | undefined {
  return base32DecodeExact(text, KEY_BYTES);
}

export function formatKeypair(kp: KexKeypair, encoding: KeyEncoding = 'base32'): KeypairText {
  return {
    privkey: encodeKey(kp.secretKey, encoding),
    id: encodeKey(kp.id, encoding),
    pubkey: encodeKey(kp.publicKey, encoding),
    type: 'kex',
    algorithm: 'curve25519',
    encoding,
  };
}

export type KeypairParse = { ok: true; keypair: KexKeypair } | { ok: false; error: string };

/** Field names Rspamd's loader tries, first match wins. */
const PUBLIC_FIELDS = ['pubkey', 'public', 'public_key'] as const;
const SECRET_FIELDS = ['privkey', 'private', 'private_key', 'secret', 'secret_key'] as const;

function firstField(obj: Record<string, unknown>, names: readonly string[]): unknown {
  for (const n of names) if (obj[n] !== undefined) return obj[n];
  return undefined;
}

/**
 * Loads a keypair object the way Rspamd does: optionally wrapped in `keypair`, `type` kex,
 * `algorithm` curve25519 (NIST keypairs cannot do HTTPCrypt and are refused), `encoding`
 * `hex` or base32; the `id` field is ignored and recomputed from the public key. The secret
 * is not checked against the public key (neither does Rspamd).
 */
export function parseKeypair(value: unknown): KeypairParse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: 'a keypair object' };
  let obj = value as Record<string, unknown>;
  const wrapped = obj['keypair'];
  if (typeof wrapped === 'object' && wrapped !== null && !Array.isArray(wrapped)) obj = wrapped as Record<string, unknown>;
  const lower = (k: string): string | undefined => (typeof obj[k] === 'string' ? (obj[k] as string).toLowerCase() : undefined);
  const type = lower('type') ?? 'kex';
  if (type !== 'kex') return { ok: false, error: `a key-exchange keypair (type "kex"), not type "${type}"` };
  const algorithm = lower('algorithm') ?? 'curve25519';
  if (algorithm !== 'curve25519') return { ok: false, error: `algorithm "curve25519" (the only one HTTP encryption can use), not "${algorithm}"` };
  const encoding: KeyEncoding = lower('encoding') === 'hex' ? 'hex' : 'base32';
  const pub = firstField(obj, PUBLIC_FIELDS);
  const sec = firstField(obj, SECRET_FIELDS);
  if (typeof pub !== 'string') return { ok: false, error: 'a "pubkey" string' };
  if (typeof sec !== 'string') return { ok: false, error: 'a "privkey" string' };
  const what = encoding === 'hex' ? '64 hex digits' : '52 base32 characters';
  const publicKey = decodeKey(pub, encoding, KEY_BYTES);
  if (!publicKey) return { ok: false, error: `"pubkey" as ${what}` };
  const secretKey = decodeKey(sec, encoding, KEY_BYTES);
  if (!secretKey) return { ok: false, error: `"privkey" as ${what}` };
  return { ok: true, keypair: keypairFromSecret(secretKey, publicKey) };
}
