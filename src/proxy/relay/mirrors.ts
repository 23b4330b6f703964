// Mirrors: copies of a session's request sent fire-and-forget to
// other scanners, for trying a new configuration on live traffic. One coin per session decides
// for every mirror at once (a mirror gets the copy when coin < its probability, so mirrors with
// equal probabilities are hit or skipped together). A copy is never retried and never touches
// the client's reply; when both answers are in, the compare hook sees them (by default: an info
// line when the mirror's action differs from the master's).

import type { KexKeypair } from '../../crypto/keypair.js';
import type { Logger } from '../../plugin-api/index.js';
import { decodeReply } from '../../client/reply.js';
import type { MirrorConfig } from '../config.js';
import type { RelayRequest, RelayResponse } from '../relay-types.js';
import { AttemptError, HostPool } from '../upstreams/host-pool.js';
import { UpstreamSet, type FailureLimits, type UpstreamHost } from '../upstreams/upstream-set.js';
import { sendLeg } from './leg.js';

/**
 * Copies in flight per mirror: a mirror that hangs must not pile up sockets and memory behind
 * the live traffic; past this, sessions skip that mirror until copies finish.
 */
export const MAX_MIRROR_IN_FLIGHT = 64;

/** What the compare hook learns of one answer: the parsed result, or why there is none. */
export type MirrorOutcome = { ok: true; action: string | undefined; score: number | undefined; upstream: string } | { ok: false; error: string };

export interface MirrorComparison {
  mirror: string;
  master: MirrorOutcome;
  copy: MirrorOutcome;
  /** The request's Queue-Id or Message-ID, to find the message in the logs. */
  tag?: string;
}

export type CompareHook = (c: MirrorComparison) => void;

export function logActionDifference(log: Logger): CompareHook {
  return (c) => {
    if (!c.master.ok || !c.copy.ok || c.master.action === c.copy.action) return;
    log.info(`mirror ${c.mirror} action "${c.copy.action ?? 'none'}" differs from the master's "${c.master.action ?? 'none'}"`, {
      mirror: c.mirror,
      masterAction: c.master.action,
      mirrorAction: c.copy.action,
      masterScore: c.master.score,
      mirrorScore: c.copy.score,
      master: c.master.upstream,
      mirrorUpstream: c.copy.upstream,
      ...(c.tag !== undefined ? { tag: c.tag } : {}),
    });
  };
}

/** The result's action and score from any reply shape a scanner sends (JSON, msgpack, v3 multipart, body block). */
export function outcomeOf(res: RelayResponse): MirrorOutcome {
  if (res.status < 200 || res.status > 299) return { ok: false, error: `HTTP ${res.status} ${res.reason}` };
  const headers: Record<string, string> = {};
  for (const [k, v] of res.headers) headers[k.toLowerCase()] ??= v;
  try {
    const r = decodeReply(res.status, headers, res.body).result;
    return { ok: true, action: typeof r.action === 'string' ? r.action : undefined, score: typeof r.score === 'number' ? r.score : undefined, upstream: res.upstream };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

interface MirrorTarget {
  cfg: MirrorConfig;
  set: UpstreamSet;
  pools: Map<UpstreamHost, HostPool>;
  inFlight: number;
}

export interface MirrorsOptions {
  mirrors: readonly MirrorConfig[];
  failure: FailureLimits;
  maxReplyBytes: number;
  clientKeypair?: KexKeypair | undefined;
  userAgent: string;
  log: Logger;
  onCompare?: CompareHook;
  random?: () => number;
}

export class Mirrors {
  readonly #o: MirrorsOptions;
  readonly #targets: MirrorTarget[];
  readonly #random: () => number;
  readonly #compare: CompareHook;

  constructor(o: MirrorsOptions) {
    this.#o = o;
    this.#random = o.random ?? Math.random;
    this.#compare = o.onCompare ?? logActionDifference(o.log);
    this.#targets = o.mirrors.map((cfg) => {
      const set = new UpstreamSet(cfg.hosts, {
        rotation: cfg.rotation,
        limits: o.failure,
        events: {
          down: (h, n) => o.log.warn(`mirror ${cfg.name} host ${h.name} is down after ${n} failures`, { mirror: cfg.name, upstream: h.name }),
          revived: (h) => o.log.info(`mirror ${cfg.name} host ${h.name} is back in rotation`, { mirror: cfg.name, upstream: h.name }),
        },
      });
      return { cfg, set, pools: new Map(set.hosts.map((h) => [h, new HostPool(h.spec)])), inFlight: 0 };
    });
  }

  get size(): number {
    return this.#targets.length;
  }

  /** Sends the session's copies (if the coin says so); returns at once, never throws. */
  copy(req: RelayRequest, master: Promise<RelayResponse>): void {
    if (this.#targets.length === 0) return;
    const coin = this.#random();
    for (const t of this.#targets) {
      if (!(coin < t.cfg.probability)) continue;
      if (t.inFlight >= MAX_MIRROR_IN_FLIGHT) {
        this.#o.log.debug(`mirror ${t.cfg.name} skipped: ${MAX_MIRROR_IN_FLIGHT} copies still in flight`, { mirror: t.cfg.name });
        continue;
      }
      t.inFlight++;
      void this.#one(t, req, master).finally(() => t.inFlight--);
    }
  }

  async #one(t: MirrorTarget, req: RelayRequest, master: Promise<RelayResponse>): Promise<void> {
    let copy: MirrorOutcome;
    const host = t.set.pick(req.route?.clientAddress);
    if (!host) copy = { ok: false, error: 'no host up' };
    else {
      try {
        const res = await sendLeg(req, {
          pool: t.pools.get(host)!,
          timeoutMs: t.cfg.timeoutMs,
          keepalive: t.cfg.keepalive,
          compression: t.cfg.compression,
          settingsId: t.cfg.settingsId,
          key: t.cfg.key?.bytes,
          clientKeypair: this.#o.clientKeypair,
          userAgent: this.#o.userAgent,
          maxReplyBytes: this.#o.maxReplyBytes,
        });
        t.set.ok(host);
        copy = outcomeOf(res);
      } catch (err) {
        if (err instanceof AttemptError) t.set.fail(host, err.message);
        this.#o.log.debug(`mirror ${t.cfg.name} copy failed: ${(err as Error).message}`, { mirror: t.cfg.name, upstream: host.name });
        copy = { ok: false, error: (err as Error).message };
      }
    }
    let masterOutcome: MirrorOutcome;
    try {
      masterOutcome = outcomeOf(await master);
    } catch (err) {
      masterOutcome = { ok: false, error: (err as Error).message };
    }
    const tag = tagOf(req);
    try {
      this.#compare({ mirror: t.cfg.name, master: masterOutcome, copy, ...(tag !== undefined ? { tag } : {}) });
    } catch (err) {
      this.#o.log.error(`mirror compare hook failed: ${(err as Error).message}`, { mirror: t.cfg.name });
    }
  }

  close(): void {
    for (const t of this.#targets) for (const p of t.pools.values()) p.close();
  }
}

function tagOf(req: RelayRequest): string | undefined {
  for (const [k, v] of req.headers) if (k.toLowerCase() === 'queue-id') return v;
  return undefined;
}
