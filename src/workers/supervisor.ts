// The process model: a supervisor forks N normal workers that share
// the scan port through node:cluster plus one controller, restarts a crashed worker with
// back-off, and stops everything gracefully on SIGTERM/SIGINT. `--single` runs both workers
// in the calling process. Each worker process loads the configuration and builds its own
// engine, so a worker never shares state with another except through the stores.

import cluster, { type Worker } from 'node:cluster';
import { rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import v8 from 'node:v8';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { createEngine } from '../engine/index.js';
import { routeConsoleToLog } from '../observability/console-capture.js';
import { loadServerModules, reportPlugins, type ServerModules } from './server-modules.js';
import { createLogger, type RootLogger } from '../observability/log.js';
import { startControllerWorker } from './controller.js';
import { reloadTlsListeners, tlsListenOptions, type RunningWorker } from './listen.js';
import { createNormalHandler, startNormalWorker } from './normal.js';
import { removeStaleSocket, startProxyWorker } from './proxy.js';
import { needsSelfScan } from '../proxy/relay/proxy-relay.js';
import { loadDictionaries } from '../http/zstd.js';
import type { Handler } from '../http/types.js';
import { startDynamicSync, type DynamicSync } from './dynamic-config.js';
import { createMapRegistry } from '../maps/index.js';
import { createHttpCrypt } from '../http/crypt/index.js';
import { openProcessServices, startPrimaryStats } from './stats-wiring.js';
import type { StatsHub } from '../observability/stats-hub.js';
import { startFuzzyWorker } from '../fuzzy-storage/worker.js';
import { ConnectionLedger } from './conn-balance.js';
import { roleV8Flags, tuneV8ForScanning, tuneV8ForSupervising, workerMallocEnv } from './v8-tuning.js';
import { DEADLINE_PASSED, withDeadline } from '../plugin-api/index.js';
import type { HealthInfo, WorkerHealth } from '../observability/stats-hub.js';
import { boardPath, makeBoardDir, readScanBoard, ScanBoard } from './scan-board.js';
import { describeInFlight, isHeartbeat, isOutOfHeapLine, Liveness, LOST_AFTER_MS, mib, monotonicMs, reportId, startHeartbeat, WATCHDOG_TICK_MS } from './watchdog.js';
import { startWatchdogThread } from './watchdog-thread.js';
import { preloadMailauth } from '../module-helpers/mailauth-libs.js';
import { forwardStderr } from './worker-stderr.js';
import { checkConfig } from './config-check.js';
import { processShape, SwappableScanner, type EngineSet } from './engine-swap.js';
import type { MapRegistry } from '../maps/index.js';
import { removePidFile, writePidFile, writeReloadStatus, type ReloadStatus } from './run-files.js';
import type { CloseOptions } from '../http/server.js';

export type WorkerRole = 'normal' | 'controller' | 'fuzzy' | 'proxy';

export interface ServeOptions {
  /** Configuration directory. */
  confDir: string;
  /** Run the normal and controller workers in this process (no cluster). */
  single?: boolean;
  /** Number of normal workers, overriding `workers.normal.count`. */
  workers?: number;
  /** `Server:` header value. */
  serverName?: string;
}

/** First restart delay after a crash; doubled for each crash in a row. */
const RESTART_BASE_MS = 250;
/** Longest wait between restarts: a worker that keeps crashing is retried this often. */
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before crashing is "stable": its back-off starts over. */
const STABLE_AFTER_MS = 30_000;
/** Time given to in-flight scans on shutdown beyond the task deadline, before a hard stop. */
const SHUTDOWN_EXTRA_MS = 5_000;
/** Longest wait for every worker of a reloaded configuration to be ready before the reload is given up. */
const RELOAD_READY_TIMEOUT_MS = 120_000;
/** Exit status of a worker that cannot start (config or bind error): EX_CONFIG from sysexits. */
const EXIT_STARTUP_FAILED = 78;

/** A watchdog tick this much later than planned means the supervisor itself was held up: silences seen then are not the workers' fault. */
const SUPERVISOR_LAG_MS = 4 * WATCHDOG_TICK_MS;
/** Time a dead worker's stderr is given to deliver its last lines (V8's out-of-memory report) before its exit is judged. */
const STDERR_DRAIN_MS = 1_000;

const ROLE_ENV = 'MAILSIFT_WORKER_ROLE';
/** Directory where each worker keeps its scan board (scan-board.ts), named by the supervisor. */
const BOARD_DIR_ENV = 'MAILSIFT_SCAN_BOARD_DIR';
/** Port the supervisor picked for a controller configured with port 0 (see freePort). */
const CONTROLLER_PORT_ENV = 'MAILSIFT_CONTROLLER_PORT';
/** Ports the supervisor picked for the proxy's TCP binds configured with port 0, as a JSON list by bind. */
const PROXY_PORTS_ENV = 'MAILSIFT_PROXY_PORTS';

/** A running worker; a scan worker can also build a new engine for a reload and swap it in (engine-swap.ts). */
interface Listener extends RunningWorker {
  prepareSwap?(cfg: LoadedConfig): Promise<{ commit(): void; abort(): void }>;
}

interface IpcMessage {
  /**
   * `retire`: a reload replaced this worker; it drains its connections (CloseOptions) and exits.
   * `prepare` → `prepared`, then `commit` or `abort`: a reload that keeps the processes swaps
   * each scan worker's engine, all of them only once every one has built its new engine.
   */
  type: 'ready' | 'shutdown' | 'retire' | 'prepare' | 'prepared' | 'commit' | 'abort';
  role?: WorkerRole;
  /** Which reload a prepare/commit/abort/prepared belongs to. */
  seq?: number;
  /** processShape() of the configuration the supervisor checked: the worker refuses another. */
  shape?: string;
  /** `prepared`: why the worker could not. */
  error?: string;
}

/** `host:port` with IPv6 hosts bracketed, as in the config's `bind`. */
export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** `hub`: this process aggregates the statistics (--single); otherwise they go over IPC. */
async function startRole(role: WorkerRole, cfg: LoadedConfig, set: ServerModules, log: RootLogger, serverName: string | undefined, hub?: StatsHub, board?: ScanBoard): Promise<Listener> {
  // Rspamd names its scan lines' module `task`; the same tag here lets an operator grep them.
  const svc = await openProcessServices(cfg, log.child('stores'), role, hub, log.child('task'));
  // After the services: the error sink of the /errors ring is in place.
  if (role !== 'fuzzy') reportPlugins(set, log.child('plugins'));
  const engineOptions = { log: log.child('engine'), stores: svc.stores, localModules: set.local };
  // Maps are read relative to the config dir; saved actions/scores/maps reach this worker by polling.
  const maps = createMapRegistry({ baseDir: cfg.dir, log: log.child('maps') });
  let dynamic: DynamicSync | undefined;
  let swappable: SwappableScanner | undefined;
  const withServices = (l: Listener): Listener => ({
    ...l,
    async close(how) {
      await l.close(how);
      dynamic?.stop();
      // A scan worker's engine may have been swapped: its own maps are the ones in use.
      if (swappable) swappable.close();
      else maps.close();
      await svc.close();
    },
  });
  if (role === 'fuzzy') return withServices(await startFuzzyWorker(cfg.workers.fuzzy, svc.stores.fuzzy, log.child('fuzzy'), cfg.stores.fuzzy.expire, svc.stores.scan?.fuzzy));
  if (role === 'proxy') {
    const p = cfg.workers.proxy;
    const plog = log.child('proxy');
    let selfScan: Handler | undefined;
    if (needsSelfScan(p)) {
      // Self-scan: the normal worker's route table over the proxy's own engine.
      tuneV8ForScanning();
      await preloadMailauth();
      const scanner = await createEngine(cfg.engine, set.modules, { ...engineOptions, maps });
      dynamic = startDynamicSync({ engine: scanner, kv: svc.stores.kv, log: plog });
      await dynamic.ready;
      const d = cfg.workers.normal.dictionaries;
      selfScan = createNormalHandler({
        scanner,
        maxMessage: p.maxMessage,
        dictionaries: loadDictionaries({ ...(d.input ? { input: d.input } : {}), ...(d.output ? { output: d.output } : {}) }),
        log: plog,
        onScan: svc.observeScan,
        // The proxy's clients may not name local files (its front end refuses them before this).
        fileInputPeers: [],
        ...(board ? { board } : {}),
      });
    }
    const handle = await startProxyWorker({
      config: p,
      log: plog,
      ...(selfScan ? { selfScan } : {}),
      ...(serverName ? { serverName } : {}),
      onConnection: () => svc.recorder.connection(),
      // Under node:cluster the supervisor removed stale socket files before any worker bound them.
      removeStaleSockets: !cluster.isWorker,
    });
    handle.addresses.forEach((a, i) => {
      const b = p.listen[i]!;
      plog.info(`listening on ${a} (${p.mode})`, { worker: 'proxy', address: a, mode: p.mode, ...(b.kind === 'tcp' ? { host: b.host, port: Number(a.slice(a.lastIndexOf(':') + 1)) } : {}) });
    });
    return withServices(handle);
  }
  if (role === 'normal') {
    tuneV8ForScanning();
    await preloadMailauth();
    const w = cfg.workers.normal;
    const wlog = log.child('normal');
    const engineSet = async (c: LoadedConfig, m: MapRegistry): Promise<EngineSet> => {
      const engine = await createEngine(c.engine, set.modules, { ...engineOptions, maps: m });
      const sync = startDynamicSync({ engine, kv: svc.stores.kv, log: wlog });
      await sync.ready;
      return { engine, dynamic: sync, maps: m };
    };
    const scanner = new SwappableScanner(await engineSet(cfg, maps));
    swappable = scanner;
    const handle = await startNormalWorker({
      host: w.host,
      port: w.port,
      scanner,
      maxMessage: w.maxMessage,
      dictionaries: {
        ...(w.dictionaries.input ? { input: w.dictionaries.input.file } : {}),
        ...(w.dictionaries.output ? { output: w.dictionaries.output.file } : {}),
      },
      log: wlog,
      fileInputPeers: w.fileInputPeers,
      legacyCompat: w.legacyCompat,
      transport: { keepAliveTimeoutMs: w.keepaliveTimeout * 1000, crypt: createHttpCrypt(w.crypt, wlog) },
      ...(serverName ? { serverName } : {}),
      listen: tlsListenOptions(w.tls, wlog),
      onScan: svc.observeScan,
      onConnection: () => svc.recorder.connection(),
      ...(board ? { board } : {}),
      balanceConnections: cluster.isWorker,
    });
    if (!w.tls?.only) wlog.info(`listening on ${formatAddress(w.host, handle.port)}`, { worker: 'normal', host: w.host, port: handle.port });
    if (w.tls) wlog.info(`listening with TLS on ${formatAddress(w.tls.host, handle.tlsPort ?? 0)}`, { worker: 'normal', host: w.tls.host, tlsPort: handle.tlsPort });
    return {
      ...withServices(handle),
      async prepareSwap(next) {
        const m = createMapRegistry({ baseDir: next.dir, log: log.child('maps') });
        let set: EngineSet;
        try {
          set = await engineSet(next, m);
        } catch (err) {
          m.close();
          throw err;
        }
        return { commit: () => scanner.replace(set), abort: () => SwappableScanner.discard(set) };
      },
    };
  }
  const c = cfg.workers.controller;
  const clog = log.child('controller');
  const engine = await createEngine(cfg.engine, set.modules, { ...engineOptions, maps });
  dynamic = startDynamicSync({ engine, kv: svc.stores.kv, log: clog });
  await dynamic.ready;
  const context = { log: clog, config: cfg, engine, stores: svc.stores, stats: { view: svc.view, recorder: svc.recorder }, startedAt: Date.now() };
  const handle = await startControllerWorker({ host: c.host, port: c.port, log: clog, context, transport: { crypt: createHttpCrypt(c.crypt, clog) }, listen: tlsListenOptions(c.tls, clog), ...(serverName ? { serverName } : {}), ...(board ? { board } : {}) });
  if (!c.tls?.only) clog.info(`listening on ${formatAddress(c.host, handle.port)}`, { worker: 'controller', host: c.host, port: handle.port });
  if (c.tls) clog.info(`listening with TLS on ${formatAddress(c.tls.host, handle.tlsPort ?? 0)}`, { worker: 'controller', host: c.tls.host, tlsPort: handle.tlsPort });
  return withServices(handle);
}

/** Closes listeners (stop accepting, let in-flight scans finish) within the grace period. */
async function closeAll(listeners: Listener[], graceMs: number, log: RootLogger, how?: CloseOptions): Promise<boolean> {
  const closed = Promise.allSettled(listeners.map((l) => l.close(how))).then((results) => {
    for (const r of results) if (r.status === 'rejected') log.error('error while closing a listener', { err: String(r.reason) });
  });
  return (await withDeadline(closed, graceMs, { unref: true })) !== DEADLINE_PASSED;
}

function graceMs(cfg: LoadedConfig): number {
  return cfg.workers.normal.taskTimeout * 1000 + SHUTDOWN_EXTRA_MS;
}

function onStopSignal(handler: (signal: NodeJS.Signals) => void): void {
  let fired = false;
  const once = (signal: NodeJS.Signals) => {
    if (fired) return; // a second Ctrl-C while draining is not a reason to drain twice
    fired = true;
    handler(signal);
  };
  process.on('SIGTERM', once);
  process.on('SIGINT', once);
}

/** `node` options for a worker process: the parent's, the role's V8 flags, then the heap cap. */
function workerExecArgv(maxHeap: number, role: WorkerRole): string[] {
  // Appended: V8 takes the last of repeated flags, so the configuration wins over the parent's.
  const heap = maxHeap > 0 ? [`--max-old-space-size=${Math.floor(maxHeap / (1024 * 1024))}`] : [];
  return [...process.execArgv, ...roleV8Flags(role), ...heap];
}

/**
 * `--single`: both workers in this process. Resolves once listening. A process cannot replace
 * its own stalled loop, so here the watchdog is a thread that kills the whole process (with a
 * log line naming the scans in flight); a service manager (systemd `Restart=`, a container
 * restart policy) starts it again. `workers.max_heap` cannot apply to a process already running:
 * start node with `--max-old-space-size` instead.
 */
export async function runSingle(cfg: LoadedConfig, set: ServerModules, log: RootLogger, serverName?: string, confDir?: string): Promise<void> {
  const stats = await startPrimaryStats(cfg, log.child('stats'), () => ({ scanners: 1, alive: 1 }));
  const boardDir = makeBoardDir(log);
  const board = boardDir ? ScanBoard.open(boardPath(boardDir, process.pid), log) : undefined;
  const listeners: Listener[] = [await startRole('normal', cfg, set, log, serverName, stats.hub, board)];
  if (cfg.workers.controller.enabled) listeners.push(await startRole('controller', cfg, set, log, serverName, stats.hub, board));
  if (cfg.workers.fuzzy.enabled) listeners.push(await startRole('fuzzy', cfg, set, log, serverName, stats.hub));
  if (cfg.workers.proxy.enabled) listeners.push(await startRole('proxy', cfg, set, log, serverName, stats.hub, board));
  const heapLimit = v8.getHeapStatistics().heap_size_limit;
  // V8's limit adds the young generation to the old-space cap; a tenth more is still "the same cap".
  if (cfg.workers.maxHeap > 0 && heapLimit > cfg.workers.maxHeap * 1.1) {
    log.info(`--single: workers.max_heap (${mib(cfg.workers.maxHeap)}) cannot apply to a running process; its heap limit is ${mib(heapLimit)} (start node with --max-old-space-size to cap it)`);
  }
  // From here on, as the supervisor does from a worker's readiness: start-up is not judged.
  if (cfg.workers.watchdogTimeout > 0) startWatchdogThread({ timeoutMs: cfg.workers.watchdogTimeout * 1000, ...(board ? { boardPath: board.path } : {}), format: cfg.logging.format }, log);
  if (confDir) {
    try {
      writePidFile(cfg.dataDir);
    } catch (err) {
      log.warn(`cannot write the pid file in ${cfg.dataDir}; \`mailsift reload\` will not find this server: ${(err as Error).message}`);
    }
  }
  let reloads = 0;
  let reloading = false;
  process.on('SIGHUP', () => {
    reloadTlsListeners(listeners, log);
    if (!confDir || reloading) return;
    reloading = true;
    const seq = ++reloads;
    const t0 = Date.now();
    const report = (ok: boolean, message: string, problems: string[] = []) => {
      try {
        writeReloadStatus(cfg.dataDir, { pid: process.pid, seq, at: Date.now(), ok, message, ...(problems.length ? { problems } : {}), ms: Date.now() - t0 });
      } catch {
        // The log lines already said it.
      }
    };
    void (async () => {
      const check = await checkConfig(confDir);
      if (!check.cfg) {
        const problems = problemList(check.errors);
        log.error(`reload refused: the configuration has ${problems.length} problem(s); the running one is kept`, { problems });
        for (const p of problems) log.error(`reload refused: ${p}`);
        return report(false, `refused: ${problems.length} problem(s); the running configuration is kept`, problems);
      }
      // One process cannot start its replacement beside itself on the same ports: what the scan
      // engine reads is applied in place; a change to the processes waits for a restart.
      const scan = listeners[0];
      if (processShape(check.cfg) !== processShape(cfg) || !scan?.prepareSwap) {
        const message = 'the configuration is sound but changes the workers themselves (ports, limits, stores, logging); --single applies it on a restart';
        log.warn(`reload: ${message}`);
        return report(false, message);
      }
      const swap = await scan.prepareSwap(check.cfg);
      swap.commit();
      const message = `reloaded: the scan worker took the new configuration in ${Date.now() - t0} ms${listeners.length > 1 ? '; the controller and other workers take it on a restart' : ''}`;
      log.info(message);
      report(true, message);
    })()
      .catch((err: unknown) => {
        log.error(`reload failed: ${(err as Error).message}; the running configuration is kept`);
        report(false, `failed: ${(err as Error).message}`);
      })
      .finally(() => {
        reloading = false;
      });
  });
  onStopSignal((signal) => {
    log.info('stopping', { signal });
    if (confDir) removePidFile(cfg.dataDir);
    void closeAll(listeners, graceMs(cfg), log).then(async (ok) => {
      if (!ok) log.error('in-flight scans did not finish in time; exiting anyway');
      await stats.stop().catch((err: unknown) => log.error('could not save statistics', { err: String(err) }));
      process.exit(ok ? 0 : 1);
    });
  });
}

/** Inside a cluster worker: start the role named by the supervisor, stop when told to. */
async function runClusterWorker(confDir: string, cfg: LoadedConfig, set: ServerModules, log: RootLogger, serverName?: string): Promise<void> {
  const role = process.env[ROLE_ENV] as WorkerRole;
  // The reason a worker dies belongs in the log next to the supervisor's restart line.
  process.on('uncaughtException', (err) => {
    log.error(`${role} worker crashed: ${err.message}`, { worker: role, err: String(err.stack ?? err) });
    process.exit(1);
  });
  const boardDir = process.env[BOARD_DIR_ENV];
  // The fuzzy worker answers UDP datagrams one by one; it has no long requests to name.
  const board = boardDir && role !== 'fuzzy' ? ScanBoard.open(boardPath(boardDir, process.pid), log) : undefined;
  // A send on a closed channel would throw; the 'disconnect' handler below stops the worker then.
  startHeartbeat((m) => process.connected && process.send?.(m), () => board?.inFlight ?? 0);
  let listener: Listener | undefined;
  // Registered before start-up: an unhandled SIGHUP would kill a worker still starting.
  process.on('SIGHUP', () => reloadTlsListeners(listener ? [listener] : [], log));
  try {
    listener = await startRole(role, cfg, set, log, serverName, undefined, board);
  } catch (err) {
    const listenProblem = listenErrorText(err);
    // A port taken or not ours is an operator's problem, said in one line; anything else is ours, with its stack.
    if (listenProblem) log.error(`${role} worker failed to start: ${listenProblem}`, { worker: role });
    else log.error(`${role} worker failed to start: ${(err as Error).message}`, { worker: role, err: String((err as Error).stack ?? err) });
    process.exit(EXIT_STARTUP_FAILED);
  }
  let stopping = false;
  const stop = (why: string, how?: CloseOptions) => {
    if (stopping) return;
    stopping = true;
    log.debug('worker stopping', { worker: role, why });
    void closeAll([listener], graceMs(cfg), log, how).then((ok) => process.exit(ok ? 0 : 1));
  };
  let prepared: { seq: number; commit(): void; abort(): void } | undefined;
  const prepare = async (seq: number, shape: string): Promise<void> => {
    try {
      if (!listener?.prepareSwap) throw new Error(`a ${role} worker cannot swap its engine`);
      // As the worker would load it on a start; the supervisor has checked the same directory.
      // Plugin code is loaded once per process: a reload re-reads their settings, a restart their code.
      const next = await loadConfig(confDir, { modules: set.modules, runtime: false });
      if (processShape(next) !== shape) throw new Error('the configuration changed while it was being applied');
      const swap = await listener.prepareSwap(next);
      prepared?.abort();
      prepared = { seq, ...swap };
      process.send?.({ type: 'prepared', seq } satisfies IpcMessage);
    } catch (err) {
      process.send?.({ type: 'prepared', seq, error: (err as Error).message } satisfies IpcMessage);
    }
  };
  process.on('message', (m: IpcMessage) => {
    if (m?.type === 'shutdown') stop('supervisor asked');
    else if (m?.type === 'retire') stop('replaced by a reload', { drain: true });
    else if (m?.type === 'prepare' && m.seq !== undefined && m.shape !== undefined) void prepare(m.seq, m.shape);
    else if ((m?.type === 'commit' || m?.type === 'abort') && prepared && prepared.seq === m.seq) {
      const p = prepared;
      prepared = undefined;
      if (m.type === 'abort') return p.abort();
      p.commit();
      log.info('configuration applied: the new engine scans from now on', { worker: role });
      // Certificate files may have been renewed under the same paths.
      if (listener) reloadTlsListeners([listener], log);
    }
  });
  // The supervisor coordinates Ctrl-C for the whole process group; SIGTERM aimed at one
  // worker stops just that worker (and the supervisor replaces it).
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('disconnect', () => stop('supervisor gone'));
  process.send?.({ type: 'ready', role } satisfies IpcMessage);
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

async function planPorts(cfg: LoadedConfig, previous?: PortPlan): Promise<PortPlan> {
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
function slotsFor(cfg: LoadedConfig, count: number, ports: PortPlan): Slot[] {
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
function needsRestart(from: LoadedConfig, to: LoadedConfig): string[] {
  const out: string[] = [];
  if (from.dataDir !== to.dataDir) out.push('data_dir');
  if (JSON.stringify(from.stores) !== JSON.stringify(to.stores)) out.push('stores (the statistics the supervisor keeps)');
  if (from.logging.level !== to.logging.level || from.logging.format !== to.logging.format) out.push("logging (the supervisor's own lines; the workers take the new one)");
  return out;
}

/** The problems of a refused configuration, one per entry. */
function problemList(errors: string): string[] {
  return errors.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

/** The cluster primary: forks, watches and replaces workers, and replaces them all on a reload. */
async function runPrimary(confDir: string, initial: LoadedConfig, log: RootLogger, countOverride: number | undefined): Promise<void> {
  /** The configuration the current workers run. */
  let cfg = initial;
  tuneV8ForSupervising();
  let count = countOverride ?? cfg.workers.normal.count;
  let ports = await planPorts(cfg);
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
  const setupPrimary = (c: LoadedConfig) => {
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
    cluster.setupPrimary({ execArgv: workerExecArgv(forkMaxHeap, slot.role) });
    const worker = cluster.fork({ ...workerMallocEnv(), ...slot.env, ...(boardDir ? { [BOARD_DIR_ENV]: boardDir } : {}) });
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
    for (const s of slots) retire(s, 'shutdown');
    if (incoming) for (const s of incoming.slots) retire(s, 'shutdown');
    setTimeout(() => {
      for (const s of [...slots, ...retiring, ...(incoming?.slots ?? [])]) if (s.worker) s.worker.process.kill('SIGKILL');
      slog.error('workers did not stop in time; killed');
      process.exit(1);
    }, graceMs(cfg) + SHUTDOWN_EXTRA_MS).unref();
    finishIfDone();
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
    const check = await checkConfig(confDir);
    if (stopping) return;
    if (!check.cfg) {
      const problems = problemList(check.errors);
      slog.error(`reload refused: the configuration has ${problems.length} problem(s); the workers keep the running one`, { problems });
      for (const p of problems) slog.error(`reload refused: ${p}`);
      // The certificates may have been renewed all the same: the running workers re-read theirs.
      for (const s of slots) if (s.worker && !s.worker.isDead()) s.worker.process.kill('SIGHUP');
      report({ ok: false, message: `refused: ${problems.length} problem(s); the running configuration is kept`, problems, ms: Date.now() - t0 });
      return;
    }
    const next = check.cfg;
    slog.info(`reload: the configuration is sound (checked in ${Date.now() - t0} ms)`);
    const nextCount = countOverride ?? next.workers.normal.count;
    const nextPorts = await planPorts(next, ports);
    if (stopping) return;
    const normals = slots.filter((s) => s.role === 'normal');
    // Same processes (ports, counts, limits, stores, logs): the scan workers swap their engines in
    // place, in well under a second; the other workers are replaced.
    const inPlace = nextCount === count && processShape(next) === processShape(cfg) && normals.every((s) => s.worker && s.ready);
    if (inPlace) {
      const failure = await swapEngines(normals, next);
      if (failure === undefined) {
        const ms = Date.now() - t0;
        cfg = next;
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
  const swapEngines = async (workers: Slot[], next: LoadedConfig): Promise<string | undefined> => {
    const seq = ++swapSeq;
    const shape = processShape(next);
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
            s.worker.send({ type: 'prepare', seq, shape } satisfies IpcMessage);
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
  for (const s of slots) fork(s);
}

/**
 * `mailsift serve`. Loads the configuration (throws ConfigError on any problem, before any
 * listener opens), then runs the workers. Resolves once this process is set up.
 */
export async function serve(opts: ServeOptions): Promise<void> {
  // The supervisor (or the --single process) checks every file, the stores' paths and the
  // controller plugin files before any listener opens; a cluster worker reads the files again
  // (a restarted one may find them edited) but leaves the rest to the supervisor's check.
  // Users' plugins first: their module files (local.d/<plugin>.yaml) are checked with the rest.
  // A plugin that does not load is reported by each worker and left out, never a start-up failure.
  const set = await loadServerModules(opts.confDir);
  const cfg = await loadConfig(opts.confDir, { modules: set.modules, runtime: !cluster.isWorker });
  const log = createLogger({ level: cfg.logging.level, format: cfg.logging.format });
  // stdout is the log stream: a library's console output must arrive as a record, not raw text.
  routeConsoleToLog(log.child('console'));
  if (cluster.isWorker) {
    const port = process.env[CONTROLLER_PORT_ENV];
    if (port) cfg.workers.controller.port = Number(port);
    const proxyPorts = process.env[PROXY_PORTS_ENV];
    if (proxyPorts) {
      const ports = JSON.parse(proxyPorts) as number[];
      cfg.workers.proxy.listen.forEach((b, i) => {
        if (b.kind === 'tcp' && ports[i]) b.port = ports[i];
      });
    }
    return runClusterWorker(opts.confDir, cfg, set, log, opts.serverName);
  }
  if (opts.single) return runSingle(cfg, set, log, opts.serverName, opts.confDir);
  return runPrimary(opts.confDir, cfg, log, opts.workers);
}

/** Bind failures an operator fixes (port in use, privileged port, address not on this host), as one sentence. */
function listenErrorText(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  const where = e.address !== undefined ? `${e.address}${e.port !== undefined ? `:${e.port}` : ''}` : 'its address';
  switch (e.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: the address is already in use (another mailsift or Rspamd running?)`;
    case 'EACCES':
      return `cannot listen on ${where}: permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE)`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${where}: that address is not on this host`;
    default:
      return undefined;
  }
}
