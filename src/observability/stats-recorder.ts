// The per-process side of server statistics: scans, connections and learns are counted into a
// pending delta that is handed to the sink (the hub, or the IPC link to it) at most once per
// FLUSH_INTERVAL_MS. A scan costs a few additions, never a message; its history row goes to the
// sink as it is (the IPC link batches rows).

import type { ScanResult } from '../core/scan-types.js';
import type { HistoryRow } from '../storage/types.js';
import type { StatsSink } from './stats-hub.js';
import { emptyDelta, isEmptyDelta, recordScan, type StatsDelta } from './server-stats.js';

/** Longest time a counted scan waits before the aggregate sees it. */
export const FLUSH_INTERVAL_MS = 500;

export class StatsRecorder {
  #pending: StatsDelta = emptyDelta();
  readonly #sink: StatsSink;
  #timer: NodeJS.Timeout | undefined;

  constructor(sink: StatsSink) {
    this.#sink = sink;
  }

  scan(result: ScanResult, seconds: number): void {
    recordScan(this.#pending, result, seconds);
    this.#schedule();
  }

  connection(): void {
    this.#pending.connections++;
    this.#schedule();
  }

  controlConnection(): void {
    this.#pending.controlConnections++;
    this.#schedule();
  }

  history(row: HistoryRow): void {
    this.#sink.history(row);
  }

  learned(n = 1): void {
    this.#pending.learned += n;
    this.#schedule();
  }

  /** Sends what is pending now (also called at shutdown). */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (isEmptyDelta(this.#pending)) return;
    const d = this.#pending;
    this.#pending = emptyDelta();
    const mem = process.memoryUsage();
    this.#sink.delta(d, { pid: process.pid, heapUsed: mem.heapUsed, rss: mem.rss });
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
    this.#timer.unref();
  }
}
