// Schemas for the value types several config sections share (sizes, durations, listen
// addresses), built from the parsers in config-values.ts. They sit on the ground floor so each
// layer can own the schema of its own config section (stores, the proxy, the fuzzy worker).

import { z } from 'zod';
import { parseBind, parseDuration, parseSize } from './config-values.js';

/** Builds a schema from a parser: the issue message carries the `expected` text verbatim. */
export function parsed<T>(parse: (v: unknown) => T | undefined, expected: string) {
  return z.unknown().transform((v, ctx): T => {
    const out = parse(v);
    if (out === undefined) {
      ctx.issues.push({ code: 'custom', message: expected, input: v });
      return z.NEVER;
    }
    return out;
  });
}

export const Size = parsed(parseSize, 'a non-negative size in bytes or a string like "50M"');
export const Duration = parsed(parseDuration, 'a non-negative number of seconds or a string like "8s"');
export const Bind = parsed(parseBind, 'an address "host:port" (e.g. "127.0.0.1:11333", "[::1]:11333", "*:11333")');

/**
 * Servers as Rspamd's upstream lists write them: a list, or one string separated by commas,
 * semicolons or spaces, with an optional `round-robin:`/`master-slave:`/`random:` prefix dropped.
 */
export const ServerList = z.union([z.string(), z.array(z.string())]).transform((v) =>
  (Array.isArray(v) ? v : v.split(/[,;\s]+/)).map((s) => s.trim().replace(/^(round-robin|master-slave|random):/, '')).filter(Boolean),
);
