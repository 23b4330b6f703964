import { z } from 'zod';

/** reputation options (after Rspamd's reputation plugin, kept in the key-value store). */
export const ReputationConfig = z.strictObject({
  /** Learns from this server's own verdicts: off until an operator turns it on (see conf/groups.yaml). */
  enabled: z.boolean().default(false),
  /** Verdicts a token needs in the current and previous window before it is scored (Rspamd: 10). */
  lower_bound: z.number().int().min(1).default(10),
  /** |spam − ham| / all under which a token is scored as neither. */
  min_ratio: z.number().min(0).max(1).default(0.3),
  /** Days per counting window; counts older than two windows are forgotten. */
  window_days: z.number().positive().default(15),
  /**
   * A verdict counts as spam from this score, as ham below `ham_score`, without the reputation
   * symbols' own share (so a reputation does not feed itself). Defaults: add header, greylist.
   */
  spam_score: z.number().default(6),
  ham_score: z.number().default(4),
  /** Registrable URL domains scored and counted per message, the most frequent first (Rspamd: 10). */
  max_urls: z.number().int().min(0).max(100).default(10),
  /** Prefix lengths client addresses are counted under. */
  ipv4_mask: z.number().int().min(8).max(32).default(32),
  ipv6_mask: z.number().int().min(16).max(128).default(64),
  /** Prefix of the keys in the key-value store. */
  key_prefix: z.string().default('RR:'),
  /** Also learn from authenticated senders and local clients (outbound mail). */
  check_authed: z.boolean().default(false),
  check_local: z.boolean().default(false),
});
export type ReputationConfig = z.infer<typeof ReputationConfig>;
