import { z } from 'zod';
import { HEADER_REGEXP_RULES } from './rules.js';

const RULE_NAMES = Object.keys(HEADER_REGEXP_RULES) as [string, ...string[]];

/** header_regexps module options. */
export const HeaderRegexpsConfig = z.strictObject({
  /** Rules to leave out by symbol name (their scores can also be set to 0 in groups.yaml). */
  disabled_rules: z.array(z.enum(RULE_NAMES)).default([]),
});
export type HeaderRegexpsConfig = z.infer<typeof HeaderRegexpsConfig>;
