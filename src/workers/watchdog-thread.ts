// The watchdog of `serve --single`, where the workers share one process and no supervisor can
// replace them. The main loop stamps a shared clock every heartbeat; a thread of its own (it
// keeps running while the main loop is stuck) reads the clock, and when the loop has been
// silent past the limit it writes one log line naming the scans on the scan board and kills
// the process, for the service manager to start it again. The thread's code is plain
// JavaScript evaluated in the thread: a module file would need the TypeScript loader, which
// worker threads do not inherit in development.

import { Worker } from 'node:worker_threads';
import type { LogFormat } from '../observability/log.js';
import type { Logger } from '../plugin-api/index.js';
import { BOARD_SLOT_BYTES, BOARD_SLOTS } from './scan-board.js';
import { HEARTBEAT_INTERVAL_MS, MAX_NAMED_SCANS, monotonicMs, WATCHDOG_TICK_MS } from './watchdog.js';

export interface WatchdogThreadOptions {
  timeoutMs: number;
  /** The process's scan board, read when the loop stalls. */
  boardPath?: string;
  format: LogFormat;
  /** logging.file: the line is appended there instead of written to stdout. */
  file?: string;
}

/** Runs in the thread. Mirrors readScanBoard/describeInFlight (scan-board.ts, watchdog.ts) in a few lines. */
const THREAD_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { clock, timeoutMs, boardPath, format, file, slots, slotBytes, maxNamed, tickMs, heldMs } = workerData;
const stamp = new BigInt64Array(clock);
function inFlight(now) {
  if (!boardPath) return 'its scans in flight are unknown (no scan board)';
  let buf;
  try { buf = fs.readFileSync(boardPath); } catch { return 'its scans in flight are unknown (scan board unreadable)'; }
  const recs = [];
  let untracked = 0;
  for (let s = 0; s <= slots; s++) {
    const at = s * slotBytes;
    if (at >= buf.length || buf[at] === 0) continue;
    const nl = buf.indexOf(10, at);
    if (nl < 0 || nl >= at + slotBytes) continue;
    let r;
    try { r = JSON.parse(buf.toString('latin1', at, nl)); } catch { continue; }
    if (s === 0) untracked = Number(r.untracked) || 0;
    else if (typeof r.what === 'string' && typeof r.startedAt === 'number') recs.push(r);
  }
  recs.sort((a, b) => a.startedAt - b.startedAt);
  const n = recs.length + untracked;
  if (n === 0) return 'no scan was in flight';
  const named = recs.slice(0, maxNamed).map((e) =>
    '[' + [e.what, e.messageId !== undefined ? 'Message-ID <' + e.messageId + '>' : 'no Message-ID']
      .concat(e.queueId !== undefined ? ['Queue-Id ' + e.queueId] : [])
      .concat(['running ' + ((now - e.startedAt) / 1000).toFixed(1) + ' s']).join(', ') + ']');
  return (n === 1 ? 'in flight: ' : n + ' in flight, oldest first: ') + named.join(' ') + (n > named.length ? ' and ' + (n - named.length) + ' more' : '');
}
const mono = () => Number(process.hrtime.bigint() / 1000000n);
let lastTick = mono();
let fired = false;
setInterval(() => {
  if (fired) return;
  const t = mono();
  // This thread was held up itself (a suspended host): the silence is not the loop's.
  if (t - lastTick > heldMs) Atomics.store(stamp, 0, BigInt(t));
  lastTick = t;
  const silent = t - Number(Atomics.load(stamp, 0));
  if (silent < timeoutMs) return;
  const now = Date.now();
  const msg = 'event loop stalled: no heartbeat for ' + (silent / 1000).toFixed(1) + ' s (workers.watchdog_timeout ' + timeoutMs / 1000 + ' s); killing the process (--single: the service manager restarts it); ' + inFlight(now);
  const line = format === 'text'
    ? new Date(now).toISOString() + ' ERROR ' + process.pid + ' [watchdog] ' + msg + '\\n'
    : JSON.stringify({ level: 50, time: now, pid: process.pid, tag: 'watchdog', silentMs: silent, msg }) + '\\n';
  fired = true;
  // Straight to the file descriptor: a thread's process.stdout goes through the stuck main loop.
  try { if (file) fs.appendFileSync(file, line); else fs.writeSync(1, line); } finally { process.kill(process.pid, 'SIGKILL'); }
}, tickMs);
`;

/** Starts the thread and the main loop's stamping; neither keeps the process alive. */
export function startWatchdogThread(opts: WatchdogThreadOptions, log: Logger): void {
  // The kernel ignores SIGKILL sent to a PID namespace's init from inside it (a container's PID 1).
  if (process.pid === 1) log.warn('running as PID 1: the --single watchdog cannot kill this process; run it under an init (e.g. docker run --init)');
  const clock = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  const stamp = new BigInt64Array(clock);
  const beat = (): void => {
    Atomics.store(stamp, 0, BigInt(monotonicMs()));
  };
  beat();
  setInterval(beat, HEARTBEAT_INTERVAL_MS).unref();
  const thread = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { clock, timeoutMs: opts.timeoutMs, boardPath: opts.boardPath, format: opts.format, file: opts.file, slots: BOARD_SLOTS, slotBytes: BOARD_SLOT_BYTES, maxNamed: MAX_NAMED_SCANS, tickMs: WATCHDOG_TICK_MS, heldMs: 4 * WATCHDOG_TICK_MS },
    // The thread's own heap: it reads one small file and formats one line.
    resourceLimits: { maxOldGenerationSizeMb: 16 },
  });
  // Without a listener a thread error would be thrown in the main loop; the server can go on without its watchdog.
  thread.on('error', (err) => log.error('the watchdog thread failed; running without a watchdog', { err: String(err) }));
  thread.unref();
}
