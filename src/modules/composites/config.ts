import { z } from 'zod';

/** composites module options: Rspamd's default composites, each switchable. */
export const CompositesConfig = z.object({
  /** Default composites to leave out, by name (e.g. to define your own under `composites` in mailsift.yaml). */
  disabled: z.array(z.string()).default([]),
});
export type CompositesConfig = z.infer<typeof CompositesConfig>;
