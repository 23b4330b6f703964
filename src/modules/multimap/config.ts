import { z } from 'zod';

/** Rule types multimap can look up. */
export const RULE_TYPES = ['ip', 'received', 'header', 'rcpt', 'from', 'helo', 'hostname', 'url', 'user', 'filename', 'content', 'selector'] as const;
export type RuleType = (typeof RULE_TYPES)[number];

const MapSpec = z.union([z.string().min(1), z.array(z.string())]);

const Rule = z.strictObject({
  type: z.enum(RULE_TYPES),
  /** Map sources (file path, file://, http(s)://) or, as a list of entries, inline data. */
  map: MapSpec.optional(),
  /** Rspamd's alias of `map`. */
  url: MapSpec.optional(),
  /** Inline entries in map file syntax, added to the sources. */
  data: z.array(z.string()).optional(),
  /** Symbol inserted on a match; the rule name by default. */
  symbol: z.string().min(1).optional(),
  description: z.string().optional(),
  score: z.number().default(0),
  group: z.string().default('multimap'),
  /** Map kinds: hash by default, radix for ip/received, regexp or glob on request. */
  regexp: z.boolean().default(false),
  glob: z.boolean().default(false),
  /** Every matching regexp/glob entry counts, not only the first. */
  multi: z.boolean().default(false),
  /** Per-type value filter (`email:domain`, `email:user`, `tld`, `real_ip`, `extension`, `regexp:<re>`, …). */
  filter: z.string().optional(),
  /** header: the header name(s) to read. */
  header: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  /** from/rcpt: which addresses to read (`default`: SMTP, else MIME). */
  extract_from: z.enum(['smtp', 'mime', 'both', 'default']).default('default'),
  /** Other symbols a map value may name (`SYMBOL`, `SYMBOL:SCORE`, `SYMBOL:SCORE:opt1,opt2`). */
  symbols: z.array(z.string().min(1)).default([]),
  /** Ignore symbol names in values; the value becomes the option. */
  disable_multisymbol: z.boolean().default(false),
  /** Force this action (pre-result) on a match; the rule then runs as a prefilter. */
  action: z.string().min(1).optional(),
  /** SMTP message of the forced action (default "Matched map: <SYMBOL>"). */
  message: z.string().optional(),
  /** Run as a prefilter even without an action (historical Rspamd option). */
  prefilter: z.boolean().default(false),
  /** selector: the selector whose values are looked up; compiled at load. */
  selector: z.string().min(1).optional(),
  /** selector: joins the results of a selector list (`a;b`) into one key. */
  delimiter: z.string().default(''),
  /** received: only hops at these 1-based positions from the top. */
  min_pos: z.number().int().optional(),
  max_pos: z.number().int().optional(),
  /** Skip the rule for authenticated senders / senders on local addresses. */
  skip_authenticated: z.boolean().default(false),
  skip_local: z.boolean().default(false),
  /** Seconds between checks of http(s) sources. */
  poll_interval: z.number().positive().optional(),
});
export type MultimapRule = z.infer<typeof Rule>;

/** multimap options: rules keyed by name (the symbol by default). */
export const MultimapConfig = z.strictObject({
  rules: z.record(z.string(), Rule).default({}),
});
export type MultimapConfig = z.infer<typeof MultimapConfig>;
