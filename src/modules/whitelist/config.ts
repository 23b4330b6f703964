import { z } from 'zod';

const Rule = z.strictObject({
  /**
   * Listed domains (registrable domains; subdomains match their parent): inline, or — as in
   * Rspamd — a map source (file path, `http(s)://…`), reloaded in the background when it changes.
   */
  domains: z.union([z.array(z.string().min(1)), z.string().min(1)]).default([]),
  /** Another map source of domains, one per line (`#` comments); merged with `domains`. */
  domains_file: z.string().min(1).optional(),
  /** Checks that must have authenticated the domain. */
  valid_spf: z.boolean().default(false),
  valid_dkim: z.boolean().default(false),
  valid_dmarc: z.boolean().default(false),
  /** Fire when a listed domain is NOT authenticated by the required checks. */
  blacklist: z.boolean().default(false),
});
export type WhitelistRule = z.infer<typeof Rule>;

const spf = { valid_spf: true };
const dkim = { valid_dkim: true };
const both = { valid_spf: true, valid_dkim: true };
const dmarc = { valid_dmarc: true };

/** whitelist module options: rules keyed by the symbol they insert (Rspamd's default rule set). */
export const WhitelistConfig = z.strictObject({
  rules: z.record(z.string(), Rule).default({
    WHITELIST_SPF: Rule.parse(spf),
    BLACKLIST_SPF: Rule.parse({ ...spf, blacklist: true }),
    WHITELIST_DKIM: Rule.parse(dkim),
    BLACKLIST_DKIM: Rule.parse({ ...dkim, blacklist: true }),
    WHITELIST_SPF_DKIM: Rule.parse(both),
    BLACKLIST_SPF_DKIM: Rule.parse({ ...both, blacklist: true }),
    WHITELIST_DMARC: Rule.parse(dmarc),
    BLACKLIST_DMARC: Rule.parse({ ...dmarc, blacklist: true }),
  }),
});
export type WhitelistConfig = z.infer<typeof WhitelistConfig>;
