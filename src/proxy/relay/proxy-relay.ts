// The proxy's ScanRelay (relay-types.ts): routes a request to its upstream group (as
// Rspamd's proxy routes: the group named by `route.group`, else by the client's `Host`, case-insensitively, else
// the default group, else self-scan), sends it there, and copies it to the mirrors.

import { generateKeypair } from '../../crypto/keypair.js';
import type { Handler } from '../../http/types.js';
import type { Logger } from '../../plugin-api/index.js';
import type { ProxyRuntimeConfig } from '../config.js';
import type { RelayRequest, RelayResponse, ScanRelay } from '../relay-types.js';
import type { HostPoolOptions } from '../upstreams/host-pool.js';
import { noBackend } from './errors.js';
import { GroupRelay } from './group-relay.js';
import { Mirrors, type CompareHook } from './mirrors.js';
import { SelfScanRelay } from './self-scan.js';

/** Longest `Host` value looked up, as Rspamd copies it (511 bytes). */
const MAX_HOST_KEY = 511;
/** Reply allowance beyond the message: the result JSON and headers of a scan reply. */
const REPLY_RESULT_ALLOWANCE = 16 * 1024 * 1024;

export interface ProxyRelayOptions {
  config: ProxyRuntimeConfig;
  log: Logger;
  /** The in-process scan route table; required when any group (or the worker) self-scans. */
  selfScan?: Handler;
  userAgent?: string;
  onCompare?: CompareHook;
  pool?: HostPoolOptions;
  random?: () => number;
  now?: () => number;
}

/** The proxy needs its own engine: the worker self-scans or some group does. */
export function needsSelfScan(cfg: ProxyRuntimeConfig): boolean {
  return cfg.selfScan || Object.values(cfg.upstreams).some((g) => g.selfScan);
}

export class ProxyRelay implements ScanRelay {
  readonly #byName = new Map<string, ScanRelay>();
  readonly #groups: GroupRelay[] = [];
  readonly #default: ScanRelay | undefined;
  readonly #mirrors: Mirrors;

  constructor(o: ProxyRelayOptions) {
    const cfg = o.config;
    // A reply holds the result and at most a rewritten copy of the message.
    const maxReplyBytes = cfg.maxMessage * 2 + REPLY_RESULT_ALLOWANCE;
    // One client keypair per process for encrypted legs: scanners cache the shared key per client key.
    const clientKeypair = cfg.keypair ?? (Object.values(cfg.upstreams).some((g) => g.key) || cfg.mirrors.some((m) => m.key) ? generateKeypair() : undefined);
    const userAgent = o.userAgent ?? 'mailsift-proxy';
    if (needsSelfScan(cfg) && !o.selfScan) throw new Error('the proxy self-scans but was given no scan handler');
    for (const [name, g] of Object.entries(cfg.upstreams)) {
      let relay: ScanRelay;
      if (g.selfScan) relay = new SelfScanRelay({ handler: o.selfScan!, settingsId: g.settingsId, maxReplyBytes });
      else {
        const gr = new GroupRelay({ group: g, maxRetries: cfg.maxRetries, failure: cfg.failure, maxReplyBytes, clientKeypair, userAgent, log: o.log, ...(o.pool ? { pool: o.pool } : {}), ...(o.now ? { now: o.now } : {}), ...(o.random ? { random: o.random } : {}) });
        this.#groups.push(gr);
        relay = gr;
      }
      this.#byName.set(name.toLowerCase(), relay);
    }
    if (cfg.defaultUpstream !== undefined) this.#default = this.#byName.get(cfg.defaultUpstream.toLowerCase());
    else if (cfg.selfScan) this.#default = new SelfScanRelay({ handler: o.selfScan!, maxReplyBytes });
    this.#mirrors = new Mirrors({ mirrors: cfg.mirrors, failure: cfg.failure, maxReplyBytes, clientKeypair, userAgent, log: o.log, ...(o.onCompare ? { onCompare: o.onCompare } : {}), ...(o.random ? { random: o.random } : {}) });
  }

  /** The upstream groups with hosts (for tests and statistics). */
  get groups(): readonly GroupRelay[] {
    return this.#groups;
  }

  #route(req: RelayRequest): ScanRelay | undefined {
    const r = req.route;
    if (r?.group !== undefined) return this.#byName.get(r.group.toLowerCase());
    if (r?.host !== undefined) {
      const hit = this.#byName.get(r.host.slice(0, MAX_HOST_KEY).toLowerCase());
      if (hit) return hit;
    }
    return this.#default;
  }

  relay(req: RelayRequest, signal?: AbortSignal): Promise<RelayResponse> {
    const target = this.#route(req);
    if (!target) return Promise.reject(noBackend());
    const master = target.relay(req, signal);
    // Only scans are copied: a /ping has nothing to compare.
    if (this.#mirrors.size > 0 && req.body.length > 0) this.#mirrors.copy(req, master);
    return master;
  }

  close(): void {
    for (const g of this.#groups) g.close();
    this.#mirrors.close();
  }
}
