// ratelimit: leaky buckets keyed by recipient, sender, IP or user on the
// key-value store. Checked as a prefilter (an overflowing bucket forces `soft reject` with
// "Ratelimit exceeded"), filled after the verdict in an idempotent symbol, so a message the
// server refuses does not count against its sender.

import { defineModule } from '../../plugin-api/index.js';
import type { CompiledSelector, KvStore, MapHandle, SymbolDef, Task } from '../../plugin-api/index.js';
import { isBuiltinSelector, RatelimitConfig } from './config.js';
import type { BucketConfig } from './config.js';
import { addToBucket, leaked, readBucket } from './bucket.js';
import { hashKey, selectorParts, selectorValueParts } from './keys.js';
import { kvOrDisable, networksMap } from '../../module-helpers/policy-setup.js';
import { storeOutageLog, type StoreOutage } from '../../module-helpers/outage-log.js';

export const RATELIMIT_SYMBOLS: Record<string, SymbolDef> = {
  RATELIMITED: { score: 0, group: 'ratelimit', description: 'A rate limit bucket overflowed' },
  RATELIMIT_CHECK: { score: 0, group: 'ratelimit', description: 'Rate limit buckets checked' },
};

const CACHE_KEY = 'ratelimit';

/** Buckets of a task, found by the check and filled by the update. */
interface Planned {
  name: string;
  key: string;
  bucket: BucketConfig['bucket'];
}

/** Buckets keyed by a full selector, compiled at load (bucket name → selector). */
type BucketSelectors = ReadonlyMap<string, CompiledSelector>;

function plan(task: Task, cfg: RatelimitConfig, whitelistIp: MapHandle | undefined, selectors: BucketSelectors): Planned[] {
  if (task.meta.ip && whitelistIp?.has(task.meta.ip)) return [];
  if (task.meta.user && cfg.whitelisted_user.includes(task.meta.user)) return [];
  const white = new Set(cfg.whitelisted_rcpts.map((r) => r.toLowerCase()));
  const rcpts = task.envelopeRcpt
    .map((r) => r.address.toLowerCase())
    .filter((r) => r !== '' && !white.has(r) && !white.has(r.slice(0, r.lastIndexOf('@'))));
  // Mail only to whitelisted recipients (postmaster, bounces to mailer-daemon) is never limited.
  if (task.envelopeRcpt.length > 0 && rcpts.length === 0) return [];
  const out: Planned[] = [];
  for (const [name, b] of Object.entries(cfg.rates)) {
    const compiled = selectors.get(name);
    const keyed = compiled ? selectorValueParts(task, compiled) : isBuiltinSelector(b.selector) ? selectorParts(task, b.selector, rcpts) : [];
    for (const parts of keyed) {
      out.push({ name, key: hashKey(cfg.prefix, name, parts), bucket: b.bucket });
    }
  }
  return out;
}

async function check(task: Task, cfg: RatelimitConfig, kv: KvStore, whitelistIp: MapHandle | undefined, outage: StoreOutage, selectors: BucketSelectors): Promise<void> {
  const planned = plan(task, cfg, whitelistIp, selectors);
  task.cache.set(CACHE_KEY, planned);
  const now = Date.now();
  for (const p of planned) {
    let level: number;
    try {
      level = leaked(await readBucket(kv, p.key), p.bucket.rate, now);
    } catch (e) {
      // A store that is down lets mail through: a scan never fails on it.
      outage(task, `bucket ${p.name} not checked`, e);
      return;
    }
    if (level + 1 <= p.bucket.burst) continue;
    const info = cfg.rates[p.name]?.info_symbol;
    if (info) {
      task.insert(info, 1, [p.name]);
      continue;
    }
    task.insert(cfg.symbol, 1, [p.name]);
    task.setPreResult({ action: cfg.action, message: cfg.message, module: 'ratelimit' });
    return;
  }
}

async function update(task: Task, cfg: RatelimitConfig, kv: KvStore, outage: StoreOutage): Promise<void> {
  const planned = task.cache.get(CACHE_KEY) as Planned[] | undefined;
  if (!planned || planned.length === 0) return;
  const action = task.verdict().action;
  if (action === 'reject' || action === 'soft reject') return;
  const now = Date.now();
  const ttl = cfg.expire * 1000;
  try {
    await Promise.all(planned.map((p) => addToBucket(kv, p.key, p.bucket.rate, now, ttl)));
  } catch (e) {
    outage(task, 'buckets not updated', e);
  }
}

export const ratelimitModule = defineModule<RatelimitConfig>({
  name: 'ratelimit',
  config: RatelimitConfig,
  symbols: RATELIMIT_SYMBOLS,
  async setup(ctx) {
    const cfg = ctx.config;
    if (Object.keys(cfg.rates).length === 0) {
      ctx.disable('config');
      return;
    }
    const selectors = new Map<string, CompiledSelector>();
    for (const [name, b] of Object.entries(cfg.rates)) {
      if (isBuiltinSelector(b.selector)) continue;
      try {
        selectors.set(name, ctx.selector(b.selector));
      } catch (e) {
        // The bucket is dropped, the others still work; configtest lists the error.
        ctx.log.error('ratelimit: invalid selector; bucket skipped', { bucket: name, selector: b.selector, error: (e as Error).message });
      }
    }
    const kv = kvOrDisable(ctx, 'ratelimit');
    if (!kv) return;
    const whitelistIp = await networksMap(ctx, cfg.whitelisted_ip, 'ratelimit whitelisted_ip');
    const outage = storeOutageLog(ctx.log, 'ratelimit');
    const infos = Object.values(cfg.rates).flatMap((b) => (b.info_symbol ? [b.info_symbol] : []));
    ctx.symbol({
      name: 'RATELIMIT_CHECK',
      stage: 'prefilters',
      priority: 5,
      flags: ['coro', 'nostat'],
      inserts: [cfg.symbol, ...infos],
      check: (task) => check(task, cfg, kv, whitelistIp, outage, selectors),
    });
    ctx.symbol({
      name: 'RATELIMIT_UPDATE',
      stage: 'idempotent',
      flags: ['coro', 'nostat', 'ignore_passthrough'],
      check: (task) => update(task, cfg, kv, outage),
    });
  },
});
