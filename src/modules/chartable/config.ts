import { z } from 'zod';

/** chartable options (Rspamd's modules.d/chartable.conf). */
export const ChartableConfig = z.strictObject({
  /** Mean badness per word above which a part (or the subject, or the URLs) counts as mixed. */
  threshold: z.number().min(0).default(0.3),
  /** Words longer than this many characters are not judged: long words mix scripts legitimately (compounds, code). */
  max_word_len: z.number().int().min(1).max(1000).default(10),
});
export type ChartableConfig = z.infer<typeof ChartableConfig>;
