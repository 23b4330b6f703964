// The network calls a symbol makes through its task (the network calls
// of Rspamd's Lua API: rspamd_http, rspamd_dns, rspamd_redis, rspamd_tcp). Each call has two forms: pass `callback` and it returns at
// once (true: scheduled), or leave it out and await the result — the awaited form is only
// allowed in symbols registered with the `coro` flag. Every call is bounded by its own timeout
// and by the task deadline, keeps its symbol pending until it completes, and is cancelled when
// the task ends. Failures are results (`err`/`error` text, Rspamd's wording), never throws.

import type { DnsErrorCode } from './dns-errors.js';
import type { RecordType } from './dns-wire.js';

export type { DnsErrorCode } from './dns-errors.js';
export type { RecordType } from './dns-wire.js';

// ---------- DNS ----------

export interface DnsMx { name: string; priority: number }
export interface DnsSoa { ns: string; contact: string; serial: number; refresh: number; retry: number; expiry: number; nx: number }
export interface DnsSrv { priority: number; weight: number; port: number; target: string }
/** A/AAAA: address text; TXT/PTR/NS/CNAME: string (TXT strings joined); MX, SOA, SRV: objects. */
export type DnsRecordValue = string | DnsMx | DnsSoa | DnsSrv;

export type DnsResult =
  | { ok: true; is_ok: true; results: DnsRecordValue[]; ttl: number }
  | { ok: false; is_ok: false; error: string; code: DnsErrorCode };

export type DnsCallback = (err: string | undefined, results: DnsRecordValue[] | undefined, name: string, code: DnsErrorCode | undefined) => void;

export interface DnsRequest {
  /** `a`, `aaaa`, `txt`, `mx`, `ptr`, `ns`, `cname`, `soa`, `srv`, `spf` (any case). */
  type: string;
  name: string;
  /** Not counted against the per-task lookup cap (Rspamd's `forced`). */
  forced?: boolean;
  callback?: DnsCallback;
}

/** A node:dns-style lookup (`resolve(name, rrtype)`), for libraries such as mailauth; rejects with `code` ENOTFOUND, ENODATA, ETIMEOUT… */
export type NodeStyleResolver = (name: string, rrtype: string) => Promise<unknown[]>;

export interface TaskDns {
  request(req: DnsRequest & { callback: DnsCallback }): boolean;
  request(req: DnsRequest & { callback?: undefined }): Promise<DnsResult>;
  a(name: string): Promise<DnsResult>;
  aaaa(name: string): Promise<DnsResult>;
  txt(name: string): Promise<DnsResult>;
  mx(name: string): Promise<DnsResult>;
  ptr(name: string): Promise<DnsResult>;
  /**
   * The outcome the worker's resolver has cached for `name`, at once and without a lookup;
   * undefined when a lookup is needed. A cached answer counts against the lookup cap as a lookup
   * would. For checks that make many lookups a message, most of them answered from the cache.
   */
  cached(req: Omit<DnsRequest, 'callback'>): DnsResult | undefined;
  /** The same lookups as a node:dns-shaped function (awaited form, needs `coro`). */
  readonly nodeResolver: NodeStyleResolver;
  /** Lookups this task made against the cap (not `forced` ones). */
  readonly count: number;
}

// ---------- HTTP ----------

export interface HttpResponse {
  code: number;
  /** Body as text (UTF-8); `body` has the bytes. */
  content: string;
  body: Buffer;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
}

export type HttpCallback = (err: string | undefined, code?: number, body?: Buffer, headers?: Record<string, string>) => void;

export interface HttpRequest {
  url: string;
  /** GET by default, POST when a body is given. */
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Seconds (5 by default), capped by the task deadline. */
  timeout?: number;
  /** Largest response body accepted, in bytes; 0: no limit beyond the default cap. */
  max_size?: number;
  callback?: HttpCallback;
}

export interface HttpResult { err?: string; response?: HttpResponse }

export interface TaskHttp {
  request(req: HttpRequest & { callback: HttpCallback }): boolean;
  request(req: HttpRequest & { callback?: undefined }): Promise<HttpResult>;
}

// ---------- TCP ----------

export type TcpData = string | Buffer | Array<string | Buffer>;

export type TcpCallback = (err: string | undefined, data?: Buffer) => void;

/**
 * Where a TCP call goes: a host name or IP address with its port, or the absolute path of a
 * Unix-domain socket (it starts with `/`; the port is then ignored and may be left out). A path
 * longer than the socket address holds (107 bytes on Linux) is refused with an `err` result.
 */
