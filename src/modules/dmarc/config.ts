import { z } from 'zod';

/** dmarc module options. */
export const DmarcConfig = z.strictObject({
  check_local: z.boolean().default(false),
  check_authed: z.boolean().default(false),
});
export type DmarcConfig = z.infer<typeof DmarcConfig>;
