// The contract between the proxy's front ends (HTTP relay, milter, legacy spamc/rspamc lines)
// and whatever answers the scan: a group of upstream scanners reached over Rspamd's HTTP scan
// protocol, or the proxy's own engine (self-scan). Front ends build a RelayRequest exactly as
// Rspamd's proxy would send it upstream and read the scanner's
// reply back from a RelayResponse; how a host is chosen, retried, encrypted or compressed stays
// behind ScanRelay.

/** A scan request in the scanner's HTTP protocol, before transport framing. */
export interface RelayRequest {
  /** `POST` for scans the proxy builds itself; an HTTP client's own method when relayed. */
  method: string;
  /** Path and query, e.g. `/checkv2`, `/checkv3`, `/symbols?ip=…`. */
  path: string;
  /**
   * Headers in the order they are to be sent. The relay sets `Content-Length`, `Host`,
   * `Connection` and, when it wraps the body, `Compression`/`Key`; a front end never sends those.
   */
  headers: Array<[string, string]>;
  body: Buffer;
  /** What the choice of upstream group and host may depend on. */
  route?: {
    /** The client's `Host` header: a group of that name serves the request. */
    host?: string;
    /** The proxy's client address: the key of `hash:` rotation. */
    clientAddress?: string;
    /** Use this group by name (e.g. milter sessions always use the default group). */
    group?: string;
  };
}

/** The scanner's reply, after the relay undid its own compression and encryption. */
export interface RelayResponse {
  status: number;
  reason: string;
  /** Upstream headers in order, minus `Content-Length`, `Connection`, `Compression`, `Key`. */
  headers: Array<[string, string]>;
  body: Buffer;
  /** `host:port` (or socket path) of the upstream that answered, or `self` for self-scan. */
  upstream: string;
}

/**
 * Coded failures of a relay, each mapped by the HTTP front end to the status Rspamd's proxy sends and by the
 * milter front end to one SMFIR_TEMPFAIL.
 */
export type RelayErrorCode =
  | 'ERR_RELAY_NO_BACKEND' // 404 Backend not found
  | 'ERR_RELAY_TIMEOUT' // 504 Gateway timeout
  | 'ERR_RELAY_RESET' // 502 Gateway connection reset
  | 'ERR_RELAY_REFUSED' // 502 Gateway connection refused
  | 'ERR_RELAY_FAILED'; // 502 Unknown gateway error: <text>

export interface ScanRelay {
  /** Rejects only with a MailsiftError (src/http/errors.ts) whose `code` is a RelayErrorCode. */
  relay(req: RelayRequest, signal?: AbortSignal): Promise<RelayResponse>;
}
