// Spreading the clients' kept-alive connections over the scan workers. The workers accept from
// one shared socket (SCHED_NONE, see supervisor.ts), and a burst of new connections (a client
// pool opening at once, the benchmark's 8 clients) is taken by whichever worker wakes first,
// often all of it; a kept-alive connection then stays with that worker for good, and the other
// worker idles. bench/cluster/sched-load.ts, 2 workers, 8 clients opened at once: connections
// 0/8 in half the trials, 469 scans/s against 719 when they are spread.
//
// So each scan worker tells the supervisor how many connections it holds, the supervisor tells
// every scan worker the total, and a worker holding more than its share (total / workers,
// rounded up) answers its next reply with `Connection: close`. The client reconnects, and the
// worker with fewer connections (idle, waiting in accept) usually takes the new one; if the busy
// worker takes it again, it hands it back after one more reply.

import type { Worker } from 'node:cluster';

/** How often a worker looks at its connection count and reports a change (a compare when nothing changed). */
export const CONN_REPORT_INTERVAL_MS = 25;
/** Longest wait before the supervisor passes a changed total on. */
const CONN_BROADCAST_DELAY_MS = 10;
/**
 * Least time between two connections a worker hands back. The other workers' counts are up to
 * one report old; a worker that shed on every reply while a burst was still being reported
 * handed back more than its excess (both workers did, and clients bounced between them).
 */
export const SHED_SPACING_MS = 50;

interface ConnReport {
  type: 'mailsift:conns';
  open: number;
}

interface ConnTotal {
  type: 'mailsift:conns-total';
  total: number;
  workers: number;
}

function isConnReport(m: unknown): m is ConnReport {
  const r = m as ConnReport | null;
  return typeof r === 'object' && r !== null && r.type === 'mailsift:conns' && Number.isSafeInteger(r.open) && r.open >= 0;
}

function isConnTotal(m: unknown): m is ConnTotal {
  const t = m as ConnTotal | null;
  return typeof t === 'object' && t !== null && t.type === 'mailsift:conns-total' && Number.isSafeInteger(t.total) && Number.isSafeInteger(t.workers) && t.workers > 0;
}

/** A scan worker's side: reports its count, learns the total, decides when to hand a connection back. */
export class ConnectionShare {
  #total = 0;
  #workers = 0;
  #reported = -1;
  #lastShed = 0;
  readonly #timer: NodeJS.Timeout;
  readonly #onMessage: (m: unknown) => void;

  /** `open` reads the worker's current connection count; `send` reaches the supervisor. */
  constructor(open: () => number, send: (m: ConnReport) => void) {
    this.#onMessage = (m) => {
      if (!isConnTotal(m)) return;
      this.#total = m.total;
      this.#workers = m.workers;
    };
    process.on('message', this.#onMessage);
    const report = () => {
      const n = open();
      if (n === this.#reported) return;
      this.#reported = n;
      send({ type: 'mailsift:conns', open: n });
    };
    report();
    this.#timer = setInterval(report, CONN_REPORT_INTERVAL_MS);
    this.#timer.unref();
  }

  /** True when a worker holding `open` connections should close the one it is answering. */
  shed(open: number): boolean {
    if (this.#workers < 2) return false;
    // The total counts this worker as it last reported; its own count now is `open`. Without
    // the correction, a burst that arrives before the report (total still 0) would close every
    // connection it answers until the new total came back.
    const others = Math.max(0, this.#total - this.#reported);
    if (open <= Math.ceil((others + open) / this.#workers)) return false;
    const now = performance.now();
    if (now - this.#lastShed < SHED_SPACING_MS) return false;
    this.#lastShed = now;
    return true;
  }

  stop(): void {
    clearInterval(this.#timer);
    process.off('message', this.#onMessage);
  }
}

/** The supervisor's side: the scan workers' counts, and the total sent back to each of them. */
export class ConnectionLedger {
  readonly #open = new Map<Worker, number>();
  #timer: NodeJS.Timeout | undefined;

  /** Follows a scan worker's reports until it exits. */
  attach(worker: Worker): void {
    worker.on('message', (m: unknown) => {
      if (!isConnReport(m)) return;
      this.#open.set(worker, m.open);
      this.#schedule();
    });
    worker.on('exit', () => {
      if (this.#open.delete(worker)) this.#schedule();
    });
  }

  #schedule(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#broadcast();
    }, CONN_BROADCAST_DELAY_MS);
    this.#timer.unref();
  }

  #broadcast(): void {
    let total = 0;
    for (const n of this.#open.values()) total += n;
    const msg: ConnTotal = { type: 'mailsift:conns-total', total, workers: this.#open.size };
    for (const w of this.#open.keys()) if (w.isConnected()) w.send(msg);
  }
}