export type TcpTarget = { host: string; port: number } | { host: `/${string}`; port?: number };

export type TcpRequest = TcpTarget & {
  data?: TcpData;
  /** Wait for a reply (default true): the first chunk, or up to `stop_pattern`. */
  read?: boolean;
  stop_pattern?: string | Buffer;
  /** Seconds (5 by default), capped by the task deadline. */
  timeout?: number;
  callback?: TcpCallback;
};

export interface TcpResult { err?: string; data?: Buffer }

export type TcpIo = { ok: true; data: Buffer } | { ok: false; error: string };

/** A connection for awaited, step-by-step exchanges (Rspamd's `connect_sync`). */
export interface TcpConnection {
  write(data: TcpData): Promise<{ ok: true } | { ok: false; error: string }>;
  /** Whatever arrives next (buffered bytes first). */
  read_once(): Promise<TcpIo>;
  /** Up to and including `delimiter`; the delimiter is stripped from the result. */
  read_until(delimiter: string | Buffer): Promise<TcpIo>;
  read_bytes(count: number): Promise<TcpIo>;
  read_until_eof(): Promise<TcpIo>;
  /** Half-close: send FIN, keep reading. */
  shutdown(): void;
  close(): void;
}

/** `host` as in a request: a host name or address with `port`, or a Unix-domain socket path. */
export type TcpConnectRequest = TcpTarget & { timeout?: number };

export interface TaskTcp {
  request(req: TcpRequest & { callback: TcpCallback }): boolean;
  request(req: TcpRequest & { callback?: undefined }): Promise<TcpResult>;
  connect(req: TcpConnectRequest): Promise<{ ok: true; conn: TcpConnection } | { ok: false; error: string }>;
}

// ---------- Redis ----------

export interface RedisParams {
  /** `host:port` (127.0.0.1:6379 by default), or a list; the first is used. */
  servers?: string | string[];
  db?: number;
  username?: string;
  password?: string;
  /** Seconds (1 by default, as Rspamd), capped by the task deadline. */
  timeout?: number;
}

/** Redis reply: string, number, null (nil), nested arrays. */
export type RedisValue = string | number | null | Buffer | RedisValue[];

export type RedisCallback = (err: string | undefined, data?: RedisValue) => void;

export interface RedisAttrs {
  callback?: RedisCallback;
  is_write?: boolean;
  /** Sharding key (unused with one server; kept for ported plugins). */
  key?: string;
}

export type RedisResult = { ok: true; data: RedisValue } | { ok: false; error: string };

export interface RedisConnection {
  add_cmd(command: string, args?: Array<string | number | Buffer>): void;
  /** Sends every queued command in one round trip; data holds one reply (or error text) per command. */
  exec(): Promise<{ ok: true; data: RedisValue[] } | { ok: false; error: string }>;
}

export interface TaskRedis {
  request(params: RedisParams, attrs: RedisAttrs & { callback: RedisCallback }, command: Array<string | number | Buffer>): boolean;
  request(params: RedisParams, attrs: Omit<RedisAttrs, 'callback'>, command: Array<string | number | Buffer>): Promise<RedisResult>;
  connect(params: RedisParams): Promise<{ ok: true; conn: RedisConnection } | { ok: false; error: string }>;
}

export type { RecordType as DnsRecordType };
export type DnsTypeName = Lowercase<RecordType> | RecordType;

/**
 * One UDP exchange with one peer: every datagram is sent, and each one still unanswered is sent
 * again after a time-out, up to `retransmits` times (the fuzzy protocol's batches, Rspamd's
 * `rspamd_udp`). The exchange ends when every datagram has its reply or the attempts run out.
 */
export interface UdpRequest {
  /** An IP address or a host name (resolved through the worker's resolver). */
  host: string;
  port: number;
  datagrams: readonly Buffer[];
  /** Index of the datagram a reply answers, or undefined to ignore the reply (stray, garbled, forged). */
  match(reply: Buffer): number | undefined;
  /** Seconds one attempt waits for replies (default 1). */
  timeout?: number;
  /** Extra attempts for the datagrams still unanswered (default 0). */
  retransmits?: number;
}

export interface UdpResult {
  /** The reply to each datagram, by index; undefined where none came. */
  replies: (Buffer | undefined)[];
  answered: number;
  /** Why the exchange ended early (no route, a host that does not resolve, the socket failed). */
  error?: string;
}

export interface TaskUdp {
  /** Awaited only (the symbol needs `coro`); network trouble is a result, never a throw. */
  exchange(req: UdpRequest): Promise<UdpResult>;
}
