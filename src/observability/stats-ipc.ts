// Server statistics over node:cluster IPC: workers send deltas, error lines and history rows to
// the supervisor's StatsHub; the controller reads the hub with request/reply messages. Messages
// are batched (deltas by StatsRecorder, history rows here), and every type is prefixed so they
// never collide with the supervisor's own control messages.

import type { ErrorEntry } from './error-ring.js';
import type { GraphPoint, GraphType } from './graph.js';
import type { StatsDelta } from './server-stats.js';
import type { HistoryRow } from '../storage/types.js';
import type { StatsHub, StatsSink, StatsSnapshot, StatsView } from './stats-hub.js';

/** A controller request the supervisor has not answered in this time fails (the supervisor is wedged or gone). */
export const STATS_REQUEST_TIMEOUT_MS = 5_000;
/** History rows wait at most this long to share one message with others. */
const HISTORY_BATCH_MS = 50;
/** Rows that are sent at once, bounding a message. */
const HISTORY_BATCH_ROWS = 64;

type ViewOp = 'snapshot' | 'reset' | 'graph' | 'errors';

export type StatsIpcMessage =
  | { type: 'mailsift:stats-delta'; delta: StatsDelta; proc?: { pid: number; heapUsed: number; rss: number } }
  | { type: 'mailsift:stats-error'; entry: ErrorEntry }
  | { type: 'mailsift:stats-history'; rows: HistoryRow[] }
  | { type: 'mailsift:stats-req'; id: number; op: ViewOp; arg?: string }
  | { type: 'mailsift:stats-res'; id: number; value?: unknown; error?: string };

interface IpcEndpoint {
  send?(message: unknown, sendHandle?: undefined, options?: undefined, callback?: (err: Error | null) => void): unknown;
  on(event: 'message', listener: (m: unknown) => void): unknown;
}

function isStatsMessage(m: unknown): m is StatsIpcMessage {
  return typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string' && (m as { type: string }).type.startsWith('mailsift:stats-');
}

/** Worker side: a sink that forwards to the supervisor; `settled` resolves once what was sent has left. */
export function ipcStatsSink(proc: IpcEndpoint = process): StatsSink & { settled(): Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  let rows: HistoryRow[] = [];
  let rowTimer: NodeJS.Timeout | undefined;
  const send = (m: StatsIpcMessage): void => {
    last = new Promise<void>((resolve) => {
      try {
        if (!proc.send) return resolve();
        proc.send(m, undefined, undefined, () => resolve());
      } catch {
        // The supervisor is gone; the worker is about to be stopped anyway.
        resolve();
      }
    });
  };
  const sendRows = (): void => {
    clearTimeout(rowTimer);
    rowTimer = undefined;
    if (rows.length === 0) return;
    send({ type: 'mailsift:stats-history', rows });
    rows = [];
  };
  return {
    settled: () => {
      sendRows();
      return last;
    },
    delta: (delta, p) => send({ type: 'mailsift:stats-delta', delta, ...(p ? { proc: p } : {}) }),
    error: (entry) => send({ type: 'mailsift:stats-error', entry }),
    history: (row) => {
      rows.push(row);
      if (rows.length >= HISTORY_BATCH_ROWS) sendRows();
      else if (!rowTimer) {
        rowTimer = setTimeout(sendRows, HISTORY_BATCH_MS);
        rowTimer.unref();
      }
    },
  };
}

/** Controller side: the hub's view, one request/reply round trip per call. */
export function ipcStatsView(proc: IpcEndpoint = process): StatsView {
  let nextId = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  proc.on('message', (m) => {
    if (!isStatsMessage(m) || m.type !== 'mailsift:stats-res') return;
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    clearTimeout(w.timer);
    if (m.error !== undefined) w.reject(new Error(m.error));
    else w.resolve(m.value);
  });
  const call = <T>(op: ViewOp, arg?: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('statistics request timed out'));
      }, STATS_REQUEST_TIMEOUT_MS);
      timer.unref();
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      const msg: StatsIpcMessage = { type: 'mailsift:stats-req', id, op, ...(arg !== undefined ? { arg } : {}) };
      if (!proc.send) {
        clearTimeout(timer);
        waiting.delete(id);
        reject(new Error('no supervisor to ask for statistics'));
        return;
      }
      proc.send(msg);
    });
  return {
    snapshot: () => call<StatsSnapshot>('snapshot'),
    reset: () => call<StatsSnapshot>('reset'),
    graph: (type: GraphType) => call<GraphPoint[][]>('graph', type),
    errors: () => call<ErrorEntry[]>('errors'),
  };
}

/** Supervisor side: handles one message from a worker; false when it was not a statistics message. */
export function handleStatsMessage(hub: StatsHub, m: unknown, reply: (m: StatsIpcMessage) => void): boolean {
  if (!isStatsMessage(m)) return false;
  switch (m.type) {
    case 'mailsift:stats-delta':
      hub.delta(m.delta, m.proc);
      return true;
    case 'mailsift:stats-error':
      hub.error(m.entry);
      return true;
    case 'mailsift:stats-history':
      for (const row of m.rows) hub.history(row);
      return true;
    case 'mailsift:stats-req': {
      const run = (): Promise<unknown> => {
        switch (m.op) {
          case 'snapshot':
            return hub.snapshot();
          case 'reset':
            return hub.reset();
          case 'graph':
            return hub.graph((m.arg ?? 'day') as GraphType);
          case 'errors':
            return hub.errors();
        }
      };
      run().then(
        (value) => reply({ type: 'mailsift:stats-res', id: m.id, value }),
        (err: unknown) => reply({ type: 'mailsift:stats-res', id: m.id, error: String((err as Error)?.message ?? err) }),
      );
      return true;
    }
    default:
      return false;
  }
}
