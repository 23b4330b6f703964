import { z } from 'zod';

/** phishing options. */
export const PhishingConfig = z.strictObject({
  /** Symbol inserted for a link whose shown URL names another domain. */
  symbol: z.string().default('PHISHING'),
  /** Registrable domains whose mismatches always weigh 1.0 (brands worth protecting). */
  strict_domains: z.array(z.string()).default([]),
  /** Registrable domains never reported, on either side (link trackers, own redirectors). */
  exceptions: z.array(z.string()).default([]),
  /**
   * Also count links whose text starts with a site name and goes on ("News.com: top stories"),
   * as Rspamd does. Off by default: on the development corpus these are newsletter headlines.
   */
  headline_links: z.boolean().default(false),
  /**
   * Also count links through a click-tracking endpoint (a path such as `/Click?q=…` or
   * `/clickthrough/…`) as Rspamd does. Off by default: on the development corpus 15 of the 19 ham
   * PHISHING hits were newsletter trackers, against none of the 3 spam hits.
   */
  tracker_links: z.boolean().default(false),
  /**
   * Ask PhishTank's DNS mirror about every URL (PHISHED_PHISHTANK). Rspamd 3.4's plugin code
   * defaults to off, but its shipped modules.d/phishing.conf turns it on; mailsift mirrors the
   * shipped configuration.
   */
  phishtank_enabled: z.boolean().default(true),
  /** Zone the hashed URL names are asked under (Rspamd's default). */
  phishtank_suffix: z.string().min(1).default('phishtank.rspamd.com'),
  /** Match every URL against the OpenPhish feed (PHISHED_OPENPHISH); off in Rspamd 3.4 too. */
  openphish_enabled: z.boolean().default(false),
  /**
   * The feed: a map source (file path, `file://`, `http(s)://`) or several, one URL a line.
   * Rspamd's default is OpenPhish's public feed.
   */
  openphish_map: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).default('https://www.openphish.com/feed.txt'),
  /** Rspamd's other name for the feed; wins over `openphish_map` when both are set, as in Rspamd. */
  openphish_url: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  /**
   * Rspamd reads the premium feed as one JSON object a line; mailsift reads only the plain
   * feed (one URL a line), so `true` is refused rather than silently matching nothing.
   */
  openphish_premium: z
    .boolean()
    .default(false)
    .refine((v) => !v, 'the premium (JSON) OpenPhish feed is not supported; use the plain feed'),
});
export type PhishingConfig = z.infer<typeof PhishingConfig>;
