// DNS lookups of one task on the worker's shared resolver: callback and awaited forms, the
// per-task lookup cap, the task deadline, and a node:dns-shaped adapter for libraries.

import { dnsErrorText, nodeDnsError } from './dns-errors.js';
import type { DnsErrorCode } from './dns-errors.js';
import { failedName, type DnsAnswer } from './dns-resolver.js';
import { RECORD_TYPES } from './dns-wire.js';
import type { MxData, RecordData, RecordType, SoaData, SrvData } from './dns-wire.js';
import { dispatch, NetError } from './scope.js';
import type { NetScope } from './scope.js';
import type { DnsRecordValue, DnsRequest, DnsResult, NodeStyleResolver, TaskDns } from './types.js';

/** Rspamd's `dns_max_requests`: lookups one task may make, so one message cannot flood the resolver. */
export const DEFAULT_DNS_MAX_REQUESTS = 64;

function recordType(t: string): RecordType {
  const up = t.toUpperCase();
  if (up === 'OPT' || !(up in RECORD_TYPES)) throw new NetError('NET_BAD_REQUEST', `unsupported DNS record type ${t}`);
  return up as RecordType;
}

function toValue(type: RecordType, d: RecordData): DnsRecordValue {
  switch (type) {
    case 'TXT': case 'SPF': return (d as string[]).join('');
    case 'MX': { const m = d as MxData; return { name: m.exchange, priority: m.priority }; }
    case 'SOA': { const s = d as SoaData; return { ns: s.nsname, contact: s.hostmaster, serial: s.serial, refresh: s.refresh, retry: s.retry, expiry: s.expire, nx: s.minttl }; }
    case 'SRV': { const s = d as SrvData; return { priority: s.priority, weight: s.weight, port: s.port, target: s.name }; }
    default: return d as string;
  }
}

/** node:dns result shapes, which mailauth and similar libraries expect. */
function toNodeValue(type: RecordType, d: RecordData): unknown {
  switch (type) {
    case 'TXT': case 'SPF': return d as string[];
    case 'MX': { const m = d as MxData; return { exchange: m.exchange, priority: m.priority }; }
    case 'SOA': return d;
    case 'SRV': { const s = d as SrvData; return { priority: s.priority, weight: s.weight, port: s.port, name: s.name }; }
    default: return d;
  }
}

function failure(code: DnsErrorCode, text: string): DnsResult {
  return { ok: false, is_ok: false, error: text, code };
}

/** Names kept in a task's DNS failure summary; the count goes on past it. */
export const MAX_FAILED_NAMES = 8;

/** Codes that are an answer about the name (it has no such record), not a failure to get one. */
const ANSWERS: ReadonlySet<DnsErrorCode> = new Set<DnsErrorCode>(['NXDOMAIN', 'NODATA', 'CANCELLED']);

/** Failed lookups of one task, for its scan log line: the count, and the first few names with their code. */
export interface DnsFailures { count: number; names: string[]; capReached: boolean }

/**
 * Lookups a task has made, shared by every view of the task's DNS API (the cap is per task), and
 * the lookups that failed. Failures are summarised on the task's one log line, never logged one
 * by one: an outage would otherwise write a line per lookup, dozens per message.
 */
export interface DnsBudget { used: number; failures?: DnsFailures }

/** Counts a failed lookup into the task's summary (answers such as NXDOMAIN are not failures). */
export function noteDnsFailure(budget: DnsBudget, name: string, code: DnsErrorCode): void {
  if (ANSWERS.has(code)) return;
  const f = (budget.failures ??= { count: 0, names: [], capReached: false });
  if (code === 'LIMIT') {
    // One refusal stands for all: past the cap every lookup is refused the same way.
    if (f.capReached) return;
    f.capReached = true;
  }
  f.count++;
  if (f.names.length < MAX_FAILED_NAMES) f.names.push(`${name.slice(0, 255)} ${code}`);
}

export class TaskDnsImpl implements TaskDns {
  readonly #budget: DnsBudget;
  readonly nodeResolver: NodeStyleResolver;

