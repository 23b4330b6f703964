import { z } from 'zod';

export const RepliesConfig = z.strictObject({
  /** Prefix of the stored Message-ID hashes in the key-value store (Rspamd: `rr`). */
  key_prefix: z.string().default('rr'),
  /** Seconds an outbound Message-ID is remembered. */
  expire: z.number().positive().default(86400),
  /** Symbol inserted on a reply to our own mail. */
  symbol: z.string().default('REPLY'),
  /** Action forced on a reply (for example `no action`); none by default. */
  action: z.string().optional(),
  message: z.string().default('Message is a reply to one of our own'),
  /** Also remember mail sent from local addresses, not only from authenticated users. */
  store_local: z.boolean().default(false),
});
export type RepliesConfig = z.infer<typeof RepliesConfig>;
