// Builds the /stat (and /auth, /metrics) figures from a statistics snapshot and the stores
// (Rspamd 3.4's /stat layout). Store figures are best effort: a store that is down leaves its
// fields out instead of failing the status page.

import { ACTION_ORDER, hamCount, spamCount } from '../../observability/server-stats.js';
import type { MetricsInput } from '../../observability/openmetrics.js';
import type { StatsSnapshot } from '../../observability/stats-hub.js';
import type { CoreContext } from './core-context.js';
import { fuzzyStat } from './fuzzy-stat.js';
import { dbl, type Double } from './json.js';
import { logStoreOutage } from './store-outage.js';

export interface Statfile {
  revision: number;
  used: number;
  total: number;
  size: number;
  symbol: string;
  type: string;
  languages: number;
  users: number;
}

/** Name under which the local fuzzy store's count is reported when no fuzzy rule is configured. */
export const FUZZY_STORAGE_NAME = 'local';

export interface StoreFigures {
  statfiles: Statfile[];
  totalLearns: number;
  /** Fuzzy rule (storage) name → stored hashes. */
  fuzzy?: Record<string, number>;
}

export async function storeFigures(ctx: CoreContext): Promise<StoreFigures> {
  const out: StoreFigures = { statfiles: [], totalLearns: 0 };
  const { bayes, fuzzy } = ctx.stores;
  try {
    const byClassifier = new Map<string, { spam: number; ham: number; tokensSpam: number; tokensHam: number; users: number }>();
    for (const scope of await bayes.scopes()) {
      const t = await bayes.totals(scope);
      const acc = byClassifier.get(scope.classifier) ?? { spam: 0, ham: 0, tokensSpam: 0, tokensHam: 0, users: 0 };
      acc.spam += t.learnsSpam;
      acc.ham += t.learnsHam;
      acc.tokensSpam += t.tokensSpam;
      acc.tokensHam += t.tokensHam;
      acc.users = Math.max(acc.users, t.users, scope.user === '' ? 1 : 0);
      byClassifier.set(scope.classifier, acc);
    }
    // A configured classifier that has learned nothing yet still has its two statfiles.
    if (byClassifier.size === 0 && ctx.engine.symbols().some((s) => s.name === 'BAYES_SPAM')) {
      byClassifier.set('bayes', { spam: 0, ham: 0, tokensSpam: 0, tokensHam: 0, users: 0 });
    }
    for (const [name, a] of byClassifier) {
      const sym = name.toUpperCase();
      const base = { size: 0, type: 'mailsift', languages: 0, users: a.users };
      out.statfiles.push({ revision: a.spam, used: a.tokensSpam, total: a.tokensSpam, ...base, symbol: `${sym}_SPAM` });
      out.statfiles.push({ revision: a.ham, used: a.tokensHam, total: a.tokensHam, ...base, symbol: `${sym}_HAM` });
      out.totalLearns += a.spam + a.ham;
    }
  } catch (err) {
    // Logged once per outage period, shared with /learn*: /stat is polled (the web UI, metrics).
    logStoreOutage(ctx.log, 'statistics', err);
  }
  // The fuzzy rules' storages answer STAT (fuzzy.ts); without fuzzy rules, this node's own
  // fuzzy store is reported, so the figure (and the fuzzy_stat metric) is always there.
  try {
    const perRule = await fuzzyStat(ctx);
    if (Object.keys(perRule).length) out.fuzzy = perRule;
    else {
      let n = 0;
      for (const c of (await fuzzy.count()).values()) n += c;
      out.fuzzy = { [FUZZY_STORAGE_NAME]: n };
    }
  } catch (err) {
    logStoreOutage(ctx.log, 'fuzzy', err);
  }
  return out;
}

export function uptimeOf(ctx: CoreContext): number {
  return Math.floor((Date.now() - ctx.startedAt) / 1000);
}

/** The /stat document, keys in Rspamd's order. */
export function statDocument(ctx: CoreContext, snap: StatsSnapshot, readOnly: boolean, stores: StoreFigures): Record<string, unknown> {
  const st = snap.state;
  const actions: Record<string, number> = {};
  ACTION_ORDER.forEach((a, i) => (actions[a] = st.actions[i] ?? 0));
  return {
    version: ctx.version,
    config_id: ctx.configId,
    uptime: uptimeOf(ctx),
    read_only: readOnly,
    scanned: st.scanned,
    learned: st.learned,
    actions,
    scan_times: st.scanTimes.map((t): Double => dbl(t ?? Number.NaN)),
    spam_count: spamCount(st),
    ham_count: hamCount(st),
    connections: st.connections,
    control_connections: st.controlConnections,
    // Node has no memory pools; report process figures where Rspamd reports pool figures.
    pools_allocated: 0,
    pools_freed: 0,
    bytes_allocated: snap.heapUsed,
    chunks_allocated: 0,
    shared_chunks_allocated: 0,
    chunks_freed: 0,
    chunks_oversized: 0,
    fragmented: 0,
    total_learns: stores.totalLearns,
    ...(stores.statfiles.length ? { statfiles: stores.statfiles } : {}),
    ...(stores.fuzzy !== undefined ? { fuzzy_hashes: stores.fuzzy } : {}),
  };
}

/** Mean of the filled scan-time slots; 0 when none. */
export function scanTimeAverage(snap: StatsSnapshot): number {
  let sum = 0;
  let n = 0;
  for (const t of snap.state.scanTimes) {
    if (t === null || !Number.isFinite(t)) continue;
    sum += t;
    n++;
  }
  return n ? sum / n : 0;
}

export function metricsInput(ctx: CoreContext, snap: StatsSnapshot, stores: StoreFigures): MetricsInput {
  const st = snap.state;
  return {
    version: ctx.version,
    configId: ctx.configId,
    scanTimeAverage: scanTimeAverage(snap),
    processStartSeconds: Math.floor(ctx.startedAt / 1000),
    // Rspamd 3.4 always reports 0 here; so do we, for dashboards built on it.
    readOnly: false,
    scanned: st.scanned,
    learned: st.learned,
    spam: spamCount(st),
    ham: hamCount(st),
    connections: st.connections,
    controlConnections: st.controlConnections,
    memory: { poolsAllocated: 0, poolsFreed: 0, bytesAllocated: snap.heapUsed, chunksAllocated: 0, sharedChunksAllocated: 0, chunksFreed: 0, chunksOversized: 0, fragmented: 0 },
    totalLearns: stores.totalLearns,
    actions: ACTION_ORDER.map((a, i) => [a, st.actions[i] ?? 0]),
    statfiles: stores.statfiles,
    fuzzy: Object.entries(stores.fuzzy ?? {}),
  };
}