  constructor(private readonly scope: NetScope, budget: DnsBudget = { used: 0 }) {
    this.#budget = budget;
    this.nodeResolver = async (name, rrtype) => {
      scope.requireCoro('dns');
      const type = recordType(rrtype);
      const ev = scope.begin('dns');
      try {
        const o = await this.#lookup(name, type, false);
        if (typeof o !== 'string') return o.records.map((r) => toNodeValue(type, r));
        noteDnsFailure(this.#budget, name, o);
        throw nodeDnsError(o, failedName(o, name), type, name);
      } finally {
        ev.end();
      }
    };
  }

  get count(): number {
    return this.#budget.used;
  }

  /** The answer or the failure's code (never rejects): see DnsResolver.resolve. */
  #lookup(name: string, type: RecordType, forced: boolean): Promise<DnsAnswer | DnsErrorCode> {
    if (this.scope.ended || this.scope.signal.aborted) return Promise.resolve('CANCELLED');
    if (!forced) {
      if (this.#budget.used >= this.scope.dnsMaxRequests) {
        // Said once, on the task's log line (noteDnsFailure): a message with hundreds of URLs would otherwise write a line per refused lookup.
        return Promise.resolve('LIMIT');
      }
      this.#budget.used++;
    }
    // The resolver retries on its own schedule; the task deadline aborts the signal earlier.
    return this.scope.resolver.resolve(name, type, this.scope.signal);
  }

  #result(name: string, type: RecordType, forced: boolean): Promise<DnsResult> {
    return this.#lookup(name, type, forced).then((o): DnsResult => {
      if (typeof o !== 'string') return { ok: true, is_ok: true, results: o.records.map((r) => toValue(type, r)), ttl: o.ttl };
      noteDnsFailure(this.#budget, name, o);
      return failure(o, dnsErrorText(o));
    });
  }

  /**
   * The awaited form answered from the resolver's cache: the same result a lookup would give,
   * counted against the cap the same way, without its promise chain and pending event (the
   * symbol awaits the result, so nothing is left pending). Undefined when a lookup is needed.
   */
  #fromCache(name: string, type: RecordType, forced: boolean): DnsResult | undefined {
    if (this.scope.ended || this.scope.signal.aborted) return undefined;
    if (!forced && this.#budget.used >= this.scope.dnsMaxRequests) return undefined;
    const hit = this.scope.resolver.cached(name, type);
    if (hit === undefined) return undefined;
    if (!forced) this.#budget.used++;
    if (typeof hit === 'string') {
      noteDnsFailure(this.#budget, name, hit);
      return failure(hit, dnsErrorText(hit));
    }
    return { ok: true, is_ok: true, results: hit.records.map((r) => toValue(type, r)), ttl: hit.ttl };
  }

  cached(req: Omit<DnsRequest, 'callback'>): DnsResult | undefined {
    return this.#fromCache(req.name, recordType(req.type), req.forced === true);
  }

  request(req: DnsRequest & { callback: NonNullable<DnsRequest['callback']> }): boolean;
  request(req: DnsRequest & { callback?: undefined }): Promise<DnsResult>;
  request(req: DnsRequest): boolean | Promise<DnsResult> {
    const type = recordType(req.type);
    const cb = req.callback;
    if (cb === undefined) {
      this.scope.requireCoro('dns');
      const hit = this.#fromCache(req.name, type, req.forced === true);
      if (hit) return Promise.resolve(hit);
    }
    return dispatch(this.scope, 'dns', cb, () => this.#result(req.name, type, req.forced === true), (r) => {
      if (r.ok) cb!(undefined, r.results, req.name, undefined);
      else cb!(r.error, undefined, req.name, r.code);
    });
  }

  a(name: string): Promise<DnsResult> { return this.request({ type: 'A', name }); }
  aaaa(name: string): Promise<DnsResult> { return this.request({ type: 'AAAA', name }); }
  txt(name: string): Promise<DnsResult> { return this.request({ type: 'TXT', name }); }
  mx(name: string): Promise<DnsResult> { return this.request({ type: 'MX', name }); }
  ptr(name: string): Promise<DnsResult> { return this.request({ type: 'PTR', name }); }
}
