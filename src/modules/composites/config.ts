import { z } from 'zod';
import { DEFAULT_COMPOSITES } from './defaults.js';

const DEFAULT_NAMES = Object.keys(DEFAULT_COMPOSITES) as [string, ...string[]];

/** composites module options: Rspamd's default composites, each switchable. */
export const CompositesConfig = z.strictObject({
  /** Default composites to leave out, by name (e.g. to define your own under `composites` in mailsift.yaml). */
  disabled: z.array(z.enum(DEFAULT_NAMES)).default([]),
});
export type CompositesConfig = z.infer<typeof CompositesConfig>;
