// Data shapes shared by every layer of a scan: what the protocol layer hands the engine
// (ScanMeta), and what the engine hands back (ScanResult). They live at the bottom of the
// import graph so modules, the engine and the protocol renderers all agree on one spelling.

/** Protocol flags a client may send (`Flags:` header, v3 `flags` array). Names are wire names. */
export const SCAN_FLAGS = [
  'pass_all',
  'groups',
  'zstd',
  'no_log',
  'milter',
  'profile',
  'body_block',
  'ext_urls',
  'skip',
  'skip_process',
  'no_stat',
  'ssl',
] as const;
export type ScanFlag = (typeof SCAN_FLAGS)[number];

export interface TlsInfo {
  cipher?: string;
  version?: string;
  certIssuer?: string;
}

/**
 * One normalised shape for v2 headers, v3 metadata, milter macros and spamc headers.
 * Every entry point produces it; the engine reads only it.
 */
export interface ScanMeta {
  /**
   * Client address, normalised (IPv4-mapped IPv6 reduced to IPv4, no port). Absent: "no IP".
   * When the request gave none, the engine takes it (and `hostname`) from the top Received
   * header before any rule runs, as Rspamd 3.4 does; `noIp` then keeps the request's fact.
   */
  ip?: string;
  /**
   * The request carried no (valid) client IP: Rspamd's NO_IP task flag. `ip` and `hostname` may
   * since have been read from the top Received header (src/engine/received-client.ts); rules
   * that must know whether an MTA gave the address read this, not `ip`.
   */
  noIp?: boolean;
  helo?: string;
  hostname?: string;
  /** SMTP MAIL FROM address without brackets; '' is the null sender `<>`. Absent: not given or invalid. */
  from?: string;
  /** SMTP RCPT TO addresses, without brackets, in order. */
  rcpt: string[];
  user?: string;
  deliverTo?: string;
  queueId?: string;
  settingsId?: string;
  /** Parsed `Settings` apply object (JSON/UCL); undefined when absent or unparsable. */
  settings?: Record<string, unknown>;
  flags: Set<ScanFlag>;
  mtaTag?: string;
  mtaName?: string;
  tls?: TlsInfo;
  /** `Raw: yes`: the body is not MIME. */
  raw: boolean;
  /** `Subject` request header (documented for raw input). */
  subject?: string;
  /** `Content-Type` request header: the MIME type of raw input or of a v3 message part. */
  contentType?: string;
  filename?: string;
  logTag?: string;
  /** false when `Log: no` or flag no_log. */
  log: boolean;
  urlFormat: 'default' | 'extended';
  /** `Pass: all` or flag pass_all. */
  pass?: 'all';
  mailer?: string;
  userAgent?: string;
  /** Legacy numeric threshold overrides (`maxscore`, `softscore`). */
  maxScore?: number;
  softScore?: number;
  /** An envelope value (IP, From, Rcpt) could not be parsed: the task gets the broken-headers flag. */
  brokenEnvelope: boolean;
  /** Every request header (lower-case name → values in arrival order), for rules that read them. */
  requestHeaders: Map<string, string[]>;
}

export function emptyMeta(): ScanMeta {
  return {
    rcpt: [],
    flags: new Set(),
    raw: false,
    log: true,
    urlFormat: 'default',
    brokenEnvelope: false,
    requestHeaders: new Map(),
  };
}

export const ACTIONS = ['reject', 'soft reject', 'rewrite subject', 'add header', 'greylist', 'no action'] as const;
/** Action names as they appear on the wire (spaces, not underscores); custom names are allowed too. */
export type ActionName = (typeof ACTIONS)[number] | (string & {});

export interface MilterHeaderEntry {
  value: string;
  order: number;
}

/** The `milter` object of the reply. */
export interface MilterReply {
  add_headers?: Record<string, string | MilterHeaderEntry | Array<string | MilterHeaderEntry>>;
  remove_headers?: Record<string, number | number[]>;
  change_from?: string;
  add_rcpt?: string[];
  del_rcpt?: string[];
  reject?: string;
  spam_header?: string | Record<string, string>;
  no_action?: boolean;
}

