// ioredis connections for the Redis stores: standalone, Sentinel or Cluster, set up to fail
// fast. A command issued while the server is unreachable is refused at once (no offline
// queue, no per-request retries) and becomes StoreError('STORE_UNAVAILABLE'); the connection
// keeps reconnecting in the background with a capped back-off, so the stores recover by
// themselves when Redis is back.

import { createHash } from 'node:crypto';
import type { Cluster, ClusterOptions, Redis } from 'ioredis';
import { ioredis } from './ioredis-lib.js';
import type { Logger } from '../../core/logger.js';
import { StoreError } from '../types.js';

export type RedisClient = Redis | Cluster;

/** Defaults chosen so a dead server costs a scan at most about a second. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 1000;
/** One call of a learn or the controller (Rspamd's Redis time-out is 1 s too). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1000;
/**
 * One store call made by a scan (a Bayes read, a greylist or rate-limit bucket, a fuzzy check):
 * a healthy Redis answers in about a millisecond, and a scan makes several such calls.
 */
export const DEFAULT_SCAN_TIMEOUT_MS = 300;
/** Longest pause between reconnection attempts; keeps recovery prompt once Redis is back. */
const MAX_RECONNECT_DELAY_MS = 2000;
/** Keys SCAN looks at per step: big enough to be quick, small enough not to stall the server. */
const SCAN_COUNT = 1000;
/** An outage is logged once per this period, not once per failed reconnection. */
const LOG_EVERY_MS = 30_000;

export interface RedisConnectionConfig {
  servers: string[];
  sentinels: string[];
  name?: string;
  cluster: boolean;
  db: number;
  username?: string;
  password?: string;
  prefix: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** Bound on one store call made by a scan (the scan view's calls). */
  scanTimeoutMs: number;
}

function hostPort(s: string, defPort: number): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s);
  if (!m) return { host: s, port: defPort };
  return { host: m[1] as string, port: m[2] ? Number(m[2]) : defPort };
}

const REDIS_PORT = 6379;
const SENTINEL_PORT = 26379;

// Reply errors that mean "cannot serve now" (loading, failover, cluster resharding), as opposed
// to a command the server rejected.
const TRANSIENT_REPLY = /^(LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|NOREPLICAS|MOVED|ASK)\b/;

/**
 * ioredis's message, except when its parser met something that is not RESP (an HTTP server, SSH
 * or TLS on that port): ioredis then asks the reader to report a bug, which misleads an operator.
 */
export function plainRedisMessage(raw: string): string {
  if (!/^(Unknown RESP type|Protocol error)/.test(raw)) return raw;
  return `the server at this address does not speak Redis (${raw.replace(/\.? ?Please report this\.?$/, '')})`;
}

/** Turns an ioredis error into a StoreError. */
export function redisError(err: unknown, what: string): StoreError {
  if (err instanceof StoreError) return err;
  const e = err as { name?: unknown; message?: unknown };
  const msg = plainRedisMessage(typeof e.message === 'string' ? e.message : String(err));
  const failed = e.name === 'ReplyError' && !TRANSIENT_REPLY.test(msg);
  return new StoreError(failed ? 'STORE_FAILED' : 'STORE_UNAVAILABLE', `redis ${what}: ${msg}`, { cause: err });
}

/** Awaits a Redis call, turning its errors into StoreErrors. */
export async function call<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw redisError(err, what);
  }
}

function outageLogger(log: Logger, label: string): (err: Error) => void {
  let last = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < LOG_EVERY_MS) return;
    last = now;
    log.warn('redis store unreachable', { redis: label, error: plainRedisMessage(err.message) });
  };
}

/** Creates the client; it connects in the background (see waitReady). */
export function createRedisClient(cfg: RedisConnectionConfig, log: Logger, label: string): RedisClient {
  const common = {
    connectTimeout: cfg.connectTimeoutMs,
    // A backstop for calls outside the guard (exports, SCANs, its PING): store calls are bounded
    // by the guard, which gives a call held up by a blocked event loop its time twice at most.
    commandTimeout: 2 * cfg.commandTimeoutMs,
    maxRetriesPerRequest: 0,
    // Promise.all over single commands leaves as one write per node: one round trip.
    enableAutoPipelining: true,
    ...(cfg.username ? { username: cfg.username } : {}),
    ...(cfg.password ? { password: cfg.password } : {}),
  };
  const retry = (times: number): number => Math.min(times * 100, MAX_RECONNECT_DELAY_MS);
  let client: RedisClient;
  if (cfg.cluster) {
    const opts: ClusterOptions = {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      maxRedirections: 4,
      slotsRefreshTimeout: cfg.connectTimeoutMs,
      clusterRetryStrategy: retry,
      redisOptions: { ...common, maxRetriesPerRequest: 0 },
    };
    client = new (ioredis().Cluster)(
      cfg.servers.map((s) => hostPort(s, REDIS_PORT)),
      opts,
    );
  } else if (cfg.sentinels.length > 0) {
    client = new (ioredis().Redis)({
      ...common,
      enableOfflineQueue: false,
      sentinels: cfg.sentinels.map((s) => hostPort(s, SENTINEL_PORT)),
      name: cfg.name ?? 'mymaster',
      db: cfg.db,
      retryStrategy: retry,
      sentinelRetryStrategy: retry,
    });
  } else {
    const { host, port } = hostPort(cfg.servers[0] ?? '127.0.0.1', REDIS_PORT);
    client = new (ioredis().Redis)({ ...common, enableOfflineQueue: false, host, port, db: cfg.db, retryStrategy: retry });
  }
  // Without a listener an 'error' event would crash the process.
  client.on('error', outageLogger(log, label));
  return client;
}

/** Resolves true once the client is ready, false after `timeoutMs` (it keeps trying behind). */
export function waitReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = (): void => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    client.on('ready', onReady);
  });
}

export async function closeClient(client: RedisClient): Promise<void> {
  try {
    await client.quit();
  } catch {
    client.disconnect(); // quit needs a live connection; a dead one is just dropped
  }
}

/** A Lua script run by EVALSHA, loaded with EVAL on the first NOSCRIPT. */
export class RedisScript {
  readonly #lua: string;
  readonly #sha: string;

  constructor(lua: string) {
    this.#lua = lua;
    this.#sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(client: RedisClient, keys: string[], args: (string | number | Buffer)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.#sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return await client.eval(this.#lua, keys.length, ...keys, ...args);
    }
  }
}

/** Keys matching `pattern`, a SCAN page at a time, on every master (a Cluster spreads keys over several). */
export async function* scanBatches(client: RedisClient, pattern: string): AsyncIterable<string[]> {
  const nodes: Redis[] = client instanceof ioredis().Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await call('scan', node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}

/** Keys matching `pattern`, at most `limit`. */
export async function scanKeys(client: RedisClient, pattern: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  for await (const keys of scanBatches(client, pattern)) {
    for (const k of keys) {
      out.push(k);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** Escapes glob metacharacters so a prefix matches literally in SCAN MATCH. */
export function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
