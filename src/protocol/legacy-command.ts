// The legacy text protocols (SpamAssassin's spamc dialect and Rspamd's RSPAMC dialect, as
// Rspamd 3.4 and spamd answer them): what the server does with each command, and how a
// failure is told to the client. Shared by the normal worker and the proxy's legacy front end.

import { classifyError, MailsiftError } from '../http/errors.js';
import { LEGACY_VERBS, type LegacyDialect } from '../http/request-head.js';

export type { LegacyDialect } from '../http/request-head.js';

export const LEGACY_COMMANDS = ['CHECK', 'SYMBOLS', 'REPORT', 'REPORT_IFSPAM', 'PROCESS', 'HEADERS', 'PING', 'SKIP', 'TELL'] as const;
export type LegacyCommand = (typeof LEGACY_COMMANDS)[number];

export function isLegacyCommand(verb: string): verb is LegacyCommand {
  return LEGACY_VERBS.has(verb);
}

/**
 * `spamd` (default): every spamc command answered as SpamAssassin's spamd does, and the spam
 * flag (`Spam: True`, `Metric: default; True`) set from the action, so `spamc -c` exits 1 on
 * spam. `rspamd`: Rspamd 3.4 exactly: only CHECK and SYMBOLS, the flag always False (3.4 reads
 * an `is_spam` key its results never have), every other command closed without a reply.
 */
export const LEGACY_COMPAT_MODES = ['spamd', 'rspamd'] as const;
export type LegacyCompat = (typeof LEGACY_COMPAT_MODES)[number];
export const DEFAULT_LEGACY_COMPAT: LegacyCompat = 'spamd';

export type LegacyPlan =
  /** Scan the message and answer with renderLegacyReply. */
  | { kind: 'scan' }
  /** Answer `PONG` without scanning. */
  | { kind: 'pong' }
  /** Close the connection without a reply (logged with `why`). */
  | { kind: 'close'; why: string }
  /** Answer with renderLegacyError(dialect, error) and close. */
  | { kind: 'refuse'; error: MailsiftError };

const SCAN: LegacyPlan = { kind: 'scan' };

/**
 * TELL trains the classifiers. Rspamd's scan worker cannot learn, and the scan port has no
 * password: anyone who may scan could poison Bayes. Learning goes through the controller
 * (`rspamc learn_spam`, `/learnspam` with the enable password), as spamd refuses TELL unless
 * started with --allow-tell.
 */
const TELL_REFUSED = 'TELL commands are not enabled: learn through the controller (rspamc learn_spam / learn_ham)';

export function planLegacyCommand(dialect: LegacyDialect, command: LegacyCommand, compat: LegacyCompat): LegacyPlan {
  if (compat === 'rspamd') {
    if (command === 'CHECK' || command === 'SYMBOLS') return SCAN;
    return { kind: 'close', why: `Rspamd 3.4 has no ${command} command (legacy_compat: rspamd)` };
  }
  switch (command) {
    case 'CHECK':
    case 'SYMBOLS':
    case 'REPORT':
    case 'REPORT_IFSPAM':
      return SCAN;
    case 'PROCESS':
    case 'HEADERS':
      // The RSPAMC dialect has no message-returning reply: its text ends at the connection's close.
      if (dialect === 'rspamc') return { kind: 'refuse', error: new MailsiftError('ERR_LEGACY_COMMAND', `${command} is a spamc command; RSPAMC has CHECK, SYMBOLS, REPORT and PING`) };
      return SCAN;
    case 'PING':
      return { kind: 'pong' };
    case 'SKIP':
      // spamd's contract: "sent when a connection is made in error", closed without a reply.
      return { kind: 'close', why: 'the client sent SKIP' };
    case 'TELL':
      return { kind: 'refuse', error: new MailsiftError('ERR_LEGACY_TELL', TELL_REFUSED) };
  }
}

/** sysexits.h codes spamd puts in its status line. */
export const EX = {
  OK: 0,
  DATAERR: 65,
  UNAVAILABLE: 69,
  SOFTWARE: 70,
  TEMPFAIL: 75,
  PROTOCOL: 76,
  NOPERM: 77,
  /** spamd's own addition to sysexits. */
  TIMEOUT: 79,
} as const;

/** Codes whose exit status is not the one their HTTP status class gives (see exitCodeOf). */
const EX_BY_CODE: Readonly<Record<string, number>> = {
  ERR_LEGACY_TELL: EX.UNAVAILABLE, // spamd without --allow-tell answers 69
  ERR_REQUEST_TIMEOUT: EX.TIMEOUT,
  ERR_BODY_TOO_LARGE: EX.DATAERR,
  ERR_SOURCE_TOO_LARGE: EX.DATAERR,
  ERR_SOURCE_FORBIDDEN: EX.NOPERM,
  // The proxy's upstream failures (src/proxy/relay-types.ts): the client may try again later.
  ERR_RELAY_NO_BACKEND: EX.UNAVAILABLE,
  ERR_RELAY_TIMEOUT: EX.TEMPFAIL,
  ERR_RELAY_RESET: EX.TEMPFAIL,
  ERR_RELAY_REFUSED: EX.TEMPFAIL,
  ERR_RELAY_FAILED: EX.TEMPFAIL,
  ERR_RELAY_UPSTREAM_ERROR: EX.TEMPFAIL,
};

/** The status a failed request reports: the client's fault is EX_PROTOCOL, the server's EX_SOFTWARE. */
export function exitCodeOf(err: unknown): number {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && EX_BY_CODE[code] !== undefined) return EX_BY_CODE[code]!;
  const { status, known } = classifyError(err);
  if (!known) return EX.SOFTWARE;
  if (status === 503) return EX.UNAVAILABLE;
  return status < 500 ? EX.PROTOCOL : EX.SOFTWARE;
}

/** Longest error text put on the status line; a coded message is short, this only bounds echoes. */
const MAX_ERROR_TEXT = 200;

/** Printable ASCII on one line: the status line is all a client shows. */
function statusText(s: string): string {
  let out = '';
  for (let i = 0; i < s.length && out.length < MAX_ERROR_TEXT; i++) {
    const c = s.charCodeAt(i);
    out += c < 0x20 || c > 0x7e ? ' ' : s[i];
  }
  return out;
}

/**
 * One status line and nothing else, then the server closes: `SPAMD/1.0 76 Malformed header line`
 * as spamd words its errors (spamc reads the line, finds no headers and fails with its own
 * exit code; the text is for the person reading the log or the capture).
 */
export function renderLegacyError(dialect: LegacyDialect, err: unknown): Buffer {
  const proto = dialect === 'spamc' ? 'SPAMD/1.0' : 'RSPAMD/1.3';
  return Buffer.from(`${proto} ${exitCodeOf(err)} ${statusText(classifyError(err).message)}\r\n`, 'latin1');
}

/** spamd's answer to PING (`spamc -K` prints `SPAMD/1.5 0`). */
export function renderLegacyPong(dialect: LegacyDialect): Buffer {
  return Buffer.from(dialect === 'spamc' ? 'SPAMD/1.5 0 PONG\r\n' : 'RSPAMD/1.3 0 PONG\r\n', 'latin1');
}
