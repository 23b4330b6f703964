// The `stores:` section of mailsift.yaml. The stores own its shape, as the proxy and the fuzzy
// worker own theirs; config/schema.ts puts it into the whole file's schema.

import { z } from 'zod';
import { isServerAddress } from '../core/config-values.js';
import { Duration } from '../core/value-schemas.js';

// Stores: `backend` picks SQLite or Redis for every store; `bayes`, `fuzzy`,
// `history` and `kv` may each override the back end and its connection settings.
const MAX_STORE_TIMEOUT_S = 60; // a store call waiting longer than this stalls scans; it is a typo
const StoreBackend = z.enum(['sqlite', 'redis']);
const SqliteStore = z.strictObject({
  /** The database file; relative paths are taken from data_dir. */
  path: z.string().min(1).optional(),
  /** How long a writer waits for another process's write lock. */
  busy_timeout: Duration.pipe(z.number().max(MAX_STORE_TIMEOUT_S)).optional(),
  /** `full` (default; `normal` for history) syncs the WAL on every commit, durable before a write resolves; `normal` may lose the last commits on power loss. */
  synchronous: z.enum(['full', 'normal']).optional(),
});
const ServerList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .pipe(z.array(z.string().refine(isServerAddress, 'an address "host", "host:port" or "[v6]:port"')).min(1));
const RedisStore = z.strictObject({
  /** `host:port` of a standalone server, or the seed nodes of a Cluster. */
  servers: ServerList.optional(),
  /** `host:port` of Sentinels; `name` is the monitored master. */
  sentinels: ServerList.optional(),
  name: z.string().min(1).optional(),
  cluster: z.boolean().optional(),
  db: z.int().min(0).max(255).optional(),
  username: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  /** Prepended to every key, so several installations can share one Redis. */
  prefix: z.string().optional(),
  connect_timeout: Duration.pipe(z.number().max(MAX_STORE_TIMEOUT_S)).optional(),
  /** Bound on one call of a learn or the controller (default 1 s). */
  command_timeout: Duration.pipe(z.number().max(MAX_STORE_TIMEOUT_S)).optional(),
  /** Bound on one store call made by a scan (default 0.3 s); past it the check degrades as when Redis is down. */
  scan_timeout: Duration.pipe(z.number().positive().max(MAX_STORE_TIMEOUT_S)).optional(),
});
const StoreOverride = z.strictObject({
  backend: StoreBackend.optional(),
  sqlite: SqliteStore.optional(),
  redis: RedisStore.optional(),
});
type RedisStoreValue = z.output<typeof RedisStore>;
const STORE_KEYS = ['bayes', 'fuzzy', 'history', 'kv'] as const;
type StoreKey = (typeof STORE_KEYS)[number];

/**
 * Redis settings that cannot work together, judged on what each store really gets (the global
 * section with the store's own over it): the client would otherwise quietly use the first
 * server only, or ignore the Sentinels.
 */
function redisConflicts(sc: { backend: string; redis: RedisStoreValue } & Record<StoreKey, { backend?: string | undefined; redis?: RedisStoreValue | undefined }>, ctx: z.RefinementCtx): void {
  const reported = new Set<string>();
  const report = (path: (string | number)[], message: string): void => {
    const id = path.join('.');
    if (reported.has(id)) return;
    reported.add(id);
    ctx.addIssue({ code: 'custom', path, message });
  };
  for (const name of STORE_KEYS) {
    const own = sc[name];
    if ((own.backend ?? sc.backend) !== 'redis') continue;
    const eff = { ...sc.redis, ...own.redis };
    const at = (key: keyof RedisStoreValue): (string | number)[] => (own.redis?.[key] !== undefined ? [name, 'redis', key] : ['redis', key]);
    if (eff.cluster && eff.sentinels) report(at('sentinels'), 'no sentinels with cluster: true (a Cluster finds its nodes from servers)');
    else if (!eff.cluster && (eff.servers?.length ?? 0) > 1) report(at('servers'), 'one server (several are the seed nodes of a Cluster: set cluster: true; Sentinels go in sentinels)');
    if (eff.cluster && (eff.db ?? 0) !== 0) report(at('db'), 'db 0 with cluster: true (a Cluster has only db 0)');
  }
}

export const StoresSection = z.strictObject({
  backend: StoreBackend.default('sqlite'),
  sqlite: SqliteStore.default({}),
  redis: RedisStore.default({}),
  /** `learn_cache`: learn-cache entries kept per classifier and user (the most recent learns; default 60 000, as Rspamd's 6 × 10 000). */
  /**
   * `memory_tokens` (SQLite only): token counts each process may hold in memory for its scans,
   * kept current from the learn log (default 1 000 000, 24–48 bytes each; 0 reads SQLite on every scan).
   */
  bayes: StoreOverride.extend({ learn_cache: z.int().positive().optional(), memory_tokens: z.int().min(0).max(100_000_000).optional() }).default({}),
  /** `expire`: lifetime of a fuzzy hash not added or refreshed again (Rspamd's default is 2 days). */
  fuzzy: StoreOverride.extend({ expire: Duration.default(172800) }).prefault({}),
  history: StoreOverride.default({}),
  kv: StoreOverride.default({}),
}).superRefine(redisConflicts);
export type StoresConfigValue = z.output<typeof StoresSection>;
