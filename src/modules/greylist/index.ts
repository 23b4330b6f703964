// greylist: a message scoring at least the greylist threshold from a sender
// not seen before is refused temporarily ("Try again later"); a retry after `timeout` and
// before `expire` passes. GREYLIST_CHECK (prefilter) reads the stored first-seen times;
// GREYLIST_SAVE (postfilter, once the score is known) records new triplets and forces the action.
// Results: GREYLIST_NEW (first attempt), GREYLIST (too early), GREYLIST_PASS (delay over).

import { getDomain } from 'tldts';
import { defineModule } from '../../plugin-api/index.js';
import type { KvStore, MapHandle, SymbolDef, Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import { GreylistConfig } from './config.js';
import { greylistKeys } from './keys.js';
import type { GreylistKeys } from './keys.js';
import { kvOrDisable, networksMap } from '../../module-helpers/policy-setup.js';
import { storeOutageLog, type StoreOutage } from '../../module-helpers/outage-log.js';

export const GREYLIST_SYMBOLS: Record<string, SymbolDef> = {
  GREYLIST_NEW: { score: 0, group: 'greylist', description: 'Message greylisted: first delivery attempt of this triplet' },
  GREYLIST: { score: 0, group: 'greylist', description: 'Message greylisted: retried before the greylisting delay ended' },
  GREYLIST_CHECK: { score: 0, group: 'greylist', description: 'Greylisting state read' },
  GREYLIST_PASS: { score: 0, group: 'greylist', description: 'Retried after the greylisting delay: passed' },
  GREYLIST_SAVE: { score: 0, group: 'greylist', description: 'Greylisting state saved' },
};

const CACHE_KEY = 'greylist';

interface Seen {
  keys: GreylistKeys;
  /** Earliest first-seen time (ms) of either key, if any was stored. */
  firstSeen?: number;
  passed: boolean;
}

function skipReason(task: Task, cfg: GreylistConfig, whiteIp: MapHandle | undefined, whiteDomains: ReadonlySet<string>): string | undefined {
  if (!cfg.check_authed && task.meta.user) return 'authenticated';
  if (!cfg.check_local && isLocalAddress(task.meta.ip)) return 'local';
  if (task.meta.ip && whiteIp?.has(task.meta.ip)) return 'whitelisted ip';
  const domain = task.envelopeFrom?.domain.toLowerCase() || task.message.from[0]?.domain.toLowerCase();
  if (domain && (whiteDomains.has(domain) || whiteDomains.has(getDomain(domain) ?? domain))) return 'whitelisted domain';
  return undefined;
}

async function check(task: Task, cfg: GreylistConfig, kv: KvStore, whiteIp: MapHandle | undefined, whiteDomains: ReadonlySet<string>, outage: StoreOutage): Promise<void> {
  if (skipReason(task, cfg, whiteIp, whiteDomains)) return;
  const keys = greylistKeys(task, cfg);
  let stored: Array<Buffer | undefined>;
  try {
    stored = await Promise.all([kv.get(keys.body), kv.get(keys.meta)]);
  } catch (e) {
    outage(task, 'not greylisting', e);
    return;
  }
  // A value that is no time (written by another tool, or damaged) counts as no record: NaN here
  // made the greylist time an invalid Date, and its toISOString() threw.
  const times = stored.filter((b): b is Buffer => b !== undefined).map((b) => Number(b.toString())).filter((t) => !Number.isNaN(new Date(t + cfg.timeout * 1000).getTime()));
  const seen: Seen = { keys, passed: false };
  if (times.length > 0) seen.firstSeen = Math.min(...times);
  if (seen.firstSeen !== undefined && Date.now() - seen.firstSeen >= cfg.timeout * 1000) {
    seen.passed = true;
    task.insert('GREYLIST_PASS', 1, ['pass']);
  }
  task.cache.set(CACHE_KEY, seen);
}

/** Actions the score alone may select for which greylisting applies (not no action, not reject). */
const GREYLISTED_ACTIONS = new Set(['greylist', 'add header', 'rewrite subject']);

async function save(task: Task, cfg: GreylistConfig, kv: KvStore, outage: StoreOutage): Promise<void> {
  const seen = task.cache.get(CACHE_KEY) as Seen | undefined;
  if (!seen) return;
  const v = task.verdict();
  const now = Date.now();
  const ttl = cfg.expire * 1000;
  if (seen.passed) {
    // A passed triplet stays whitelisted for another `expire` (Rspamd refreshes it too).
    await kv.set(seen.keys.meta, String(seen.firstSeen), ttl).catch(() => undefined);
    // The MTA would defer a `greylist` verdict again forever: the retry is accepted instead.
    if (v.action === 'greylist') task.setPreResult({ action: 'no action', message: 'Greylisting passed', module: 'greylist' });
    return;
  }
  // Only mail that the score would already hold back is greylisted, never a reject.
  const wanted = cfg.greylist_min_score !== undefined ? v.score >= cfg.greylist_min_score : GREYLISTED_ACTIONS.has(v.action);
  if (!wanted || v.action === 'reject' || v.action === 'soft reject') return;
  const first = seen.firstSeen ?? now;
  const until = new Date(first + cfg.timeout * 1000).toISOString();
  try {
    if (seen.firstSeen === undefined) {
      await Promise.all([kv.set(seen.keys.body, String(now), ttl), kv.set(seen.keys.meta, String(now), ttl)]);
    }
  } catch (e) {
    outage(task, 'not greylisting', e);
    return;
  }
  task.insert(seen.firstSeen === undefined ? 'GREYLIST_NEW' : 'GREYLIST', 1, ['greylisted', until]);
  task.setPreResult({ action: cfg.action, message: cfg.message, module: 'greylist' });
}

export const greylistModule = defineModule<GreylistConfig>({
  name: 'greylist',
  config: GreylistConfig,
  symbols: GREYLIST_SYMBOLS,
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.active) {
      ctx.disable('config');
      return;
    }
    const kv = kvOrDisable(ctx, 'greylist');
    if (!kv) return;
    const whiteIp = await networksMap(ctx, cfg.whitelisted_ip, 'greylist whitelisted_ip');
    const whiteDomains = new Set(cfg.whitelist_domains.map((d) => d.toLowerCase()));
    const outage = storeOutageLog(ctx.log, 'greylist');
    ctx.symbol({
      name: 'GREYLIST_CHECK',
      stage: 'prefilters',
      flags: ['coro', 'nostat'],
      inserts: ['GREYLIST_PASS'],
      check: (task) => check(task, cfg, kv, whiteIp, whiteDomains, outage),
    });
    ctx.symbol({
      name: 'GREYLIST_SAVE',
      stage: 'postfilters',
      priority: -10,
      flags: ['coro', 'nostat'],
      inserts: ['GREYLIST_NEW', 'GREYLIST'],
      check: (task) => save(task, cfg, kv, outage),
    });
  },
});
