// The heartbeat watchdog. Every worker process sends the supervisor a
// heartbeat from a timer on its event loop each HEARTBEAT_INTERVAL_MS; a loop busy in one
// synchronous stretch (a parser that does not advance, a stopped process) sends none. The
// supervisor counts a worker without a heartbeat for LOST_AFTER_MS as not responding
// (/healthy, /ready), and kills one silent for `workers.watchdog_timeout` so that it is
// replaced; the scan board (scan-board.ts) tells it which scans were in flight.

import v8 from 'node:v8';
import type { BoardContents, InFlightEntry } from './scan-board.js';

/** How often a worker's loop reports that it runs. */
export const HEARTBEAT_INTERVAL_MS = 1_000;
/** A worker silent this long is reported as not responding: three beats missed, which a loaded host does not cause. */
export const LOST_AFTER_MS = 3 * HEARTBEAT_INTERVAL_MS;
/** How often the supervisor looks for silent workers. */
export const WATCHDOG_TICK_MS = 500;
/** In-flight scans named in a watchdog report; the rest are counted. */
export const MAX_NAMED_SCANS = 4;

/** Milliseconds on the monotonic clock (shared by the threads of a process): silences are measured on it, so a wall-clock step is never a stall. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

export interface HeartbeatMessage {
  type: 'mailsift:heartbeat';
  /** Work in flight (recorded on the scan board or not). */
  inFlight: number;
  heapUsed: number;
  heapLimit: number;
}

export function isHeartbeat(m: unknown): m is HeartbeatMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'mailsift:heartbeat';
}

/** Worker side: beats until the process exits (the timer does not keep it alive). */
export function startHeartbeat(send: (m: HeartbeatMessage) => void, inFlight: () => number): () => void {
  const beat = (): void => {
    const h = v8.getHeapStatistics();
    send({ type: 'mailsift:heartbeat', inFlight: inFlight(), heapUsed: h.used_heap_size, heapLimit: h.heap_size_limit });
  };
  beat();
  const timer = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Supervisor side: what is known of one worker process's loop. Times are monotonicMs(). */
export class Liveness {
  #lastBeat: number;
  #last: HeartbeatMessage | undefined;

  constructor(now: number) {
    this.#lastBeat = now;
  }

  beat(m: HeartbeatMessage, now: number): void {
    this.#lastBeat = now;
    this.#last = m;
  }

  /** The supervisor itself was not listening (its own loop was held up): nobody's silence counts until now. */
  excuse(now: number): void {
    this.#lastBeat = Math.max(this.#lastBeat, now);
  }

  silentFor(now: number): number {
    return Math.max(0, now - this.#lastBeat);
  }

  get last(): HeartbeatMessage | undefined {
    return this.#last;
  }
}

const MIB = 1024 * 1024;

export function mib(bytes: number): string {
  return `${Math.round(bytes / MIB)} MiB`;
}

function describeEntry(e: InFlightEntry, now: number): string {
  const parts = [e.what];
  parts.push(e.messageId !== undefined ? `Message-ID <${e.messageId}>` : 'no Message-ID');
  if (e.queueId !== undefined) parts.push(`Queue-Id ${e.queueId}`);
  parts.push(`running ${((now - e.startedAt) / 1000).toFixed(1)} s`);
  return parts.join(', ');
}

/** The watchdog report's "what was it doing" part, from the worker's scan board. */
export function describeInFlight(board: BoardContents | undefined, now: number): string {
  if (!board) return 'its scans in flight are unknown (no scan board)';
  const n = board.entries.length + board.untracked;
  if (n === 0) return 'no scan was in flight';
  const named = board.entries.slice(0, MAX_NAMED_SCANS).map((e) => describeEntry(e, now));
  const more = n - named.length;
  const head = n === 1 ? 'in flight: ' : `${n} in flight, oldest first: `;
  return `${head}${named.map((d) => `[${d}]`).join(' ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The error ring's `id` for a watchdog report: the Queue-Id of the one scan in flight, when there is exactly one. */
export function reportId(board: BoardContents | undefined): string {
  if (!board || board.untracked > 0 || board.entries.length !== 1) return '';
  return board.entries[0]!.queueId ?? '';
}

/** V8's last words when a heap reaches its cap (printed to stderr before it aborts). */
const OUT_OF_HEAP_RE = /Reached heap limit|JavaScript heap out of memory/;

export function isOutOfHeapLine(line: string): boolean {
  return OUT_OF_HEAP_RE.test(line);
}
