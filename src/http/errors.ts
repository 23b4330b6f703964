// Coded errors of the transport and protocol layers, and the one table that turns a code
// into an HTTP status and an error domain. Code strings are stable: clients and logs match
// on them, so a code never changes meaning (retire it instead).

export type ErrorDomain = 'protocol-error' | 'task-error' | 'transport-error';

/** Base of every coded error thrown below the workers. Carries no status: the table decides. */
export class MailsiftError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'MailsiftError';
  }
}

interface ErrorEntry {
  status: number;
  domain: ErrorDomain;
}

/** code → status/domain. Anything not listed is a bug: 500, and the caller logs it. */
export const ERROR_TABLE: Readonly<Record<string, ErrorEntry>> = {
  // Transport: framing, limits, time-outs.
  ERR_BAD_REQUEST: { status: 400, domain: 'transport-error' },
  ERR_BAD_REQUEST_LINE: { status: 400, domain: 'transport-error' },
  ERR_BAD_HEADER: { status: 400, domain: 'transport-error' },
  ERR_BAD_CHUNK: { status: 400, domain: 'transport-error' },
  ERR_TRUNCATED_BODY: { status: 400, domain: 'transport-error' },
  ERR_HEADERS_TOO_LARGE: { status: 431, domain: 'transport-error' },
  ERR_BODY_TOO_LARGE: { status: 413, domain: 'transport-error' },
  ERR_REQUEST_TIMEOUT: { status: 408, domain: 'transport-error' },
  ERR_UNSUPPORTED_VERSION: { status: 505, domain: 'transport-error' },
  ERR_LEGACY_COMMAND: { status: 400, domain: 'transport-error' },
  // spamc's TELL (learning) on the scan port: refused, learning needs the controller's password.
  ERR_LEGACY_TELL: { status: 403, domain: 'protocol-error' },
  // Routing.
  ERR_UNKNOWN_COMMAND: { status: 404, domain: 'protocol-error' },
  // Compression.
  ERR_COMPRESSION_METHOD: { status: 400, domain: 'task-error' },
  ERR_DECOMPRESSION: { status: 400, domain: 'task-error' },
  ERR_DICTIONARY_NON_NUMERIC: { status: 400, domain: 'task-error' },
  ERR_DICTIONARY_UNDEFINED: { status: 400, domain: 'task-error' },
  ERR_DICTIONARY_MISMATCH: { status: 400, domain: 'task-error' },
  // /checkv3.
  ERR_V3_NO_CONTENT_TYPE: { status: 400, domain: 'protocol-error' },
  ERR_V3_NO_BOUNDARY: { status: 400, domain: 'protocol-error' },
  ERR_V3_BAD_MULTIPART: { status: 400, domain: 'protocol-error' },
  ERR_V3_TOO_MANY_PARTS: { status: 400, domain: 'protocol-error' },
  ERR_V3_BAD_METADATA: { status: 400, domain: 'protocol-error' },
  ERR_V3_NO_MESSAGE: { status: 400, domain: 'protocol-error' },
  ERR_V3_DECOMPRESSION: { status: 400, domain: 'protocol-error' },
  // Message sources named by headers (src/protocol/message-source.ts: Shm, File, Path). A source
  // that cannot be read keeps Rspamd's 503 (its message-loading status); the client's own
  // mistakes are 4xx.
  ERR_SOURCE_FORBIDDEN: { status: 403, domain: 'protocol-error' },
  ERR_SOURCE_INVALID: { status: 400, domain: 'protocol-error' },
  ERR_SOURCE_UNREADABLE: { status: 503, domain: 'task-error' },
  ERR_SOURCE_TOO_LARGE: { status: 413, domain: 'task-error' },
  // Scanning.
  ERR_SCAN_FAILED: { status: 500, domain: 'task-error' },
  // TLS listener set-up (src/http/tls.ts): unreadable or unusable certificate files. They
  // stop a worker from starting or a reload from applying; no request ever carries them.
  ERR_TLS_FILES: { status: 500, domain: 'transport-error' },
  ERR_TLS_CONFIG: { status: 500, domain: 'transport-error' },
  // Controller endpoint families (src/workers/controller/json.ts ControllerError): the error
  // carries the status Rspamd uses for that endpoint, and the controller's dispatcher renders it
  // as ERR(status, text). This entry is the fallback if one ever escapes to another layer.
  ERR_CONTROLLER: { status: 500, domain: 'protocol-error' },
  // Learning (src/rule-libs/bayes LearnError, rendered by the controller's /learnspam and /learnham with
  // Rspamd 3.4's statuses: 208 carries the error body; a 204 has none, its text is the reason
  // phrase, src/http/reply.ts statusForbidsBody).
  LEARN_ALREADY_LEARNED: { status: 208, domain: 'task-error' },
  LEARN_TOO_FEW_TOKENS: { status: 204, domain: 'task-error' },
  LEARN_TOO_MANY_TOKENS: { status: 204, domain: 'task-error' },
  LEARN_CONDITIONS_DENIED: { status: 204, domain: 'task-error' },
  LEARN_STORE_UNAVAILABLE: { status: 503, domain: 'task-error' },
  LEARN_STORE_FAILED: { status: 500, domain: 'task-error' },
  // Stores (src/storage StoreError): down or not answering in time is temporary (503, retry
  // later); a store that answered with an error is the server's fault (500). The controller's
  // endpoints name the store in the text (src/workers/controller/store-outage.ts).
  STORE_UNAVAILABLE: { status: 503, domain: 'task-error' },
  STORE_FAILED: { status: 500, domain: 'task-error' },
  // An endpoint's task.learn (src/plugin-api/endpoints.ts): no learner is registered (the Bayes
  // module is off), or none has a classifier of the requested name.
  LEARN_NO_CLASSIFIER: { status: 404, domain: 'task-error' },
  LEARN_CLASSIFIER_UNKNOWN: { status: 404, domain: 'task-error' },
  // The proxy (src/proxy/): an upstream group that could not answer. The
  // message is the reason phrase Rspamd's proxy sends; the connection is closed after each.
  ERR_RELAY_NO_BACKEND: { status: 404, domain: 'transport-error' },
  ERR_RELAY_TIMEOUT: { status: 504, domain: 'transport-error' },
  ERR_RELAY_RESET: { status: 502, domain: 'transport-error' },
  ERR_RELAY_REFUSED: { status: 502, domain: 'transport-error' },
  ERR_RELAY_FAILED: { status: 502, domain: 'transport-error' },
  // The scanner's own error status, told to a legacy client (HTTP clients get the reply as is).
  ERR_RELAY_REQUEST_REFUSED: { status: 400, domain: 'protocol-error' },
  ERR_RELAY_UPSTREAM_ERROR: { status: 502, domain: 'transport-error' },
  // A client naming a local file (`File`, `Path`) to the proxy, which reads none for its clients.
  ERR_PROXY_SOURCE_FORBIDDEN: { status: 400, domain: 'protocol-error' },
  // HTTP encryption (src/http/crypt/): the connection is closed after each of these.
  ERR_CRYPT_REQUIRED: { status: 400, domain: 'transport-error' },
  ERR_CRYPT_BAD_KEY_HEADER: { status: 400, domain: 'transport-error' },
  ERR_CRYPT_UNKNOWN_KEY: { status: 400, domain: 'transport-error' },
  ERR_CRYPT_SHORT_BODY: { status: 400, domain: 'transport-error' },
  ERR_CRYPT_BAD_MAC: { status: 400, domain: 'transport-error' },
  ERR_CRYPT_BAD_INNER: { status: 400, domain: 'transport-error' },
};

export interface ErrorReplyShape {
  status: number;
  message: string;
  domain: ErrorDomain;
  /** false when the error is not a coded one: a bug to log. */
  known: boolean;
}

/** Match on `code`, not instanceof: a plugin may bring its own copy of this module. */
export function classifyError(err: unknown): ErrorReplyShape {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const entry = typeof code === 'string' ? ERROR_TABLE[code] : undefined;
  if (entry) {
    return { status: entry.status, message: (err as Error).message, domain: entry.domain, known: true };
  }
  return { status: 500, message: 'internal error', domain: 'task-error', known: false };
}
