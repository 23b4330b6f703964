import { z } from 'zod';

/** content_heuristics options. */
export const ContentHeuristicsConfig = z.strictObject({
  /** Extra free-mail domains added to the built-in list for REPLYTO_AT_FREEMAIL, matched exactly (a subdomain is another host). */
  freemail_domains: z.array(z.string()).default([]),
  /** Hours the Date header may run ahead of the newest Received timestamp (clock skew, time zones mislabelled). */
  date_ahead_hours: z.number().nonnegative().default(3),
});
export type ContentHeuristicsConfig = z.infer<typeof ContentHeuristicsConfig>;
