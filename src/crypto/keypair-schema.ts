// `workers.<name>.keypair`: the worker's HTTP-encryption keypair, in the format `mailsift
// keypair` and `rspamadm keypair` print. The object is checked strictly
// (a misspelt field is an error) and decoded here, so a worker never starts with a key it
// cannot use.

import { z } from 'zod';
import { parseKeypair, type KexKeypair } from './keypair.js';

const KeyText = z.string().min(1);

export const KeypairConfig = z
  .strictObject({
    /** Public key (52 base32 characters, or 64 hex digits with `encoding: hex`); `public`, `public_key` are aliases. */
    pubkey: KeyText.optional(),
    public: KeyText.optional(),
    public_key: KeyText.optional(),
    /** Secret key, same encoding; `private`, `private_key`, `secret`, `secret_key` are aliases. */
    privkey: KeyText.optional(),
    private: KeyText.optional(),
    private_key: KeyText.optional(),
    secret: KeyText.optional(),
    secret_key: KeyText.optional(),
    /** Printed for reference only: the id is always recomputed from the public key. */
    id: z.string().optional(),
    /** Only `kex` (key exchange) keypairs can encrypt HTTP. */
    type: z.string().optional(),
    /** Only `curve25519`. */
    algorithm: z.string().optional(),
    /** `base32` (default) or `hex`. */
    encoding: z.string().optional(),
  })
  .transform((v, ctx) => {
    const r = parseKeypair(v);
    if (!r.ok) {
      ctx.issues.push({ code: 'custom', message: `a usable keypair: ${r.error}`, input: v });
      return z.NEVER;
    }
    return r.keypair;
  });

/** The two per-worker keys; spread into a worker's strictObject. */
export const WorkerCryptKeys = {
  /** Accept HTTP-encrypted requests with this keypair (`rspamc --key <pubkey>`). */
  keypair: KeypairConfig.optional(),
  /** Refuse plaintext requests from non-local peers (needs `keypair`). */
  encrypted_only: z.boolean().default(false),
};

/** What a worker's transport needs for HTTP encryption (LoadedConfig.workers.<name>.crypt). */
export interface WorkerCryptConfig {
  keypair: KexKeypair;
  encryptedOnly: boolean;
}

/** The worker's crypt settings, or an issue text when `encrypted_only` has no keypair to use. */
export function workerCrypt(w: { keypair?: KexKeypair | undefined; encrypted_only: boolean }): { crypt?: WorkerCryptConfig; problem?: string } {
  if (w.keypair) return { crypt: { keypair: w.keypair, encryptedOnly: w.encrypted_only } };
  if (w.encrypted_only) return { problem: 'a keypair next to encrypted_only: true (without one no request could be accepted)' };
  return {};
}
