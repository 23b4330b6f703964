// The process model: a supervisor forks N normal workers that share the scan port through
// node:cluster plus one controller, restarts a crashed worker with back-off, replaces them all on a
// reload, and stops everything gracefully on SIGTERM/SIGINT. Each worker process loads the
// configuration and builds its own engine (in-process.ts), so a worker never shares state with
// another except through the stores. The supervisor itself never loads the engine's code: it
// checks the configuration in a short-lived child process (config-process.ts) and keeps only the part it
// reads (PrimaryConfig). `--single` runs every worker in the calling process (in-process.ts).

import cluster, { type Worker } from 'node:cluster';
import { rmSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type AddressInfo } from 'node:net';
import { withDeadline } from '../core/deadline.js';
import { routeConsoleToLog } from '../observability/console-capture.js';
import { createLogger, followLogRotation, type RootLogger } from '../observability/log.js';
import type { HealthInfo, WorkerHealth } from '../observability/stats-hub.js';
import { checkPrimaryConfig, loadPrimaryConfig } from './config-process.js';
import { ConnectionLedger } from './conn-balance.js';
import {
  BOARD_DIR_ENV,
  CONTROLLER_PORT_ENV,
  decodeCheckReply,
  graceMs,
  onStopSignal,
  problemList,
  PROXY_PORTS_ENV,
  ROLE_ENV,
  SERVE_OPTIONS_ENV,
  SHUTDOWN_EXTRA_MS,
  type ConfigCheckReply,
  type IpcMessage,
  type PrimaryConfig,
  type PrimaryPart,
  type ServeOptions,
  type WorkerRole,
} from './process-common.js';
import { removeStaleSocket } from './proxy-socket.js';
import { removePidFile, writePidFile, writeReloadStatus, type ReloadStatus } from './run-files.js';
import { boardPath, makeBoardDir, readScanBoard } from './scan-board.js';
import { startPrimaryStats } from './stats-wiring.js';
import { roleV8Flags, tuneV8ForSupervising, workerMallocEnv } from './v8-tuning.js';
import { forwardOperatorSignal, installOperatorSignals, operatorSignalLog } from './operator-signals.js';
import { describeInFlight, isHeartbeat, isOutOfHeapLine, Liveness, LOST_AFTER_MS, mib, monotonicMs, reportId, WATCHDOG_TICK_MS } from './watchdog.js';
import { forwardStderr } from './worker-stderr.js';

export type { ServeOptions, WorkerRole } from './process-common.js';
export { formatAddress } from './process-common.js';

/** First restart delay after a crash; doubled for each crash in a row. */
const RESTART_BASE_MS = 250;
/** Longest wait between restarts: a worker that keeps crashing is retried this often. */
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before crashing is "stable": its back-off starts over. */
const STABLE_AFTER_MS = 30_000;
/** Longest wait for the controller's check of a reloaded configuration before a fresh process checks it instead. */
const CONTROLLER_CHECK_TIMEOUT_MS = 60_000;
/** Longest wait for every worker of a reloaded configuration to be ready before the reload is given up. */
const RELOAD_READY_TIMEOUT_MS = 120_000;

/** A watchdog tick this much later than planned means the supervisor itself was held up: silences seen then are not the workers' fault. */
const SUPERVISOR_LAG_MS = 4 * WATCHDOG_TICK_MS;
/** Time a dead worker's stderr is given to deliver its last lines (V8's out-of-memory report) before its exit is judged. */
const STDERR_DRAIN_MS = 1_000;

