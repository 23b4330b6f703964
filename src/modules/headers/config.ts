import { z } from 'zod';

/** headers module options (Rspamd hard-codes these; they are exposed for tests and tuning). */
export const HeadersConfig = z.strictObject({
  /** A Date older than this many seconds before the scan gives DATE_IN_PAST. */
  date_past_seconds: z.number().int().nonnegative().default(86400),
  /** A Date more than this many seconds ahead of the scan gives DATE_IN_FUTURE. */
  date_future_seconds: z.number().int().nonnegative().default(7200),
});
export type HeadersConfig = z.infer<typeof HeadersConfig>;
