import { z } from 'zod';
import { DEFAULT_RULES } from './defaults.js';

/** Check types of Rspamd's rbl module; each names what is looked up in the list. */
export const CHECK_TYPES = ['from', 'received', 'helo', 'rdns', 'dkim', 'emails', 'replyto', 'urls', 'content_urls', 'selector'] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

/** Rspamd's `dns_max_requests`: names one rule collects from one message (URLs, e-mails). */
export const DEFAULT_REQUESTS_LIMIT = 64;
/** One deadline for every lookup of one message; a list slower than this counts as failed. */
export const DEFAULT_LOOKUP_TIMEOUT = 4;

const strList = z.union([z.string(), z.array(z.string())]);
const bitList = z.union([z.number().int().nonnegative(), z.string(), z.array(z.union([z.number().int().nonnegative(), z.string()]))]);

/** One DNS list. Unset booleans take the module's `default_<name>` unless `ignore_defaults`. */
export const RblRule = z.strictObject({
  /** The list's zone: `<reversed ip or name>.<rbl>` is queried for an A record. */
  rbl: z.string().min(1).optional(),
  /** Symbol of the rule (unknown answers, `<symbol>_FAIL`); the rule's key upper-cased by default. */
  symbol: z.string().min(1).optional(),
  enabled: z.boolean().optional(),
  disabled: z.boolean().optional(),
  /** What to look up; replaces the per-type booleans below. */
  checks: z.array(z.enum(CHECK_TYPES)).optional(),
  exclude_checks: z.array(z.enum(CHECK_TYPES)).optional(),
  from: z.boolean().optional(),
  received: z.boolean().optional(),
  helo: z.boolean().optional(),
  rdns: z.boolean().optional(),
  dkim: z.boolean().optional(),
  emails: z.boolean().optional(),
  replyto: z.boolean().optional(),
  urls: z.boolean().optional(),
  content_urls: z.boolean().optional(),
  /**
   * Values to look up taken by a selector: one selector (label `selector`), or
   * label → selector (the labels key `symbols_prefixes`). IP addresses are reversed, names queried
   * as they are (hashed when `hash` is set). Setting it adds the `selector` check.
   */
  selector: z.union([z.string().min(1), z.record(z.string(), z.string().min(1))]).optional(),
  /** Also look up the hosts of image URLs. */
  images: z.boolean().optional(),
  ipv4: z.boolean().optional(),
  ipv6: z.boolean().optional(),
  /** Insert the rule's symbol for answers no return code or bit matches. */
  unknown: z.boolean().optional(),
  exclude_private_ips: z.boolean().optional(),
  exclude_users: z.boolean().optional(),
  exclude_local: z.boolean().optional(),
  /** Skip numeric (IP address) URLs. */
  no_ip: z.boolean().optional(),
  dkim_domainonly: z.boolean().optional(),
  dkim_match_from: z.boolean().optional(),
  emails_domainonly: z.boolean().optional(),
  emails_delimiter: z.string().optional(),
  url_full_hostname: z.boolean().optional(),
  /** The list's answers mark elements that blacklist rules then leave alone. */
  is_whitelist: z.boolean().optional(),
  ignore_whitelist: z.boolean().optional(),
  ignore_whitelists: z.boolean().optional(),
  ignore_defaults: z.boolean().optional(),
  ignore_default: z.boolean().optional(),
  hash: z.enum(['md5', 'sha1', 'sha256', 'sha384', 'sha512', 'blake2', 'blake2b']).optional(),
  hash_format: z.enum(['hex', 'base32', 'base64']).optional(),
  hash_len: z.coerce.number().int().positive().optional(),
  /** Symbol → answer addresses (Lua patterns, as Rspamd: `127.0.%d+.1`). */
  returncodes: z.record(z.string(), strList).optional(),
  return_codes: z.record(z.string(), strList).optional(),
  /** `luapattern` (default, Rspamd 3.4) or `equality`. */
  returncodes_matcher: z.enum(['luapattern', 'equality']).optional(),
  /** Symbol → bits that must all be set in the answer address. */
  returnbits: z.record(z.string(), bitList).optional(),
  return_bits: z.record(z.string(), bitList).optional(),
  /** IPs/networks (from, received) or names never looked up: map sources, or entries inline. */
  whitelist: strList.optional(),
  /** Result symbols of a whitelist rule that do not whitelist. */
  whitelist_exception: strList.optional(),
  /** Check type → prefix: results are `<prefix>_<symbol>`. */
  symbols_prefixes: z.record(z.string(), z.string()).optional(),
  /** Received hops to check, 1 = top-most; negative counts from the bottom. */
  received_min_pos: z.number().int().optional(),
  received_max_pos: z.number().int().optional(),
  /** Hop flags (`ssl`, `authenticated`) required / forbidden. */
  received_flags: z.array(z.string()).optional(),
  received_nflags: z.array(z.string()).optional(),
  requests_limit: z.coerce.number().int().positive().optional(),
  /** Run only when all these symbols are present. */
  require_symbols: strList.optional(),
  /** Resolve names to addresses first and look the addresses up. */
  resolve_ip: z.boolean().optional(),
});
export type RblRule = z.infer<typeof RblRule>;

/** rbl module options: `default_*` flags, shared exclusions, and the lists (merged over the shipped ones). */
export const RblConfig = z
  .strictObject({
    default_enabled: z.boolean().default(true),
    default_ipv4: z.boolean().default(true),
    default_ipv6: z.boolean().default(true),
    default_unknown: z.boolean().default(true),
    default_dkim_domainonly: z.boolean().default(true),
    default_emails_domainonly: z.boolean().default(false),
    default_exclude_private_ips: z.boolean().default(true),
    default_exclude_users: z.boolean().default(true),
    default_exclude_local: z.boolean().default(true),
    default_no_ip: z.boolean().default(false),
    default_dkim_match_from: z.boolean().default(false),
    /** Names URL/e-mail/DKIM lists never look up: map sources or domains inline. */
    url_whitelist: z.array(z.string()).optional(),
    /** Client addresses treated as local (`exclude_local`): map sources or networks inline. */
    local_exclude_ip_map: strList.optional(),
    /** Seconds all lookups of one message may take together. */
    timeout: z.number().positive().max(60).default(DEFAULT_LOOKUP_TIMEOUT),
    /** Lists by name, merged key by key over the shipped ones; `enabled: false` switches one off. */
    rbls: z.record(z.string(), RblRule).default({}),
    /** Rspamd's older spelling of `rbls`; merged over it. */
    rules: z.record(z.string(), RblRule).optional(),
  })
  .superRefine((cfg, ctx) => {
    for (const src of ['rbls', 'rules'] as const) {
      for (const [key, rule] of Object.entries(cfg[src] ?? {})) {
        if (rule.rbl === undefined && !(key in DEFAULT_RULES) && rule.enabled !== false && rule.disabled !== true) {
          ctx.addIssue({ code: 'custom', path: [src, key, 'rbl'], message: 'the zone of a new list (for example "bl.example.net")' });
        }
      }
    }
  });
export type RblConfig = z.infer<typeof RblConfig>;
