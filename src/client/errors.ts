// Typed client failures. Callers (mailsiftc, the proxy) match on `code`, never on instanceof,
// so a second copy of this module loaded by a plugin still compares equal.

export const CLIENT_ERROR_CODES = {
  /** The TCP connection could not be opened or broke before a reply arrived. */
  CONNECT: 'MAILSIFT_CLIENT_CONNECT',
  /** No complete reply within the request time-out. */
  TIMEOUT: 'MAILSIFT_CLIENT_TIMEOUT',
  /** The server answered with a non-2xx status (its `{"error": …}` text is in `serverError`). */
  HTTP_STATUS: 'MAILSIFT_CLIENT_HTTP_STATUS',
  /** The reply could not be decoded (bad zstd, JSON, msgpack, multipart or Message-Offset). */
  BAD_REPLY: 'MAILSIFT_CLIENT_BAD_REPLY',
  /** The request could not be built from the options given. */
  BAD_REQUEST: 'MAILSIFT_CLIENT_BAD_REQUEST',
} as const;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[keyof typeof CLIENT_ERROR_CODES];

export class ScanClientError extends Error {
  readonly code: ClientErrorCode;
  /** HTTP status, for HTTP_STATUS errors. */
  readonly status?: number;
  /** The server's own error text (`error` field of the body, or the reason phrase). */
  readonly serverError?: string;

  constructor(code: ClientErrorCode, message: string, extra: { status?: number; serverError?: string; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'ScanClientError';
    this.code = code;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.serverError !== undefined) this.serverError = extra.serverError;
  }
}

export function isScanClientError(e: unknown): e is ScanClientError {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' &&
    String((e as { code: string }).code).startsWith('MAILSIFT_CLIENT_');
}
