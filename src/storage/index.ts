// openStores: builds the four stores from the `stores:` config section. Each store takes the
// global back end and connection settings, overridden by its own sub-section. Stores on the same
// SQLite file share one connection; stores with the same Redis settings share one client.
//
// A Redis that is down does not stop the opening: openStores waits at most the connect timeout,
// logs, and returns stores whose calls fail fast with STORE_UNAVAILABLE until Redis answers.
// A Redis that hangs is bounded the same way: `stores.scan` is the view scans use, each call
// bounded by the short scan time-out; the stores themselves (learns, the controller) are bounded
// by the command time-out; and once a call went unanswered, calls fail at once until Redis
// answers again (redis/guard.ts).

import type { Logger } from '../core/logger.js';
import type { StoresConfigValue } from './config-schema.js';
import { StoreError, type BayesStore, type FuzzyStore, type HistoryStore, type KvStore, type Stores } from './types.js';
import { DEFAULT_MEMORY_TOKENS, SqliteBayesStore } from './sqlite/bayes.js';
import { DEFAULT_LEARN_CACHE_SIZE } from './tokens.js';
import { SqliteFuzzyStore } from './sqlite/fuzzy.js';
import { SqliteHistoryStore } from './sqlite/history.js';
import { SqliteKvStore } from './sqlite/kv.js';
import type { SqliteOptions } from './sqlite/db.js';
import { DEFAULT_BUSY_TIMEOUT_MS } from './sqlite/db.js';
import { sqliteFileProblem, sqliteFix, sqliteLocation, type SqliteLocation, type StoreName } from './sqlite/location.js';
import { RedisBayesStore } from './redis/bayes.js';
import { RedisFuzzyStore } from './redis/fuzzy.js';
import { RedisHistoryStore } from './redis/history.js';
import { RedisKvStore } from './redis/kv.js';
import {
  closeClient,
  createRedisClient,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_SCAN_TIMEOUT_MS,
  waitReady,
  plainRedisMessage,
  type RedisClient,
  type RedisConnectionConfig,
} from './redis/client.js';
import { RedisGuard, type RedisLink } from './redis/guard.js';

export * from './types.js';
export type { RedisConnectionConfig } from './redis/client.js';

export { DEFAULT_SQLITE_FILE } from './sqlite/location.js';
/** History rows kept when the controller does not say (Rspamd's history_rows default). */
export const DEFAULT_HISTORY_ROWS = 200;
/** Key prefix in Redis when `stores.redis.prefix` is not set. */
export const DEFAULT_REDIS_PREFIX = 'mailsift:';

/** What openStores reads; a LoadedConfig (src/config/load.ts) fits. */
export interface OpenStoresConfig {
  dataDir: string;
  stores?: StoresConfigValue;
  workers?: { controller?: { historyRows?: number } };
}

/** The section's defaults (same as an empty `stores:` in mailsift.yaml), for callers without one. */
const DEFAULT_STORES: StoresConfigValue = {
  backend: 'sqlite',
  sqlite: {},
  redis: {},
  bayes: {},
  fuzzy: { expire: 172800 },
  history: {},
  kv: {},
};

type SqliteSection = StoresConfigValue['sqlite'];
type RedisSection = StoresConfigValue['redis'];

/**
 * History rows are written after every scan and are only a view of recent traffic, so their
 * connection does not fsync each commit (synchronous=NORMAL: safe against a process crash, may
 * lose the newest rows on power loss) unless `stores.history.sqlite.synchronous` says otherwise;
 * an fsync per scan would block the event loop for milliseconds on every message.
 */
const HISTORY_SYNCHRONOUS: SqliteSection['synchronous'] = 'normal';

function sqliteOptions(path: string, s: SqliteSection): SqliteOptions {
  return {
    path,
    busyTimeoutMs: s.busy_timeout !== undefined ? s.busy_timeout * 1000 : DEFAULT_BUSY_TIMEOUT_MS,
    synchronous: s.synchronous ?? 'full',
  };
}

