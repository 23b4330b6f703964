// GET /health (a mailsift extension; the web UI's status page): every worker the supervisor
// runs (role, pid, state, restarts) and every store (back end, reachable or not, and why).
// /healthy and /ready stay Rspamd's probes; this is for a person looking.

import { DEADLINE_PASSED, withDeadline } from '../../core/deadline.js';
import type { CoreContext } from './core-context.js';
import { jsonReply } from './json.js';
import { ACTION_ORDER } from '../../observability/server-stats.js';
import type { ControllerRoute } from './types.js';

/** How long a store may take to answer the probe before it counts as unreachable. */
const STORE_PROBE_MS = 1000;

interface StoreHealth {
  store: string;
  backend: string;
  ok: boolean;
  error?: string;
  /** Milliseconds the probe took. */
  ms: number;
}

async function probe(store: string, backend: string, work: () => Promise<unknown>): Promise<StoreHealth> {
  const t0 = performance.now();
  try {
    const r = await withDeadline(work(), STORE_PROBE_MS, { unref: true });
    const ms = Math.round(performance.now() - t0);
    return r === DEADLINE_PASSED ? { store, backend, ok: false, error: `no answer within ${STORE_PROBE_MS} ms`, ms } : { store, backend, ok: true, ms };
  } catch (err) {
    return { store, backend, ok: false, error: String((err as Error)?.message ?? err).slice(0, 200), ms: Math.round(performance.now() - t0) };
  }
}

export function healthDetailsRoutes(ctx: CoreContext): ControllerRoute[] {
  const sc = ctx.config.stores;
  const backendOf = (k: 'bayes' | 'fuzzy' | 'history' | 'kv'): string => sc[k].backend ?? sc.backend;
  return [
    {
      path: '/health',
      level: 'normal',
      async handler() {
        const { stores } = ctx;
        const [snap, ...probes] = await Promise.all([
          ctx.stats.view.snapshot(),
          probe('bayes', backendOf('bayes'), () => stores.bayes.scopes()),
          probe('fuzzy', backendOf('fuzzy'), () => stores.fuzzy.count()),
          probe('history', backendOf('history'), () => stores.history.count()),
          probe('kv', backendOf('kv'), () => stores.kv.get('mailsift:health-probe')),
        ]);
        const h = snap.health;
        const ownCounts = (pid: number | undefined) => {
          const c = pid === undefined ? undefined : snap.perProcess?.[pid];
          return c ? { scanned: c.scanned, actions: Object.fromEntries(ACTION_ORDER.map((a, i) => [a, c.actions[i] ?? 0])) } : {};
        };
        const workers = h.workers ?? [{ role: 'single', pid: process.pid, state: 'up', restarts: 0, startedAt: ctx.startedAt, heapUsed: process.memoryUsage().heapUsed }];
        return jsonReply({
          version: ctx.version,
          uptime: Math.floor((Date.now() - ctx.startedAt) / 1000),
          scanners: h.scanners,
          alive: h.alive,
          down: h.down ?? [],
          workers: workers.map((w) => ({ ...w, ...ownCounts(w.pid) })),
          stores: probes,
          heap_used: snap.heapUsed,
          rss: snap.rss,
        });
      },
    },
  ];
}
