// Throughput series per action for /graph: four archives with Rspamd's
// resolutions, each a sparse map bucket → six per-action message counts. A bucket exists once
// the server was up during it (an idle minute is 0, a minute the server was down is null), and
// the whole thing is persisted by the stats hub so the series survive restarts.

import { ACTION_ORDER } from './server-stats.js';

export interface ArchiveSpec {
  /** Seconds per row. */
  step: number;
  /** Rows kept. */
  rows: number;
}

/** Rspamd's archives, by the `type=` values the 3.4 web UI sends. */
export const GRAPH_ARCHIVES: Readonly<Record<GraphType, ArchiveSpec>> = {
  day: { step: 60, rows: 1440 },
  week: { step: 300, rows: 2016 },
  month: { step: 600, rows: 4320 },
  year: { step: 3600, rows: 8760 },
};
export type GraphType = 'day' | 'week' | 'month' | 'year';
export const GRAPH_TYPES = Object.keys(GRAPH_ARCHIVES) as GraphType[];
/** The web UI's labels for the same four archives. */
export const GRAPH_TYPE_ALIASES: Readonly<Record<string, GraphType>> = { hourly: 'day', daily: 'week', weekly: 'month', monthly: 'year' };
/** Points a series is consolidated to (Rspamd renders at most ~500). */
const GRAPH_POINTS = 500;

export interface GraphPoint {
  x: number;
  y: number | null;
}

/** bucket index (time / step) → counts per action. */
type Archive = Map<number, number[]>;

export class GraphSeries {
  readonly #archives = new Map<GraphType, Archive>(GRAPH_TYPES.map((t) => [t, new Map()]));

  /** Marks the server alive now (creating zero buckets) and adds per-action counts. */
  add(nowSec: number, counts?: readonly number[]): void {
    for (const t of GRAPH_TYPES) {
      const spec = GRAPH_ARCHIVES[t];
      const arch = this.#archives.get(t)!;
      const b = Math.floor(nowSec / spec.step);
      let row = arch.get(b);
      if (!row) {
        row = ACTION_ORDER.map(() => 0);
        arch.set(b, row);
        // Prune at bucket change: the map never holds more than `rows` (+1) buckets.
        for (const k of arch.keys()) if (k <= b - spec.rows) arch.delete(k);
      }
      if (counts) for (let i = 0; i < row.length; i++) row[i]! += counts[i] ?? 0;
    }
  }

  /** Six series (ACTION_ORDER) of consolidated points, oldest first; y in messages per second. */
  render(type: GraphType, nowSec: number): GraphPoint[][] {
    const spec = GRAPH_ARCHIVES[type];
    const arch = this.#archives.get(type)!;
    const last = Math.floor(nowSec / spec.step);
    const first = last - spec.rows + 1;
    const win = Math.ceil(spec.rows / GRAPH_POINTS);
    const out: GraphPoint[][] = ACTION_ORDER.map(() => []);
    for (let start = first; start <= last; start += win) {
      const end = Math.min(start + win - 1, last);
      const n = end - start + 1;
      const sums = ACTION_ORDER.map(() => 0);
      let known = false;
      for (let b = start; b <= end; b++) {
        const row = arch.get(b);
        if (!row) continue;
        known = true;
        for (let i = 0; i < sums.length; i++) sums[i]! += row[i]! / spec.step;
      }
      for (let i = 0; i < sums.length; i++) out[i]!.push({ x: end * spec.step, y: known ? sums[i]! / n : null });
    }
    return out;
  }

  toJSON(): Record<string, Array<[number, number[]]>> {
    const o: Record<string, Array<[number, number[]]>> = {};
    for (const [t, arch] of this.#archives) o[t] = [...arch.entries()];
    return o;
  }

  restore(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null) return;
    for (const t of GRAPH_TYPES) {
      const rows = (raw as Record<string, unknown>)[t];
      if (!Array.isArray(rows)) continue;
      const arch = this.#archives.get(t)!;
      for (const r of rows) {
        if (Array.isArray(r) && typeof r[0] === 'number' && Array.isArray(r[1])) arch.set(r[0], ACTION_ORDER.map((_, i) => Number((r[1] as unknown[])[i]) || 0));
      }
    }
  }
}
