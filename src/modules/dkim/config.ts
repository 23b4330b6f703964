import { z } from 'zod';
import { DEFAULT_MAX_DKIM_SIGNATURES } from '../../module-helpers/auth-message.js';

/** Keys shorter than this many bits do not verify (RFC 8301 §3.2 asks for 1024 at least). */
export const DKIM_MIN_KEY_BITS = 1024;

/** dkim module options. */
export const DkimConfig = z.strictObject({
  check_local: z.boolean().default(false),
  check_authed: z.boolean().default(false),
  /** Smallest RSA key accepted, in bits. */
  min_key_bits: z.int().min(512).max(8192).default(DKIM_MIN_KEY_BITS),
  /** Signatures verified per message (Rspamd's max_sigs); the rest are listed by DKIM_SIGS_SKIPPED. At most 50: each costs a header walk and a key lookup. */
  max_sigs: z.int().min(1).max(50).default(DEFAULT_MAX_DKIM_SIGNATURES),
});
export type DkimConfig = z.infer<typeof DkimConfig>;
