import { z } from 'zod';

/** received module options (Rspamd's once_received settings). */
export const ReceivedConfig = z.strictObject({
  /** Substrings of the client host name that make a single-hop message ONCE_RECEIVED_STRICT. */
  bad_host: z.array(z.string()).default(['static', 'dynamic']),
  /** Substrings of the hop's host name that clear a single-hop message. */
  good_host: z.array(z.string()).default(['mail']),
  /** Also judge mail from local addresses and authenticated users. */
  check_local: z.boolean().default(false),
  check_authed: z.boolean().default(false),
});
export type ReceivedConfig = z.infer<typeof ReceivedConfig>;
