import { z } from 'zod';

/** html-checks options. */
export const HtmlChecksConfig = z.strictObject({
  /** Also look at the raw body for `data:` URIs (HAS_DATA_URI, DATA_URI_OBFU). */
  data_uri: z.boolean().default(true),
});
export type HtmlChecksConfig = z.infer<typeof HtmlChecksConfig>;