function redisConfig(r: RedisSection): RedisConnectionConfig {
  return {
    servers: r.servers ?? ['127.0.0.1:6379'],
    sentinels: r.sentinels ?? [],
    ...(r.name !== undefined ? { name: r.name } : {}),
    cluster: r.cluster ?? false,
    db: r.db ?? 0,
    ...(r.username !== undefined ? { username: r.username } : {}),
    ...(r.password !== undefined ? { password: r.password } : {}),
    prefix: r.prefix ?? DEFAULT_REDIS_PREFIX,
    connectTimeoutMs: r.connect_timeout !== undefined ? r.connect_timeout * 1000 : DEFAULT_CONNECT_TIMEOUT_MS,
    commandTimeoutMs: r.command_timeout !== undefined ? r.command_timeout * 1000 : DEFAULT_COMMAND_TIMEOUT_MS,
    scanTimeoutMs: r.scan_timeout !== undefined ? r.scan_timeout * 1000 : DEFAULT_SCAN_TIMEOUT_MS,
  };
}

/** A store and the view of it scans use (the same object for SQLite, whose calls do not wait on a peer). */
interface Opened<T> { store: T; scan: T }

/** One shared connection: its settings, and the stores and config sections that use it (for messages). */
interface PooledClient {
  client: RedisClient;
  /** Time-outs and memory of a server that stopped answering, for every store on this connection. */
  guard: RedisGuard;
  cfg: RedisConnectionConfig;
  refs: number;
  stores: string[];
  keys: Set<string>;
}

/** Where a connection goes, as an administrator wrote it: `host:port`, or the Sentinels and master name. */
function redisTarget(cfg: RedisConnectionConfig): string {
  if (cfg.cluster) return `cluster ${cfg.servers.join(', ')}`;
  if (cfg.sentinels.length > 0) return `master "${cfg.name ?? 'mymaster'}" via sentinels ${cfg.sentinels.join(', ')}`;
  return `${cfg.servers[0] ?? '127.0.0.1'} db ${cfg.db}`;
}

