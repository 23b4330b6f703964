import { z } from 'zod';

/** mx_check options (Rspamd's mx_check plugin). */
export const MxCheckConfig = z.strictObject({
  /**
   * Off by default, as in Rspamd (where it runs only once configured): every new sender domain
   * costs DNS lookups and TCP connections to port 25 of hosts the sender names, within the scan.
   */
  enabled: z.boolean().default(false),
  /** Seconds to wait for a TCP connection to an MX. */
  timeout: z.number().positive().default(1),
  /** Port of the MX connection test (25; tests use another). */
  port: z.number().int().min(1).max(65535).default(25),
  /** MX hosts (most preferred first) tried per domain. */
  max_mx_a_records: z.number().int().min(1).max(20).default(5),
  /** Seconds a domain with a working MX is remembered. */
  expire: z.number().int().positive().default(86400),
  /** Seconds a domain without one is remembered. */
  expire_novalid: z.number().int().positive().default(7200),
  /** Prefix of the cache keys in the key-value store. */
  key_prefix: z.string().default('rmx'),
  /** Domains never checked (MX_WHITE): a list, or a map (file or URL) of domains. */
  exclude_domains: z.union([z.array(z.string()), z.string()]).optional(),
  /** Check authenticated senders and senders on local addresses too. */
  check_authed: z.boolean().default(false),
  check_local: z.boolean().default(false),
});
export type MxCheckConfig = z.infer<typeof MxCheckConfig>;
