// Relay failures as the coded errors of relay-types.ts, with the texts Rspamd's proxy uses
// (the HTTP front end sends the text as the reason phrase, as Rspamd's proxy does).

import { MailsiftError } from '../../http/errors.js';
import type { AttemptError } from '../upstreams/host-pool.js';
import type { RelayErrorCode } from '../relay-types.js';

export function relayError(code: RelayErrorCode, message: string, cause?: unknown): MailsiftError {
  return new MailsiftError(code, message, cause === undefined ? undefined : { cause });
}

export const noBackend = (): MailsiftError => relayError('ERR_RELAY_NO_BACKEND', 'Backend not found');

/** The error a client sees after the last attempt failed this way. */
export function fromAttempt(err: AttemptError): MailsiftError {
  switch (err.kind) {
    case 'timeout':
      return relayError('ERR_RELAY_TIMEOUT', 'Gateway timeout', err);
    case 'reset':
      return relayError('ERR_RELAY_RESET', 'Gateway connection reset', err);
    case 'refused':
      return relayError('ERR_RELAY_REFUSED', 'Gateway connection refused', err);
    case 'aborted':
      return relayError('ERR_RELAY_FAILED', 'Unknown gateway error: request abandoned', err);
    case 'failed':
      return relayError('ERR_RELAY_FAILED', `Unknown gateway error: ${err.message}`, err);
  }
}
