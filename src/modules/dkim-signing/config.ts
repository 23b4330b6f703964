import { z } from 'zod';

const DomainKey = z.strictObject({
  selector: z.string().min(1),
  /** PEM file of the private key (RSA or Ed25519). */
  path: z.string().min(1).optional(),
  /** The PEM itself, for keys kept in config. */
  key: z.string().min(1).optional(),
}).refine((d) => d.path !== undefined || d.key !== undefined, { message: 'needs path or key' });

/** dkim_signing module options (Rspamd's names). */
export const DkimSigningConfig = z.strictObject({
  /** Per-domain selector and key. */
  domain: z.record(z.string(), DomainKey).default({}),
  /** Fallback selector and key path template (`$domain`, `$selector`) for domains not listed. */
  selector: z.string().min(1).optional(),
  path: z.string().min(1).optional(),
  /** Files of `domain selector` and `domain path` lines (a map of keys). */
  selector_map: z.string().min(1).optional(),
  path_map: z.string().min(1).optional(),
  /** Which mail is signed: from authenticated users, from local addresses, everything else. */
  sign_authenticated: z.boolean().default(true),
  sign_local: z.boolean().default(true),
  sign_inbound: z.boolean().default(false),
  /** Domain to sign for: the From header's or the envelope sender's. */
  use_domain: z.enum(['header', 'envelope']).default('header'),
  /** Sign with the registrable domain (eSLD) rather than the full host name. */
  use_esld: z.boolean().default(true),
  /**
   * Also hand the signed message back (body block / v3 part), not only the `dkim-signature`
   * reply field. Off by default: Rspamd 3.4 returns only the field.
   */
  rewrite_message: z.boolean().default(false),
  canonicalization: z.enum(['relaxed/relaxed', 'relaxed/simple', 'simple/simple', 'simple/relaxed']).default('relaxed/relaxed'),
  /** Header fields to sign; mailauth's default set when empty. */
  sign_headers: z.array(z.string()).default([]),
});
export type DkimSigningConfig = z.infer<typeof DkimSigningConfig>;