/** Shared Redis clients, closed when the last store using one closes. */
class RedisPool {
  readonly #clients = new Map<string, PooledClient>();
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  /**
   * The connection for `cfg`, with a link for each of its two time-outs (command, scan). `key`:
   * the config section the settings came from (`stores.redis`, `stores.bayes.redis`).
   */
  acquire(cfg: RedisConnectionConfig, label: string, key: string): { link: RedisLink; scanLink: RedisLink; release: () => Promise<void> } {
    // The prefix does not change the connection, nor does the time-out of a view of it.
    const id = JSON.stringify({ ...cfg, prefix: '', scanTimeoutMs: 0 });
    let entry = this.#clients.get(id);
    if (!entry) {
      const client = createRedisClient(cfg, this.#log, label);
      // Named by where it goes: several stores may share it.
      entry = { client, guard: new RedisGuard(client, this.#log, redisTarget(cfg)), cfg, refs: 0, stores: [], keys: new Set() };
      this.#clients.set(id, entry);
    }
    entry.refs++;
    entry.stores.push(label);
    entry.keys.add(key);
    const e = entry;
    let released = false;
    return {
      link: e.guard.link(cfg.commandTimeoutMs),
      scanLink: e.guard.link(cfg.scanTimeoutMs),
      release: async () => {
        if (released) return;
        released = true;
        if (--e.refs === 0) {
          this.#clients.delete(id);
          e.guard.close();
          await closeClient(e.client);
        }
      },
    };
  }

  connections(): PooledClient[] {
    return [...this.#clients.values()];
  }
}

/**
 * A database that cannot be opened, named with its path and the config key that chose it (SQLite
 * alone says "unable to open database file"), and what is wrong with the path when that can be told.
 */
function sqliteOpenError(err: unknown, loc: SqliteLocation): StoreError {
  const cause = err instanceof StoreError && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
  const problem = sqliteFileProblem(loc.path);
  const code = err instanceof StoreError ? err.code : 'STORE_UNAVAILABLE';
  return new StoreError(code, `${loc.key}: cannot open the SQLite store ${loc.path}: ${cause}${problem ? ` (${problem})` : ''}; ${sqliteFix(loc)}`, { cause: err });
}

/**
 * Waits for a connection; one that is not ready in time is logged with where it goes, which
 * config section says so, and the last error (a wrong address, password or db is a config
 * mistake the administrator must be able to see, not only "not reachable").
 */
async function waitOrWarn(c: PooledClient, timeoutMs: number, log: Logger): Promise<void> {
  let last: string | undefined;
  const onError = (err: Error): void => {
    last = plainRedisMessage(err.message);
  };
  c.client.on('error', onError);
  try {
    if (await waitReady(c.client, timeoutMs)) return;
  } finally {
    c.client.off('error', onError);
  }
  const keys = [...c.keys].join(', ');
  log.warn(`redis store not reachable yet at ${redisTarget(c.cfg)} (${keys} in mailsift.yaml): ${last ?? `no answer within ${timeoutMs} ms`}; its calls fail with STORE_UNAVAILABLE until it answers`, {
    stores: c.stores.join(','),
    config: keys,
    ...(last !== undefined ? { error: last } : {}),
  });
}

/** What one process needs of its stores beyond the configuration. */
export interface OpenStoresOptions {
  /**
   * Hold the Bayes token counts in memory (SQLite only; `stores.bayes.memory_tokens`). Off for a
   * process that classifies rarely (the controller: learn conditions, the web UI's scans), which
   * then reads SQLite for each message instead of keeping a table as large as a scan worker's.
   */
  bayesMemory?: boolean;
}

/** Opens every store. Never throws because Redis is down; SQLite errors (bad path) do throw. */
export async function openStores(cfg: OpenStoresConfig, log: Logger, opts: OpenStoresOptions = {}): Promise<Stores> {
  const sc = cfg.stores ?? DEFAULT_STORES;
  const historyRows = cfg.workers?.controller?.historyRows ?? DEFAULT_HISTORY_ROWS;
  const pool = new RedisPool(log);
  const opened: { close(): Promise<void> }[] = [];
  const connectTimeouts: number[] = [];

  /** `redis` is called twice: the store (owning the connection) and its scan view (owning nothing). */
  const build = <T extends { close(): Promise<void> }>(
    name: StoreName,
    sqlite: (o: SqliteOptions) => T,
    redis: (link: RedisLink, prefix: string, release: () => Promise<void>) => T,
  ): Opened<T> => {
    const o = sc[name];
    let out: Opened<T>;
    const loc = sqliteLocation(cfg.dataDir, sc, name);
    if (loc) {
      const own: SqliteSection = name === 'history' ? { synchronous: HISTORY_SYNCHRONOUS, ...o.sqlite } : { ...o.sqlite };
      let store: T;
      try {
        store = sqlite(sqliteOptions(loc.path, { ...sc.sqlite, ...own }));
      } catch (err) {
        throw sqliteOpenError(err, loc);
      }
      out = { store, scan: store };
    } else {
      const rc = redisConfig({ ...sc.redis, ...o.redis });
      const { link, scanLink, release } = pool.acquire(rc, name, o.redis ? `stores.${name}.redis` : 'stores.redis');
      connectTimeouts.push(rc.connectTimeoutMs);
      out = { store: redis(link, rc.prefix, release), scan: redis(scanLink, rc.prefix, async () => undefined) };
    }
    opened.push(out.store);
    return out;
  };

  try {
    const learnCacheSize = sc.bayes.learn_cache ?? DEFAULT_LEARN_CACHE_SIZE;
    const bayes = build<BayesStore>(
      'bayes',
      (o) => new SqliteBayesStore({ ...o, learnCacheSize, memoryTokens: opts.bayesMemory === false ? 0 : (sc.bayes.memory_tokens ?? DEFAULT_MEMORY_TOKENS), log }),
      (c, p, r) => new RedisBayesStore(c, p, r, { learnCacheSize }),
    );
    const fuzzy = build<FuzzyStore>(
      'fuzzy',
      (o) => new SqliteFuzzyStore(o, sc.fuzzy.expire),
      (c, p, r) => new RedisFuzzyStore(c, p, sc.fuzzy.expire, r),
    );
    const history = build<HistoryStore>(
      'history',
      (o) => new SqliteHistoryStore(o, historyRows),
      (c, p, r) => new RedisHistoryStore(c, p, historyRows, r),
    );
    const kv = build<KvStore>('kv', (o) => new SqliteKvStore(o), (c, p, r) => new RedisKvStore(c, p, r));

    const timeout = Math.max(0, ...connectTimeouts);
    await Promise.all(pool.connections().map((c) => waitOrWarn(c, timeout, log)));
    let closed = false;
    return {
      bayes: bayes.store,
      fuzzy: fuzzy.store,
      history: history.store,
      kv: kv.store,
      // The views own nothing: closing the stores closes their connections.
      scan: { bayes: bayes.scan, fuzzy: fuzzy.scan, history: history.scan, kv: kv.scan, close: async () => undefined },
      async close() {
        if (closed) return;
        closed = true;
        await Promise.all(opened.map((s) => s.close()));
      },
    };
  } catch (err) {
    await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
    throw err;
  }
}
