import { z } from 'zod';

/** maillist options (Rspamd's plugin has none beyond its symbol name). */
export const MaillistConfig = z.strictObject({});
export type MaillistConfig = z.infer<typeof MaillistConfig>;
