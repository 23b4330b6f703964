// The one place server statistics are aggregated: the supervisor in
// cluster mode, the process itself with --single. Workers feed it deltas, error lines and
// history rows; the controller reads snapshots, graphs and errors from it. It persists to the
// KvStore every PERSIST_INTERVAL_MS and on stop, and reloads at start, so counters survive
// restarts. History rows go to the HistoryStore from here, so the scan workers never write the
// store themselves: a SQLite commit, and the fsync of a WAL checkpoint that some commits run,
// would stall every scan in flight on the worker's event loop.

import type { Logger } from '../core/logger.js';
import type { HistoryRow, HistoryStore, KvStore } from '../storage/types.js';
import { ErrorRing, type ErrorEntry } from './error-ring.js';
import { GraphSeries, type GraphPoint, type GraphType } from './graph.js';
import { applyDelta, emptyState, resetCounters, reviveState, type StatsDelta, type StatsState } from './server-stats.js';

/** How often the aggregate is written to the store; a crash loses at most this much counting. */
export const PERSIST_INTERVAL_MS = 10_000;
/** Graph liveness tick: marks the current buckets as "server up" so idle time plots as 0, not a gap. */
const GRAPH_TICK_MS = 1_000;
export const STATS_KEY = 'mailsift:stats:v1';
export const GRAPH_KEY = 'mailsift:graph:v1';

export interface HealthInfo {
  /** Scanner workers expected. */
  scanners: number;
  /** Scanner workers up, with a recent heartbeat. */
  alive: number;
  /** Every worker (of any role) that is not responding, described for /healthy (`normal worker 1234: no heartbeat for 5 s`). */
  down?: string[];
  /** Every worker process the supervisor runs (absent with --single: one process, no supervisor). */
  workers?: WorkerHealth[];
}

/** One worker slot as the supervisor sees it (the web UI's status page lists them). */
export interface WorkerHealth {
  role: string;
  pid?: number;
  /** `up`, or why not: `starting`, `restarting`, `silent` (no recent heartbeat). */
  state: 'up' | 'starting' | 'restarting' | 'silent';
  /** Times this slot's worker was started again after it ended unexpectedly. */
  restarts: number;
  /** Epoch ms the current worker started. */
  startedAt?: number;
  /** From the worker's last heartbeat: requests in flight and heap in use (bytes). */
  inFlight?: number;
  heapUsed?: number;
  /** Scans this worker process finished, and their actions (ACTION_ORDER), since it started. */
  scanned?: number;
  actions?: number[];
}

/** What one worker process has counted since it started (its share of the totals). */
export interface ProcessCounts {
  scanned: number;
  learned: number;
  actions: number[];
}

export interface StatsSnapshot {
  state: StatsState;
  /** Sum of the last heap figures reported by each worker process. */
  heapUsed: number;
  rss: number;
  health: HealthInfo;
  /** Per worker process (pid), for the status page's worker table. */
  perProcess: Record<number, ProcessCounts>;
}

/** What the controller reads. Async because in cluster mode it is an IPC round trip. */
export interface StatsView {
  snapshot(): Promise<StatsSnapshot>;
  /** Resets the counters; resolves to the snapshot taken just before. */
  reset(): Promise<StatsSnapshot>;
  graph(type: GraphType): Promise<GraphPoint[][]>;
  errors(): Promise<ErrorEntry[]>;
}

/** What every worker writes. */
export interface StatsSink {
  delta(d: StatsDelta, proc?: { pid: number; heapUsed: number; rss: number }): void;
  error(e: ErrorEntry): void;
  /** A scan's /history row. */
  history(row: HistoryRow): void;
}

export interface StatsHubOptions {
  kv?: KvStore;
  /** Where history rows go; without one they are dropped. */
  history?: HistoryStore;
  errorElts: number;
  log: Logger;
  /** Reports scanner liveness for /healthy and /ready. */
  health?: () => HealthInfo;
}

export class StatsHub implements StatsView, StatsSink {
  #state: StatsState = emptyState();
  readonly #graph = new GraphSeries();
  readonly #errors: ErrorRing;
  readonly #procs = new Map<number, { heapUsed: number; rss: number }>();
  /** Bounded by the live worker processes: forgetProcess drops an ended one. */
  readonly #counts = new Map<number, ProcessCounts>();
  readonly #opts: StatsHubOptions;
  #timers: NodeJS.Timeout[] = [];
  #dirty = false;
  /** A history write failed and no write has succeeded since: one log line per outage. */
  #historyFailing = false;

