// DNS failures as data: a stable code for programs, Rspamd's error text for plugins ported from it.

export type DnsErrorCode =
  | 'NXDOMAIN'
  | 'NODATA'
  | 'TIMEOUT'
  | 'SERVFAIL'
  | 'REFUSED'
  | 'FORMERR'
  | 'NOTIMP'
  | 'NETWORK'
  | 'CANCELLED'
  | 'LIMIT'
  | 'BADNAME';

/** The strings Rspamd's resolver hands to Lua callbacks. */
const RSPAMD_TEXT: Record<DnsErrorCode, string> = {
  NXDOMAIN: 'no records with this name',
  NODATA: 'requested record is not found',
  TIMEOUT: 'query timed out',
  SERVFAIL: 'server fail',
  REFUSED: 'query refused',
  FORMERR: 'query format error',
  NOTIMP: 'not implemented',
  NETWORK: 'network error',
  CANCELLED: 'session is terminating',
  LIMIT: 'too many DNS requests for this task',
  BADNAME: 'invalid name',
};

/** Node's dns error codes, which mailauth (and most npm DNS users) switch on. */
const NODE_CODE: Record<DnsErrorCode, string> = {
  NXDOMAIN: 'ENOTFOUND',
  NODATA: 'ENODATA',
  TIMEOUT: 'ETIMEOUT',
  SERVFAIL: 'ESERVFAIL',
  REFUSED: 'EREFUSED',
  FORMERR: 'EFORMERR',
  NOTIMP: 'ENOTIMP',
  NETWORK: 'ECONNREFUSED',
  CANCELLED: 'ECANCELLED',
  LIMIT: 'ETIMEOUT',
  BADNAME: 'EBADNAME',
};

/** Rspamd's wording of a failure (what DnsError.text gives, without making an error). */
export function dnsErrorText(code: DnsErrorCode): string {
  return RSPAMD_TEXT[code];
}

/** The message a DnsError of this failure carries. */
export function dnsErrorMessage(code: DnsErrorCode, qname: string, qtype: string): string {
  return `${RSPAMD_TEXT[code]} (${qtype} ${qname})`;
}

/**
 * The error node:dns would reject with (`code` ENOTFOUND and the like, `hostname`), for libraries
 * such as mailauth that switch on it; without a stack trace, as DnsError (below).
 */
export function nodeDnsError(code: DnsErrorCode, qname: string, qtype: string, hostname: string): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const e = new Error(dnsErrorMessage(code, qname, qtype));
  Error.stackTraceLimit = limit;
  return Object.assign(e, { code: NODE_CODE[code], hostname });
}

export class DnsError extends Error {
  readonly code: DnsErrorCode;
  constructor(code: DnsErrorCode, readonly qname: string, readonly qtype: string) {
    // Most of these are routine answers (NXDOMAIN from every DNS list a message is not on), made
    // by the thousand per second: capturing a stack trace for each cost more than the lookup.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(dnsErrorMessage(code, qname, qtype));
    Error.stackTraceLimit = limit;
    this.code = code;
  }
  /** Rspamd's wording of this failure, without the query. */
  get text(): string {
    return RSPAMD_TEXT[this.code];
  }
  /** The node:dns spelling of this failure. */
  get nodeCode(): string {
    return NODE_CODE[this.code];
  }
  /** "No such name" and "no data" are answers, not failures of the lookup. */
  get negative(): boolean {
    return this.code === 'NXDOMAIN' || this.code === 'NODATA';
  }
}

export function isDnsError(e: unknown): e is DnsError {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' && (e as { qtype?: unknown }).qtype !== undefined;
}
