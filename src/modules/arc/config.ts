import { z } from 'zod';

/** arc module options. */
export const ArcConfig = z.strictObject({
  /** Smallest RSA key accepted in ARC-Seal / ARC-Message-Signature, in bits. */
  min_key_bits: z.int().min(512).max(8192).default(1024),
  /** Seal passing or unsigned mail with this identity (a forwarder's ARC set); off when absent. */
  seal: z
    .strictObject({
      domain: z.string().min(1),
      selector: z.string().min(1),
      /** PEM file of the private key (RSA), or the PEM itself in `key`. */
      path: z.string().min(1).optional(),
      key: z.string().min(1).optional(),
      /** authserv-id of the ARC-Authentication-Results; the server's host name by default. */
      authserv_id: z.string().min(1).optional(),
    })
    .refine((s) => s.path !== undefined || s.key !== undefined, { message: 'needs path or key' })
    .optional(),
});
export type ArcConfig = z.infer<typeof ArcConfig>;