  constructor(opts: StatsHubOptions) {
    this.#opts = opts;
    this.#errors = new ErrorRing(opts.errorElts);
  }

  /** Loads the persisted aggregate (a missing or unreadable one starts from zero) and starts the timers. */
  async start(): Promise<void> {
    const kv = this.#opts.kv;
    if (kv) {
      try {
        const [stats, graph] = await Promise.all([kv.get(STATS_KEY), kv.get(GRAPH_KEY)]);
        if (stats) {
          const saved = JSON.parse(stats.toString('utf8')) as { state?: unknown; errors?: unknown };
          this.#state = reviveState(saved.state);
          this.#errors.restore(saved.errors);
        }
        if (graph) this.#graph.restore(JSON.parse(graph.toString('utf8')));
      } catch (err) {
        this.#opts.log.warn('could not load saved statistics; starting from zero', { err: String(err) });
      }
    }
    this.#graph.add(Date.now() / 1000);
    const tick = setInterval(() => this.#graph.add(Date.now() / 1000), GRAPH_TICK_MS);
    const persist = setInterval(() => void this.persist(), PERSIST_INTERVAL_MS);
    tick.unref();
    persist.unref();
    this.#timers = [tick, persist];
  }

  async stop(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    this.#dirty = true;
    await this.persist();
  }

  async persist(): Promise<void> {
    const kv = this.#opts.kv;
    if (!kv || !this.#dirty) return;
    this.#dirty = false;
    try {
      await kv.set(STATS_KEY, JSON.stringify({ state: this.#state, errors: this.#errors.list() }));
      await kv.set(GRAPH_KEY, JSON.stringify(this.#graph.toJSON()));
    } catch (err) {
      this.#dirty = true;
      this.#opts.log.warn('could not save statistics', { err: String(err) });
    }
  }

  delta(d: StatsDelta, proc?: { pid: number; heapUsed: number; rss: number }): void {
    applyDelta(this.#state, d);
    if (d.scanned > 0) this.#graph.add(Date.now() / 1000, d.actions);
    if (proc) {
      this.#procs.set(proc.pid, { heapUsed: proc.heapUsed, rss: proc.rss });
      const c = this.#counts.get(proc.pid) ?? { scanned: 0, learned: 0, actions: [] };
      c.scanned += d.scanned;
      c.learned += d.learned;
      d.actions.forEach((n, i) => (c.actions[i] = (c.actions[i] ?? 0) + n));
      this.#counts.set(proc.pid, c);
    }
    this.#dirty = true;
  }

  /** A process is gone: its memory figures no longer count. */
  forgetProcess(pid: number): void {
    this.#procs.delete(pid);
    this.#counts.delete(pid);
  }

  error(e: ErrorEntry): void {
    this.#errors.push(e);
    this.#dirty = true;
  }

  history(row: HistoryRow): void {
    this.#opts.history?.push(row).then(
      () => {
        this.#historyFailing = false;
      },
      (err: unknown) => {
        if (!this.#historyFailing) this.#opts.log.error('history store write failed', { err: String((err as Error)?.message ?? err) });
        this.#historyFailing = true;
      },
    );
  }

  async snapshot(): Promise<StatsSnapshot> {
    let heapUsed = 0;
    let rss = 0;
    for (const p of this.#procs.values()) {
      heapUsed += p.heapUsed;
      rss += p.rss;
    }
    return {
      state: structuredClone(this.#state),
      heapUsed,
      rss,
      health: this.#opts.health?.() ?? { scanners: 1, alive: 1 },
      perProcess: Object.fromEntries([...this.#counts].map(([pid, c]) => [pid, structuredClone(c)])),
    };
  }

  async reset(): Promise<StatsSnapshot> {
    const before = await this.snapshot();
    resetCounters(this.#state);
    this.#dirty = true;
    return before;
  }

  async graph(type: GraphType): Promise<GraphPoint[][]> {
    return this.#graph.render(type, Date.now() / 1000);
  }

  async errors(): Promise<ErrorEntry[]> {
    return this.#errors.list();
  }
}
