import { z } from 'zod';

/** gtube module options. */
export const GtubeConfig = z.strictObject({
  /** `reject`: only the X pattern acts; `all`: also Y (add header), Z (rewrite subject), A (no action); `disabled`: off. */
  gtube_patterns: z.enum(['reject', 'all', 'disabled']).default('reject'),
});
export type GtubeConfig = z.infer<typeof GtubeConfig>;
