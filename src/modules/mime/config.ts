import { z } from 'zod';

const Weights = z.record(z.string(), z.number().nonnegative());

/** mime module options; the tables extend (not replace) the built-in ones in extensions.ts. */
export const MimeConfig = z.strictObject({
  /** Extra bad attachment extensions → weight multiplier of MIME_BAD_EXTENSION. */
  bad_extensions: Weights.default({}),
  /** Extra archive extensions (for `.zip.gz`-style cloaking). */
  archive_extensions: Weights.default({}),
  /** Extra content types → Rspamd map value (negative: good, positive: bad, 0: neutral). */
  content_types: z.record(z.string(), z.number()).default({}),
});
export type MimeConfig = z.infer<typeof MimeConfig>;
