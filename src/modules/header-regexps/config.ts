import { z } from 'zod';

/** header_regexps module options. */
export const HeaderRegexpsConfig = z.object({
  /** Rules to leave out by symbol name (their scores can also be set to 0 in groups.yaml). */
  disabled_rules: z.array(z.string()).default([]),
});
export type HeaderRegexpsConfig = z.infer<typeof HeaderRegexpsConfig>;