export interface SymbolResult {
  name: string;
  /** Score contributed (weight × dynamic factor, after settings). */
  score: number;
  /** Configured weight; 0 for symbols unknown to the config. */
  metricScore: number;
  options?: string[];
  description?: string;
  groups: string[];
}

export interface GroupResult {
  name: string;
  score: number;
  description?: string;
}

/** Facts of a verdict the symbol list does not show: what limited, consumed or replaced scores. */
export interface VerdictExplanation {
  /** Groups whose score limit cut a contribution. */
  cappedGroups?: string[];
  /** Composite → the symbols whose score or presence it removed. */
  composites?: Record<string, string[]>;
  /** Settings that applied to the scan (a configured rule's id, or what a request's Settings changed). */
  settings?: AppliedSettings;
}

export interface AppliedSettings {
  id?: string;
  /** Action thresholds the settings replaced (null: the action was switched off). */
  actions?: Record<string, number | null>;
  /** Symbols whose score the settings replaced. */
  scores?: string[];
  whitelist?: boolean;
  /** The settings limited which symbols could run. */
  symbolsLimited?: boolean;
}

export interface UrlInfo {
  /** Normalised, percent-encoded URL. */
  url: string;
  host?: string;
  /** Registrable domain (eTLD+1) when known. */
  tld?: string;
  flags: string[];
  linkedUrl?: UrlInfo;
  /** mailto: or a bare e-mail address found as a URL. */
  isEmail?: boolean;
}

/** What the engine decided for one message; every reply format is a rendering of this. */
export interface ScanResult {
  isSkipped: boolean;
  score: number;
  requiredScore: number;
  action: ActionName;
  /** Module that forced the result through a pre-result (e.g. GTUBE). */
  passthroughModule?: string;
  subject?: string;
  /** `discard`/`quarantine` for actions configured with a milter attribute. */
  reject?: string;
  /** Enabled actions with thresholds, highest first. */
  thresholds: Array<[ActionName, number]>;
  symbols: SymbolResult[];
  groups: GroupResult[];
  messages: Record<string, string>;
  /** URLs found, in order; absent when none were parsed. */
  urls?: UrlInfo[];
  emails?: string[];
  /** symbol → seconds, when profiling was asked for. */
  profile?: Record<string, number>;
  /** symbol → seconds its callback ran, for the symbols of the result (for /counters); never rendered in replies. */
  symbolTimes?: Record<string, number>;
  /** Message-ID without brackets, `undef` when the message has none; absent when nothing was parsed. */
  messageId?: string;
  timeReal: number;
  dkimSignatures?: string[];
  milter?: MilterReply;
  /** The rewritten message (headers + body) when a rule changed it. */
  rewritten?: Buffer;
  /** Byte offset of the body inside `rewritten` (after the blank line ending the headers). */
  rewrittenBodyOffset?: number;
  /** Newline style of the scanned message, used to fold generated header values. */
  newline: '\r\n' | '\n';
  /** DNS lookups the task made (Rspamd's `dns req`); for the scan log line, never rendered in replies. */
  dnsRequests?: number;
  /** Lookups that failed (time-outs, SERVFAIL, the per-task cap), summarised for the scan log line. */
  dnsFailures?: { count: number; names: string[]; capReached: boolean };
  /** Why the verdict came out as it did, beyond the symbols (history rows keep it; replies never render it). */
  explain?: VerdictExplanation;
  /** The task is not to be logged or kept in the history: `no_log` set by Settings or a rule (the request's `Log: no` is in ScanMeta). */
  noLog?: boolean;
  /** The client address read from the top Received header for a request that named none (src/engine/received-client.ts): the log line and history name it, as Rspamd's do; never rendered in replies. */
  clientIp?: string;
}
