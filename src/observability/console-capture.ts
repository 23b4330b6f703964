// Libraries that print with console.* (mailauth 4.13 logs `TOTAL <n> EXPECTING <l>` for every
// DKIM signature whose l= differs from the body) would write bare text into the server's stdout,
// which carries one structured log record per line. In a server process console.* therefore
// becomes a debug record of the logger: visible when asked for, never a line in the stream.

import { format } from 'node:util';
import type { Logger } from '../core/logger.js';

/**
 * Longest text kept from one console call. The text can carry message content (a library
 * printing a header it choked on), so a hostile message must not make one record huge.
 */
export const MAX_CONSOLE_TEXT = 2048;

/** The console methods that print; the rest (count, time, group, assert, table) print through these. */
const PRINTING = ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir', 'dirxml'] as const;

/** Routes every printing console method of this process to `log.debug`. */
export function routeConsoleToLog(log: Logger): void {
  for (const method of PRINTING) {
    console[method] = (...args: unknown[]): void => {
      const text = format(...args);
      log.debug(text.length > MAX_CONSOLE_TEXT ? `${text.slice(0, MAX_CONSOLE_TEXT)}…` : text, { console: method });
    };
  }
}
