import { z } from 'zod';

/** url-checks options. */
export const UrlChecksConfig = z.strictObject({
  /** Host names mixing Latin with look-alike letters of another script (OMOGRAPH_URL). */
  omograph: z.boolean().default(true),
  /** Links to IPFS content through an HTTP gateway (HAS_IPFS_GATEWAY_URL). */
  ipfs: z.boolean().default(true),
  /** Links with an obscured host or zero-width characters (R_SUSPICIOUS_URL, ZERO_WIDTH_SPACE_URL). */
  suspicious: z.boolean().default(true),
});
export type UrlChecksConfig = z.infer<typeof UrlChecksConfig>;
