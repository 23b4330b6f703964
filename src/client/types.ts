// Shapes the client speaks in: what a caller asks for (ScanOptions) and what comes back
// (ScanReply). The reply body keeps wire names (`required_score`, `message-id`) because
// callers print and forward it as-is.

export type ProtocolVersion = 'v2' | 'v3';

/** One scan request's envelope and controls; every field maps to a v2 header or a v3 metadata key. */
export interface ScanOptions {
  ip?: string;
  from?: string;
  rcpt?: string[];
  helo?: string;
  hostname?: string;
  user?: string;
  deliverTo?: string;
  queueId?: string;
  /** Settings apply object, or its JSON/UCL text as-is. */
  settings?: string | Record<string, unknown>;
  settingsId?: string;
  /** Protocol flags (wire names: `pass_all`, `groups`, `zstd`, …). */
  flags?: string[];
  /** Extra request headers, sent verbatim (v2) or in metadata `headers` (v3). */
  headers?: Array<[string, string]>;
  /** Controller password; sent as the `Password` header. */
  password?: string;
  passAll?: boolean;
  raw?: boolean;
  filename?: string;
  mtaTag?: string;
  mtaName?: string;
  logTag?: string;
  extendedUrls?: boolean;
  profile?: boolean;
  /** Ask for the rewritten message after the JSON (`body_block`); rspamc always does. Default true. */
  bodyBlock?: boolean;
  /** zstd-compress the message (whole body in v2, the message part in v3) and ask for a compressed reply. */
  compress?: boolean;
  /** v2 (`/checkv2`, default) or v3 (`/checkv3` multipart). */
  protocol?: ProtocolVersion;
  /** msgpack metadata and result (v3), or `Accept: application/msgpack` (v2). */
  msgpack?: boolean;
  /** Override the request path (e.g. `/check` for the legacy reply shape). */
  path?: string;
  /** Per-request time-out in milliseconds (overrides the client default). */
  timeoutMs?: number;
}

export interface ReplySymbol {
  name: string;
  score: number;
  metric_score?: number;
  options?: string[];
  description?: string;
}

/** The v2 result object; unknown keys are kept. */
export interface ScanResultBody {
  is_skipped?: boolean;
  score?: number;
  required_score?: number;
  action?: string;
  subject?: string;
  symbols?: Record<string, ReplySymbol>;
  messages?: Record<string, unknown>;
  urls?: unknown[];
  emails?: unknown[];
  'message-id'?: string;
  'dkim-signature'?: string | string[];
  milter?: Record<string, unknown>;
  time_real?: number;
  [key: string]: unknown;
}

export interface ScanReply {
  status: number;
  /** Reply headers, lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  result: ScanResultBody;
  /** The result bytes exactly as decoded from the wire (JSON text or msgpack), before parsing. */
  resultBytes: Buffer;
  resultFormat: 'json' | 'msgpack';
  /** The rewritten message (or only its body with the `milter` flag), when the server sent one. */
  rewritten?: Buffer;
  /** Wall-clock time from sending the request to the decoded reply. */
  elapsedMs: number;
}