/** Each worker's entry module (worker-main.ts): compiled beside this one, or the TypeScript source under tsx (the tests). */
const WORKER_MAIN = fileURLToPath(new URL(`./worker-main${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/** `node` options for a worker process: the parent's, the role's V8 flags, then the heap cap. */
function workerExecArgv(maxHeap: number, role: WorkerRole): string[] {
  // Appended: V8 takes the last of repeated flags, so the configuration wins over the parent's.
  const heap = maxHeap > 0 ? [`--max-old-space-size=${Math.floor(maxHeap / (1024 * 1024))}`] : [];
  return [...process.execArgv, ...roleV8Flags(role), ...heap];
}

interface Slot {
  role: WorkerRole;
  /** The environment its worker is forked with (role, ports picked by the supervisor). */
  env: Record<string, string>;
  /** Kills a worker of a replaced configuration that has not finished in time. */
  retireTimer?: NodeJS.Timeout;
  /** Waiting for this worker's `prepared` (an in-place reload): called with its error, or undefined when ready. */
  prepareWaiter?: (error?: string) => void;
  worker?: Worker;
  startedAt: number;
  ready: boolean;
  crashes: number;
  /** Restarts after unexpected ends, over the supervisor's life (the status page shows them). */
  restarts: number;
  restartTimer?: NodeJS.Timeout;
  /** The current worker's heartbeats. */
  liveness?: Liveness;
  /** The watchdog killed the current worker after this much silence (ms). */
  stalledMs?: number;
  /** The current worker's stderr carried V8's out-of-heap report. */
  outOfHeap?: boolean;
  /** Resolves once the current worker's stderr has ended. */
  stderrDone?: Promise<void>;
}

/**
 * node:cluster shares one listening socket per (host, port) among workers, so a controller
 * and normal workers both configured with port 0 would share the scan socket. The supervisor
 * therefore picks the controller's port itself (a port briefly bound and released).
 */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ host, port: 0 }, () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function workerHealth(s: Slot, down: string | undefined): WorkerHealth {
  const pid = s.worker?.process.pid;
  const state: WorkerHealth['state'] = down === undefined ? 'up' : !s.worker ? 'restarting' : !s.ready ? 'starting' : 'silent';
  const beat = s.worker ? s.liveness?.last : undefined;
  return {
    role: s.role,
    ...(pid !== undefined ? { pid } : {}),
    state,
    restarts: s.restarts,
    ...(s.worker ? { startedAt: s.startedAt } : {}),
    ...(beat ? { inFlight: beat.inFlight, heapUsed: beat.heapUsed } : {}),
  };
}

/** What a worker's silence looks like in /healthy; undefined while it answers. */
function downReason(s: Slot, now: number): string | undefined {
  const w = s.worker;
  if (!w) return `${s.role} worker: restarting`;
  const pid = w.process.pid;
  if (!s.ready) return `${s.role} worker ${pid}: starting`;
  const silent = s.liveness?.silentFor(now) ?? 0;
  if (silent >= LOST_AFTER_MS) return `${s.role} worker ${pid}: no heartbeat for ${Math.floor(silent / 1000)} s`;
  return undefined;
}

/** Ports the workers of one configuration are given (see freePort): kept across reloads while the binds stay the same. */
interface PortPlan {
  controllerEnv: Record<string, string>;
  proxyEnv: Record<string, string>;
  /** What the plan was made for: a reload with the same binds keeps the ports. */
  key: string;
}

async function planPorts(cfg: PrimaryConfig, previous?: PortPlan): Promise<PortPlan> {
  const c = cfg.workers.controller;
  const proxy = cfg.workers.proxy;
  const key = JSON.stringify({ c: c.enabled ? [c.host, c.port] : null, p: proxy.enabled ? proxy.listen : null });
  if (previous && previous.key === key) return previous;
  const controllerEnv: Record<string, string> = {};
  if (c.enabled && c.port === 0) controllerEnv[CONTROLLER_PORT_ENV] = String(await freePort(c.host));
  const proxyEnv: Record<string, string> = {};
  if (proxy.enabled) {
    // A port 0 would be shared with the normal workers' port 0 under node:cluster (see freePort).
    if (proxy.listen.some((b) => b.kind === 'tcp' && b.port === 0)) {
      const ports = await Promise.all(proxy.listen.map((b) => (b.kind === 'tcp' && b.port === 0 ? freePort(b.host) : b.kind === 'tcp' ? b.port : 0)));
      proxyEnv[PROXY_PORTS_ENV] = JSON.stringify(ports);
    }
    // Once, before any proxy worker binds: the primary binds for all of them. Not on a reload:
    // a path still bound is the running workers' socket, which the new ones share.
    if (!previous) for (const b of proxy.listen) if (b.kind === 'unix') await removeStaleSocket(b.path);
  }
  return { controllerEnv, proxyEnv, key };
}

/** The worker slots one configuration asks for. */
function slotsFor(cfg: PrimaryConfig, count: number, ports: PortPlan): Slot[] {
  const slot = (role: WorkerRole): Slot => ({
    role,
    startedAt: 0,
    ready: false,
    crashes: 0,
    restarts: 0,
    env: { [ROLE_ENV]: role, ...(role === 'controller' ? ports.controllerEnv : {}), ...(role === 'proxy' ? ports.proxyEnv : {}) },
  });
  const slots: Slot[] = [];
  for (let i = 0; i < count; i++) slots.push(slot('normal'));
  if (cfg.workers.controller.enabled) slots.push(slot('controller'));
  if (cfg.workers.fuzzy.enabled) slots.push(slot('fuzzy'));
  if (cfg.workers.proxy.enabled) for (let i = 0; i < cfg.workers.proxy.count; i++) slots.push(slot('proxy'));
  return slots;
}

/** What changed that a reload cannot apply, in words (the supervisor keeps these until a restart). */
function needsRestart(from: PrimaryConfig, to: PrimaryConfig): string[] {
  const out: string[] = [];
  if (from.dataDir !== to.dataDir) out.push('data_dir');
  if (JSON.stringify(from.stores) !== JSON.stringify(to.stores)) out.push('stores (the statistics the supervisor keeps)');
  if (from.logging.level !== to.logging.level || from.logging.format !== to.logging.format) out.push("logging (the supervisor's own lines; the workers take the new one)");
  return out;
}

/** The cluster primary: forks, watches and replaces workers, and replaces them all on a reload. */
async function runPrimary(confDir: string, initial: PrimaryPart, log: RootLogger, countOverride: number | undefined, serverName: string | undefined): Promise<void> {
  /** The configuration the current workers run, and its processShape(). */
  let cfg = initial.cfg;
  let shape = initial.shape;
  tuneV8ForSupervising();
  let count = countOverride ?? cfg.workers.normal.count;
  let ports = await planPorts(cfg);
  const workerOptions = JSON.stringify({ confDir, ...(serverName ? { serverName } : {}) } satisfies ServeOptions);
  const slog = log.child('supervisor');
  let watchdogMs = cfg.workers.watchdogTimeout * 1000;
  const boardDir = makeBoardDir(slog);
  // The workers accept from the shared listening socket themselves (SCHED_NONE, as Rspamd's
  // workers do), instead of node's default round-robin, where this process accepts every
  // connection and passes it to a worker over IPC. Round-robin loses connections: the handle
  // passed to a worker stays open here until the worker acknowledges it, and when the worker
  // dies first (a SIGKILL from the watchdog, an out-of-heap abort) Node 20 closes the IPC
  // channel without closing that handle (internal/child_process.js: on EOF, disconnect()
  // defers _disconnect(), which would close it, while a handle awaits its ACK), so the client
  // waits for a reply forever. A stalled worker still counts as free, is handed the next new
  // connection and cannot acknowledge it, so a watchdog kill under traffic left a client
  // hanging (bench/cluster/dying-worker.ts reproduces it). No public API reaches that handle. With a
  // shared socket, connections a dead worker had not accepted stay in the kernel's queue for
  // the others, the ones it had accepted are reset (the client retries), a stalled worker takes
  // no new connection at all, and this process is off the path of every connection. The load
  // spreads about as evenly (bench/cluster/sched-load.ts: 2 workers, 8 to 64 keep-alive
  // clients; under either policy a burst of connections can pile on whichever worker is idle
  // at that moment). NODE_CLUSTER_SCHED_POLICY, node's documented switch, still chooses when set.
  // The same shared socket is what lets a reload start new workers while the old ones still
  // listen: the port is never closed, and no connection finds it shut.
  if (process.env.NODE_CLUSTER_SCHED_POLICY === undefined) cluster.schedulingPolicy = cluster.SCHED_NONE;
  // stderr comes through us: V8's out-of-heap report is how a restart learns its reason.
  /** The heap cap of the workers forked next (a reload sets the new configuration's before forking). */
  let forkMaxHeap = cfg.workers.maxHeap;
  const setupPrimary = (c: PrimaryConfig) => {
    forkMaxHeap = c.workers.maxHeap;
    cluster.setupPrimary({ stdio: ['inherit', 'inherit', 'pipe', 'ipc'] });
  };
  setupPrimary(cfg);
  const health = (): HealthInfo => {
    const now = monotonicMs();
    const down: string[] = [];
    let alive = 0;
    const workers: WorkerHealth[] = [];
    for (const s of slots) {
      const why = downReason(s, now);
      if (why !== undefined) down.push(why);
      else if (s.role === 'normal') alive++;
      workers.push(workerHealth(s, why));
    }
    return { scanners: count, alive, down, workers };
  };
  const stats = await startPrimaryStats(cfg, log.child('stats'), health);
  const connections = new ConnectionLedger();
  /** The current workers: watched, restarted when they crash, counted in /healthy. */
  let slots: Slot[] = slotsFor(cfg, count, ports);
  /** Workers of a configuration being started by a reload, until every one is ready. */
  let incoming: { slots: Slot[]; settle: (failure?: string) => void } | undefined;
  /** Workers of a replaced configuration, finishing their scans. */
  const retiring = new Set<Slot>();
  let stopping = false;
  let started = false; // every slot has been ready once: from now on crashes are restarted
  const dataDir = cfg.dataDir;
  try {
    writePidFile(dataDir);
  } catch (err) {
    slog.warn(`cannot write the pid file in ${dataDir}; \`mailsift reload\` will not find this server: ${(err as Error).message}`);
  }

  const fork = (slot: Slot) => {
    slot.restartTimer = undefined;
    slot.ready = false;
    slot.startedAt = Date.now();
    slot.stalledMs = undefined;
    slot.outOfHeap = false;
    slot.liveness = new Liveness(monotonicMs());
    // Each role its own V8 flags (roleV8Flags): the settings cluster.fork reads at the fork.
    cluster.setupPrimary({ exec: WORKER_MAIN, args: [], execArgv: workerExecArgv(forkMaxHeap, slot.role) });
    const worker = cluster.fork({ ...workerMallocEnv(), ...slot.env, [SERVE_OPTIONS_ENV]: workerOptions, ...(boardDir ? { [BOARD_DIR_ENV]: boardDir } : {}) });
    // A message sent to a worker that is exiting fails after isConnected() said yes (EPIPE on the
    // channel's write); unheard, that 'error' would end the supervisor. The exit is handled below.
    worker.on('error', (err: Error) => slog.debug(`${slot.role} worker ${worker.process.pid}: ${err.message}`, { worker: slot.role, workerPid: worker.process.pid }));
    stats.attach(worker);
    if (slot.role === 'normal') connections.attach(worker);
    slot.worker = worker;
    const stderr = worker.process.stderr;
    slot.stderrDone = stderr
      ? forwardStderr(stderr, (line) => {
          if (isOutOfHeapLine(line)) slot.outOfHeap = true;
        })
      : Promise.resolve();
    worker.on('message', (m: unknown) => {
      if (isHeartbeat(m)) {
        if (slot.worker === worker) slot.liveness?.beat(m, monotonicMs());
        return;
      }
      const msg = m as IpcMessage | undefined;
      if (msg?.type === 'prepared') {
        slot.prepareWaiter?.(msg.error);
        return;
      }
      if (msg?.type === 'checked') {
        if (msg.seq !== undefined && msg.check !== undefined) checks.get(msg.seq)?.(decodeCheckReply(msg.check));
        return;
      }
      if (msg?.type !== 'ready') return;
      slot.ready = true;
      // The watchdog counts from readiness: start-up (engine, maps) is not judged.
      slot.liveness?.excuse(monotonicMs());
      if (incoming?.slots.includes(slot)) {
        if (incoming.slots.every((s) => s.ready)) incoming.settle();
        return;
      }
      if (!started && slots.every((s) => s.ready)) {
        started = true;
        const proxy = cfg.workers.proxy;
        const proxies = proxy.enabled ? `, ${proxy.count} proxy worker(s)` : '';
        slog.info(`started ${count} normal worker(s)${proxies}${cfg.workers.controller.enabled ? ' and a controller' : ''}`, { normal: count, ...(proxy.enabled ? { proxy: proxy.count } : {}) });
      }
    });
    worker.on('exit', (code, signal) => {
      // V8's last words may still be in the pipe when the exit is reported.
      const drained = withDeadline(slot.stderrDone ?? Promise.resolve(), STDERR_DRAIN_MS, { unref: true });
      void drained.then(() => onExit(slot, worker, code, signal));
    });
  };

  /** A worker whose loop has been silent past the limit: named in the log and /errors, killed, replaced. */
  const stall = (slot: Slot, now: number) => {
    const worker = slot.worker!;
    const pid = worker.process.pid!;
    const silentMs = slot.liveness!.silentFor(now);
    const board = boardDir ? readScanBoard(boardPath(boardDir, pid)) : undefined;
    slot.stalledMs = silentMs;
    worker.process.kill('SIGKILL');
    // The fuzzy worker keeps no board: it has only short datagram requests to be stuck in.
    const inFlight = slot.role === 'fuzzy' ? '' : `; ${describeInFlight(board, Date.now())}`;
    slog.error(
      `${slot.role} worker ${pid} stalled: no heartbeat for ${(silentMs / 1000).toFixed(1)} s (workers.watchdog_timeout ${cfg.workers.watchdogTimeout} s); killed to be replaced${inFlight}`,
      { worker: slot.role, workerPid: pid, id: reportId(board), silentMs, inFlight: board?.entries ?? [] },
    );
  };

  let lastTick = monotonicMs();
  const watchdog = setInterval(() => {
    const now = monotonicMs();
    const held = now - lastTick > SUPERVISOR_LAG_MS;
    lastTick = now;
    if (stopping) return;
    for (const s of slots) {
      if (!s.worker || !s.ready || !s.liveness || s.stalledMs !== undefined) continue;
      if (held) s.liveness.excuse(now);
      else if (watchdogMs > 0 && s.liveness.silentFor(now) >= watchdogMs) stall(s, now);
    }
  }, WATCHDOG_TICK_MS);
  watchdog.unref();

  let exitCode = 0;
  const finishIfDone = () => {
    if (slots.every((s) => !s.worker) && retiring.size === 0 && !incoming?.slots.some((s) => s.worker)) {
      slog.info('stopped', { status: exitCode });
      removePidFile(dataDir);
      // The counters are saved after the workers' last deltas have arrived.
      void stats.stop().finally(() => process.exit(exitCode));
    }
  };

  /** Why a worker ended, in words, for the restart line. */
  const exitReason = (slot: Slot, code: number | null, signal: string | null): string => {
    if (slot.stalledMs !== undefined) return `was killed by the watchdog after ${(slot.stalledMs / 1000).toFixed(1)} s without a heartbeat`;
    if (slot.outOfHeap) {
      const limit = cfg.workers.maxHeap > 0 ? `workers.max_heap ${mib(cfg.workers.maxHeap)}` : `V8's default limit ${mib(slot.liveness?.last?.heapLimit ?? 0)}`;
      return `ran out of heap memory (${limit})`;
    }
    return signal ? `killed by ${signal}` : `exited with status ${code}`;
  };

  const onExit = (slot: Slot, worker: Worker, code: number | null, signal: string | null) => {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    const pid = worker.process.pid;
    slot.prepareWaiter?.(`worker ${pid} exited`);
    if (slot.role === 'controller') for (const answer of [...checks.values()]) answer(undefined);
    if (boardDir && pid !== undefined) rmSync(boardPath(boardDir, pid), { force: true });
    if (retiring.delete(slot)) {
      if (slot.retireTimer) clearTimeout(slot.retireTimer);
      slog.debug(`${slot.role} worker ${pid} of the previous configuration has finished`, { worker: slot.role, workerPid: pid, code, signal });
      if (stopping) finishIfDone();
      return;
    }
    if (stopping) return finishIfDone();
    const why = exitReason(slot, code, signal);
    if (incoming?.slots.includes(slot)) {
      // A worker of the new configuration that cannot come up refuses the reload: the old ones stay.
      incoming.settle(`${slot.role} worker ${pid} ${why} before it was ready`);
      return;
    }
    const heap = slot.liveness?.last?.heapUsed;
    const fields = { worker: slot.role, workerPid: pid, code, signal, ...(slot.outOfHeap ? { reason: 'out of heap memory' } : {}), ...(slot.stalledMs !== undefined ? { reason: 'watchdog' } : {}), ...(heap !== undefined ? { lastHeapUsed: heap } : {}) };
    if (!started) {
      // A worker that cannot come up means the config or the machine is wrong: starting
      // with fewer workers than configured would be running half-configured.
      slog.error(`${slot.role} worker ${pid} ${why} before it was ready; stopping`, fields);
      stopAll(1);
      return;
    }
    const lived = Date.now() - slot.startedAt;
    slot.crashes = lived >= STABLE_AFTER_MS ? 1 : slot.crashes + 1;
    const delay = Math.min(RESTART_BASE_MS * 2 ** (slot.crashes - 1), RESTART_MAX_MS);
    slog.warn(`${slot.role} worker ${pid} ${why}; restarting in ${delay} ms`, { ...fields, delayMs: delay, crashesInARow: slot.crashes });
    slot.restarts++;
    slot.restartTimer = setTimeout(() => fork(slot), delay);
  };

  /** Tells a worker to finish its scans and exit; killed if it has not within the grace period. */
  const retire = (s: Slot, how: 'retire' | 'shutdown') => {
    if (s.restartTimer) clearTimeout(s.restartTimer);
    s.restartTimer = undefined;
    if (!s.worker) return;
    if (how === 'retire') {
      retiring.add(s);
      // An idle keep-alive connection is closed by its own time-out (CloseOptions.drain).
      const keepalive = cfg.workers.normal.keepaliveTimeout * 1000;
      s.retireTimer = setTimeout(() => {
        slog.warn(`${s.role} worker ${s.worker?.process.pid} of the previous configuration did not finish in time; killed`);
        s.worker?.process.kill('SIGKILL');
      }, graceMs(cfg) + keepalive + SHUTDOWN_EXTRA_MS);
      s.retireTimer.unref();
    }
    // A worker still starting has no message handler yet; a signal reaches it either way.
    if (s.ready && s.worker.isConnected()) s.worker.send({ type: how } satisfies IpcMessage);
    else s.worker.process.kill('SIGTERM');
  };

  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    followLogRotation();
    for (const s of slots) retire(s, 'shutdown');
    if (incoming) for (const s of incoming.slots) retire(s, 'shutdown');
    setTimeout(() => {
      for (const s of [...slots, ...retiring, ...(incoming?.slots ?? [])]) if (s.worker) s.worker.process.kill('SIGKILL');
      slog.error('workers did not stop in time; killed');
      process.exit(1);
    }, graceMs(cfg) + SHUTDOWN_EXTRA_MS).unref();
    finishIfDone();
  };

  /** Reload checks asked of the controller, by their seq: called with its answer, or undefined when it cannot answer. */
  const checks = new Map<number, (reply: ConfigCheckReply | undefined) => void>();
  let checkSeq = 0;
  /**
   * A reload's check of the configuration directory: by the controller, whose modules are loaded
   * (about a second less than a fresh process, which loads them all first); by a short-lived
   * process when there is no controller or it does not answer.
   */
  const checkConfigDir = async (): Promise<ConfigCheckReply> => {
    const controller = slots.find((s) => s.role === 'controller' && s.ready && s.worker?.isConnected());
    if (controller?.worker) {
      const seq = ++checkSeq;
      const worker = controller.worker;
      const reply = await new Promise<ConfigCheckReply | undefined>((resolve) => {
        const timer = setTimeout(() => answer(undefined), CONTROLLER_CHECK_TIMEOUT_MS);
        const answer = (r: ConfigCheckReply | undefined) => {
          clearTimeout(timer);
          checks.delete(seq);
          resolve(r);
        };
        checks.set(seq, answer);
        worker.send({ type: 'check', seq } satisfies IpcMessage);
      });
      if (reply) return reply;
      slog.warn('reload: the controller did not answer the configuration check; checking it in a new process');
    }
    return checkPrimaryConfig(confDir);
  };

  let reloads = 0;
  const report = (status: Omit<ReloadStatus, 'pid' | 'seq' | 'at'>) => {
    try {
      writeReloadStatus(dataDir, { pid: process.pid, seq: reloads, at: Date.now(), ...status });
    } catch (err) {
      slog.warn(`cannot write the reload status in ${dataDir}: ${(err as Error).message}`);
    }
  };

  /**
   * One reload: the configuration directory is checked as `configtest` checks it; a directory
   * with problems is refused, each problem logged, and the running workers keep their
   * configuration. Otherwise a new set of workers starts on it beside the old ones (they share
   * the listening sockets), and once every new worker is ready the old ones stop accepting,
   * finish the scans they have and close their connections after the current reply.
   */
  const reloadOnce = async (): Promise<void> => {
    reloads++;
    const t0 = Date.now();
    slog.info('reloading the configuration', { confDir });
    const check = await checkConfigDir();
    if (stopping) return;
    if (!check.part) {
      const problems = problemList(check.errors);
      slog.error(`reload refused: the configuration has ${problems.length} problem(s); the workers keep the running one`, { problems });
      for (const p of problems) slog.error(`reload refused: ${p}`);
      // The certificates may have been renewed all the same: the running workers re-read theirs.
      for (const s of slots) if (s.worker && !s.worker.isDead()) s.worker.process.kill('SIGHUP');
      report({ ok: false, message: `refused: ${problems.length} problem(s); the running configuration is kept`, problems, ms: Date.now() - t0 });
      return;
    }
    const { cfg: next, shape: nextShape } = check.part;
    slog.info(`reload: the configuration is sound (checked in ${Date.now() - t0} ms)`);
    const nextCount = countOverride ?? next.workers.normal.count;
    const nextPorts = await planPorts(next, ports);
    if (stopping) return;
    const normals = slots.filter((s) => s.role === 'normal');
    // Same processes (ports, counts, limits, stores, logs): the scan workers swap their engines in
    // place, in well under a second; the other workers are replaced.
    const inPlace = nextCount === count && nextShape === shape && normals.every((s) => s.worker && s.ready);
    if (inPlace) {
      const failure = await swapEngines(normals, nextShape);
      if (failure === undefined) {
        const ms = Date.now() - t0;
        cfg = next;
        shape = nextShape;
        ports = nextPorts;
        const others = slots.filter((s) => s.role !== 'normal');
        slog.info(`reloaded: ${normals.length} scan worker(s) took the new configuration in place in ${ms} ms${others.length ? `; replacing the ${others.map((s) => s.role).join(', ')} worker(s)` : ''}`, { workers: normals.length, ms, inPlace: true });
        let note = '';
        if (others.length) {
          setupPrimary(next);
          const fresh = slotsFor(next, nextCount, nextPorts).filter((s) => s.role !== 'normal');
          const otherFailure = await replaceSlots(others, fresh);
          if (otherFailure !== undefined) {
            note = `; the ${others.map((s) => s.role).join(', ')} worker(s) keep the previous configuration: ${otherFailure}`;
            slog.error(`reload: ${note.slice(2)}`);
          } else slog.info(`reload: the ${fresh.map((s) => s.role).join(', ')} worker(s) replaced in ${Date.now() - t0} ms`);
        }
        report({ ok: note === '', message: `reloaded: ${normals.length} scan worker(s) on the new configuration in ${ms} ms${note}`, ms: Date.now() - t0 });
        return;
      }
      slog.warn(`reload: the scan workers could not swap their engines (${failure}); starting new workers instead`);
    }
    const fresh = slotsFor(next, nextCount, nextPorts);
    setupPrimary(next);
    const failure = await replaceSlots(slots, fresh);
    if (failure !== undefined) {
      setupPrimary(cfg);
      slog.error(`reload failed: ${failure}; the workers keep the running configuration`);
      report({ ok: false, message: `failed: ${failure}; the running configuration is kept`, problems: [failure], ms: Date.now() - t0 });
      return;
    }
    const held = needsRestart(cfg, next);
    cfg = next;
    shape = nextShape;
    count = nextCount;
    ports = nextPorts;
    watchdogMs = cfg.workers.watchdogTimeout * 1000;
    const ms = Date.now() - t0;
    slog.info(`reloaded: ${fresh.length} worker(s) on the new configuration in ${ms} ms; the previous ones finish their scans`, { workers: fresh.length, ms });
    if (held.length) slog.warn(`reload: a restart is needed to apply ${held.join(', ')}`);
    report({ ok: true, message: `reloaded: ${fresh.length} worker(s) on the new configuration${held.length ? `; a restart is needed to apply ${held.join(', ')}` : ''}`, ms });
  };

  /**
   * Every scan worker builds an engine on `next` beside its running one; only when all have,
   * they all swap (within milliseconds of each other). One that cannot makes them all keep theirs.
   */
  const swapEngines = async (workers: Slot[], nextShape: string): Promise<string | undefined> => {
    const seq = ++swapSeq;
    const answers = await Promise.all(
      workers.map(
        (s) =>
          new Promise<string | undefined>((resolve) => {
            const timer = setTimeout(() => done(`worker ${s.worker?.process.pid} did not build its engine within ${RELOAD_READY_TIMEOUT_MS / 1000} s`), RELOAD_READY_TIMEOUT_MS);
            const done = (error?: string) => {
              clearTimeout(timer);
              s.prepareWaiter = undefined;
              resolve(error);
            };
            s.prepareWaiter = done;
            if (!s.worker?.isConnected()) return done('worker not running');
            s.worker.send({ type: 'prepare', seq, shape: nextShape } satisfies IpcMessage);
          }),
      ),
    );
    const failure = answers.find((a) => a !== undefined);
    const verdict: IpcMessage = { type: failure === undefined && !stopping ? 'commit' : 'abort', seq };
    for (const s of workers) if (s.worker?.isConnected()) s.worker.send(verdict);
    return stopping ? 'stopping' : failure;
  };

  /** Starts `fresh` beside `old`; once every fresh worker is ready they take the old ones' places and the old ones retire. */
  const replaceSlots = async (old: Slot[], fresh: Slot[]): Promise<string | undefined> => {
    const failure = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => incoming?.settle(`not every new worker was ready within ${RELOAD_READY_TIMEOUT_MS / 1000} s`), RELOAD_READY_TIMEOUT_MS);
      incoming = {
        slots: fresh,
        settle: (why) => {
          clearTimeout(timer);
          incoming = undefined;
          resolve(why);
        },
      };
      for (const s of fresh) fork(s);
    });
    if (failure !== undefined || stopping) {
      for (const s of fresh) retire(s, 'retire');
      return failure ?? 'stopping';
    }
    slots = [...slots.filter((s) => !old.includes(s)), ...fresh];
    for (const s of old) retire(s, 'retire');
    return undefined;
  };
  let swapSeq = 0;

  // Signals during a reload are folded into one more reload after it: the last edit wins.
  let reloading: Promise<void> | undefined;
  let again = false;
  const reload = () => {
    if (stopping) return;
    if (reloading) {
      again = true;
      return;
    }
    reloading = (async () => {
      do {
        again = false;
        try {
          await reloadOnce();
        } catch (err) {
          slog.error(`reload failed: ${(err as Error).message}`, { err: String((err as Error).stack ?? err) });
          report({ ok: false, message: `failed: ${(err as Error).message}`, ms: 0 });
        }
      } while (again && !stopping);
    })().finally(() => {
      reloading = undefined;
    });
  };

  process.on('exit', () => {
    for (const s of [...slots, ...retiring, ...(incoming?.slots ?? [])]) s.worker?.process.kill('SIGKILL');
  });
  onStopSignal((signal) => {
    slog.info('stopping', { signal });
    stopAll(0);
  });
  // SIGHUP re-reads the whole configuration (new workers re-read their TLS files too); without a handler SIGHUP would kill us.
  process.on('SIGHUP', reload);
  // `kill -USR1 <supervisor>` reaches every worker, as Rspamd's main process passes it on.
  forwardOperatorSignal((signal) => {
    for (const s of [...slots, ...(incoming?.slots ?? [])]) if (s.worker && !s.worker.isDead()) s.worker.process.kill(signal);
  });
  for (const s of slots) fork(s);
}


/**
 * `mailsift serve`. Loads the configuration (throws ConfigError on any problem, before any
 * listener opens), then runs the workers. Resolves once this process is set up.
 */
export async function serve(opts: ServeOptions): Promise<void> {
  installOperatorSignals();
  if (cluster.isWorker || opts.single) {
    const { serveInProcess } = await import('./in-process.js');
    return serveInProcess(opts);
  }
  const part = await loadPrimaryConfig(opts.confDir);
  const log = createLogger({ level: part.cfg.logging.level, format: part.cfg.logging.format, ...(part.cfg.logging.file ? { file: part.cfg.logging.file } : {}) });
  // stdout is the log stream: a library's console output must arrive as a record, not raw text.
  routeConsoleToLog(log.child('console'));
  operatorSignalLog(log.child('supervisor'));
  return runPrimary(opts.confDir, part, log, opts.workers, opts.serverName);
}
