// The `fuzzy_check` configuration: module options and one entry per rule, with
// Rspamd's defaults. Lives below modules/ because the controller's /fuzzyadd reads the same rules.
import { z } from 'zod';
import { ServerList } from '../../core/value-schemas.js';

const FlagMapping = z.strictObject({
  /** List number on the storage. */
  flag: z.number().int().min(0).max(255),
  /** Hit count at which the weight saturates (Rspamd 3.4 name: max_score); default the rule's. */
  hits_limit: z.number().nonnegative().optional(),
  max_score: z.number().nonnegative().optional(),
});

export const FuzzyRuleConfig = z.strictObject({
  /** Storages to check and learn: `host[:port]` (default port 11335). */
  servers: ServerList.optional(),
  read_servers: ServerList.optional(),
  write_servers: ServerList.optional(),
  /** Default symbol for flags without a mapping. */
  symbol: z.string().optional(),
  fuzzy_map: z.record(z.string(), FlagMapping).default({}),
  /** Normalisation constant for hit counts (3.4 name: max_score). */
  hits_limit: z.number().nonnegative().optional(),
  max_score: z.number().nonnegative().optional(),
  /** Shingle hash: `old`/`siphash` (Rspamd's default), `mumhash`, `xxhash`. */
  algorithm: z.enum(['old', 'siphash', 'mumhash', 'xxhash']).default('old'),
  fuzzy_key: z.string().default('rspamd'),
  fuzzy_shingles_key: z.string().default('rspamd'),
  /** Server public key (Rspamd base32): use the encrypted protocol. */
  encryption_key: z.string().optional(),
  read_only: z.boolean().default(false),
  skip_unknown: z.boolean().default(false),
  no_subject: z.boolean().default(false),
  weight_threshold: z.number().optional(),
  skip_hashes: z.array(z.string()).default([]),
  mime_types: z.array(z.string()).default(['application/*']),
  /** Part size floor in bytes (text: (text + subject) × text_multiplier). */
  min_bytes: z.number().int().nonnegative().default(1024),
  min_length: z.number().int().nonnegative().default(64),
  text_multiplier: z.number().nonnegative().default(4),
  min_width: z.number().int().nonnegative().default(500),
  min_height: z.number().int().nonnegative().default(500),
  scan_archives: z.boolean().default(true),
  short_text_direct_hash: z.boolean().default(true),
  text_shingles: z.boolean().default(true),
  skip_images: z.boolean().default(false),
  /** Seconds per attempt and extra attempts; default the module's. */
  timeout: z.number().positive().optional(),
  retransmits: z.number().int().nonnegative().optional(),
});
export type FuzzyRuleConfig = z.infer<typeof FuzzyRuleConfig>;

export const FuzzyCheckConfig = z.strictObject({
  /**
   * Accepted for Rspamd configs; as in Rspamd 3.4 it does not lower the rules' own `min_bytes`
   * (the per-rule hashing policy keeps its 1k default), so it has no effect here.
   */
  min_bytes: z.number().int().nonnegative().default(1024),
  /** Seconds per attempt. */
  timeout: z.number().positive().default(2),
  retransmits: z.number().int().nonnegative().default(1),
  /** Default symbol of rules without one. */
  symbol: z.string().default('R_FUZZY_HASH'),
  /** Client addresses (or CIDR ranges) whose messages are not checked. */
  whitelist: z.array(z.string()).default([]),
  rules: z.record(z.string(), FuzzyRuleConfig).default({}),
});
export type FuzzyCheckConfig = z.infer<typeof FuzzyCheckConfig>;
