import { z } from 'zod';

export const GreylistConfig = z.strictObject({
  /**
   * Greylisting defers first-time mail of every sender that scores in the greylist range, a
   * change of verdicts an operator must ask for: off until `active: true` (Rspamd turns it on
   * as soon as Redis is configured; here a key-value store always exists).
   */
  active: z.boolean().default(false),
  /** Seconds a new triplet must wait before a retry passes (Rspamd: 5 min). */
  timeout: z.number().positive().default(300),
  /** Seconds a triplet is remembered (Rspamd: 1 day). */
  expire: z.number().positive().default(86400),
  /** Body bytes hashed for the body key (Rspamd's max_data_len). */
  max_data_len: z.number().int().positive().default(10240),
  /** Prefix lengths the client address is masked to in the triplet. */
  ipv4_mask: z.number().int().min(0).max(32).default(19),
  ipv6_mask: z.number().int().min(0).max(128).default(64),
  /** Greylist only from this score on; the `greylist` action threshold when absent. */
  greylist_min_score: z.number().optional(),
  /** Action forced on a greylisted message, and its SMTP text. */
  action: z.string().default('soft reject'),
  message: z.string().default('Try again later'),
  /** Greylist authenticated senders / senders on local addresses too. */
  check_authed: z.boolean().default(false),
  check_local: z.boolean().default(false),
  /** Client networks and sender domains never greylisted. */
  whitelisted_ip: z.array(z.string()).default([]),
  whitelist_domains: z.array(z.string()).default([]),
  /** Prefix of the keys in the key-value store. */
  key_prefix: z.string().default('rg'),
});
export type GreylistConfig = z.infer<typeof GreylistConfig>;
