// The master request to one upstream group: up to `maxRetries`
// attempts, each on a host this request has not failed on yet while one is up; every failure
// counted against its host (which the set may take out of rotation). A connection refused,
// reset or timed out, a reply that is not HTTP, and a 5xx status are failures; any other status
// is the scanner's answer and is relayed as is.

import type { KexKeypair } from '../../crypto/keypair.js';
import type { Logger } from '../../plugin-api/index.js';
import type { UpstreamGroupConfig } from '../config.js';
import type { RelayRequest, RelayResponse, ScanRelay } from '../relay-types.js';
import { AttemptError, HostPool, type HostPoolOptions } from '../upstreams/host-pool.js';
import { UpstreamSet, type FailureLimits, type UpstreamHost } from '../upstreams/upstream-set.js';
import { fromAttempt, noBackend } from './errors.js';
import { sendLeg } from './leg.js';

/**
 * Statuses that mean "this host could not scan it" rather than "this message is bad": the next
 * host may well answer (Rspamd relays them as they are; we try another host first, and relay the
 * last one only when no host is left).
 */
const RETRY_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

export interface GroupRelayOptions {
  group: UpstreamGroupConfig;
  maxRetries: number;
  failure: FailureLimits;
  /** Largest reply (after decryption and decompression) accepted from an upstream. */
  maxReplyBytes: number;
  clientKeypair?: KexKeypair | undefined;
  userAgent: string;
  log: Logger;
  pool?: HostPoolOptions;
  now?: () => number;
  random?: () => number;
}

/** The address of an `IP` header without its port (the milter front end sends `a.b.c.d:port`, `[v6]:port`). */
export function ipWithoutPort(v: string): string {
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(v);
  if (bracket) return bracket[1]!;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(v);
  return v4 ? v4[1]! : v;
}

function headerOf(req: RelayRequest, name: string): string | undefined {
  for (const [k, v] of req.headers) if (k.toLowerCase() === name) return v.trim();
  return undefined;
}

export class GroupRelay implements ScanRelay {
  readonly name: string;
  readonly set: UpstreamSet;
  readonly #o: GroupRelayOptions;
  readonly #pools = new Map<UpstreamHost, HostPool>();

  constructor(o: GroupRelayOptions) {
    this.#o = o;
    this.name = o.group.name;
    const log = o.log;
    this.set = new UpstreamSet(o.group.hosts, {
      rotation: o.group.rotation,
      limits: o.failure,
      events: {
        down: (h, n, reason) => log.warn(`upstream ${h.name} of group ${this.name} is down after ${n} failures (last: ${reason}); tried again in ${Math.round(o.failure.reviveTimeMs / 1000)} s`, { group: this.name, upstream: h.name, failures: n }),
        revived: (h) => log.info(`upstream ${h.name} of group ${this.name} is back in rotation`, { group: this.name, upstream: h.name }),
      },
      ...(o.now ? { now: o.now } : {}),
      ...(o.random ? { random: o.random } : {}),
    });
    for (const h of this.set.hosts) this.#pools.set(h, new HostPool(h.spec, o.pool));
  }

  /** The key of hash rotation for this request, by the group's `hash_by`. */
  #hashKey(req: RelayRequest): string | undefined {
    if (this.set.rotation !== 'hash') return undefined;
    switch (this.#o.group.hashBy) {
      case 'peer':
        return req.route?.clientAddress;
      case 'ip': {
        // The same client must hash the same whatever source port its connection had.
        const ip = headerOf(req, 'ip');
        return ip !== undefined ? ipWithoutPort(ip) : req.route?.clientAddress;
      }
      case 'from':
        return headerOf(req, 'from')?.toLowerCase();
    }
  }

  async relay(req: RelayRequest, signal?: AbortSignal): Promise<RelayResponse> {
    const g = this.#o.group;
    const key = this.#hashKey(req);
    const tried = new Set<UpstreamHost>();
    /** How the latest attempt ended: the client gets this when no attempt is left. */
    let last: { reply: RelayResponse } | { error: AttemptError } | undefined;
    for (let attempt = 1; attempt <= this.#o.maxRetries; attempt++) {
      let host = this.set.pick(key, tried);
      // A 5xx is only worth another try on a host that has not given one for this request.
      if (host && last && 'reply' in last && tried.has(host)) host = undefined;
      if (!host) break;
      tried.add(host);
      try {
        const reply = await sendLeg(req, {
          pool: this.#pools.get(host)!,
          timeoutMs: g.timeoutMs,
          keepalive: g.keepalive,
          compression: g.compression,
          settingsId: g.settingsId,
          key: g.key?.bytes,
          clientKeypair: this.#o.clientKeypair,
          userAgent: this.#o.userAgent,
          maxReplyBytes: this.#o.maxReplyBytes,
        }, signal);
        if (!RETRY_STATUSES.has(reply.status)) {
          this.set.ok(host);
          return reply;
        }
        this.set.fail(host, `HTTP ${reply.status}`);
        this.#o.log.warn(`upstream ${host.name} of group ${this.name} answered ${reply.status} ${reply.reason}${attempt < this.#o.maxRetries ? '; trying another host' : ''}`, { group: this.name, upstream: host.name, attempt, status: reply.status });
        last = { reply };
      } catch (err) {
        if (!(err instanceof AttemptError)) throw err;
        if (err.kind === 'aborted') throw fromAttempt(err);
        this.set.fail(host, err.message);
        this.#o.log.warn(`upstream ${host.name} of group ${this.name} failed: ${err.message}${attempt < this.#o.maxRetries ? '; retrying' : ''}`, { group: this.name, upstream: host.name, attempt, kind: err.kind });
        last = { error: err };
      }
    }
    if (!last) throw noBackend();
    if ('reply' in last) return last.reply;
    throw fromAttempt(last.error);
  }

  close(): void {
    for (const p of this.#pools.values()) p.close();
  }
}
