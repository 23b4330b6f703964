// The worker side of `mailsift serve`: a cluster worker starts the role the supervisor named
// (normal, controller, fuzzy, proxy) and stops or swaps its engine when told; `--single` starts
// them all in the calling process. This is the code that loads the engine; the supervisor
// (supervisor.ts) imports it only under `--single`.

import cluster from 'node:cluster';
import v8 from 'node:v8';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { DEADLINE_PASSED, withDeadline } from '../core/deadline.js';
import { createEngine } from '../engine/index.js';
import { createHttpCrypt } from '../http/crypt/index.js';
import type { CloseOptions } from '../http/server.js';
import type { Handler } from '../http/types.js';
import { loadDictionaries } from '../http/zstd.js';
import { createMapRegistry, type MapRegistry } from '../maps/index.js';
import { preloadMailauth } from '../module-helpers/mailauth-libs.js';
import { routeConsoleToLog } from '../observability/console-capture.js';
import { createLogger, followLogRotation, type RootLogger } from '../observability/log.js';
import type { StatsHub } from '../observability/stats-hub.js';
import { checkConfig } from './config-check.js';
import { startDynamicSync, type DynamicSync } from './dynamic-config.js';
import { SwappableScanner, type EngineSet } from './engine-swap.js';
import { reloadTlsListeners, tlsListenOptions, type RunningWorker } from './listen.js';
import { createNormalHandler, startNormalWorker } from './normal.js';
import {
  BOARD_DIR_ENV,
  CONTROLLER_PORT_ENV,
  EXIT_STARTUP_FAILED,
  formatAddress,
  graceMs,
  onStopSignal,
  problemList,
  encodeCheckReply,
  primaryPartOf,
  processShape,
  PROXY_PORTS_ENV,
  ROLE_ENV,
  type ConfigCheckReply,
  type IpcMessage,
  type ServeOptions,
  type WorkerRole,
} from './process-common.js';
import { removePidFile, writePidFile, writeReloadStatus } from './run-files.js';
import { boardPath, makeBoardDir, ScanBoard } from './scan-board.js';
import { loadServerModules, reportPlugins, type ServerModules } from './server-modules.js';
import { openProcessServices, startPrimaryStats } from './stats-wiring.js';
import { tuneV8ForScanning } from './v8-tuning.js';
import { mib, startHeartbeat } from './watchdog.js';
import { startWatchdogThread } from './watchdog-thread.js';
import { installOperatorSignals, operatorSignalLog } from './operator-signals.js';

/** A running worker; a scan worker can also build a new engine for a reload and swap it in (engine-swap.ts). */
interface Listener extends RunningWorker {
  prepareSwap?(cfg: LoadedConfig): Promise<{ commit(): void; abort(): void }>;
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
  // Each role's own code is loaded by the process that runs it: a scan worker does not carry the
  // controller's, the proxy's or the fuzzy storage's.
  if (role === 'fuzzy') {
    const { startFuzzyWorker } = await import('../fuzzy-storage/worker.js');
    return withServices(await startFuzzyWorker(cfg.workers.fuzzy, svc.stores.fuzzy, log.child('fuzzy'), cfg.stores.fuzzy.expire, svc.stores.scan?.fuzzy));
  }
  if (role === 'proxy') {
    const { needsSelfScan } = await import('../proxy/relay/proxy-relay.js');
    const { startProxyWorker } = await import('./proxy.js');
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
  const { startControllerWorker } = await import('./controller.js');
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
  if (cfg.workers.watchdogTimeout > 0) startWatchdogThread({ timeoutMs: cfg.workers.watchdogTimeout * 1000, ...(board ? { boardPath: board.path } : {}), format: cfg.logging.format, ...(cfg.logging.file ? { file: cfg.logging.file } : {}) }, log);
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
    followLogRotation();
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
  // A reload's check, asked of the controller: its modules are loaded, so the check takes the
  // time of building one engine, where a fresh process would first load every module.
  const check = async (seq: number): Promise<void> => {
    let reply: ConfigCheckReply;
    try {
      const c = await checkConfig(confDir);
      reply = { errors: c.errors, notes: c.notes, ...(c.cfg ? { part: primaryPartOf(c.cfg) } : {}) };
    } catch (err) {
      reply = { errors: (err as Error)?.message ?? String(err), notes: [] };
    }
    process.send?.({ type: 'checked', seq, check: encodeCheckReply(reply) } satisfies IpcMessage);
  };
  process.on('message', (m: IpcMessage) => {
    if (m?.type === 'shutdown') stop('supervisor asked');
    else if (m?.type === 'retire') stop('replaced by a reload', { drain: true });
    else if (m?.type === 'prepare' && m.seq !== undefined && m.shape !== undefined) void prepare(m.seq, m.shape);
    else if (m?.type === 'check' && m.seq !== undefined) void check(m.seq);
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

/**
 * `mailsift serve` in a cluster worker or under `--single`. Loads the configuration (throws
 * ConfigError on any problem, before any listener opens), then starts the role(s). Resolves once
 * this process is set up.
 */
export async function serveInProcess(opts: ServeOptions): Promise<void> {
  // The supervisor (or the --single process) checks every file, the stores' paths and the
  // controller plugin files before any listener opens; a cluster worker reads the files again
  // (a restarted one may find them edited) but leaves the rest to the supervisor's check.
  // Users' plugins first: their module files (local.d/<plugin>.yaml) are checked with the rest.
  // A plugin that does not load is reported by each worker and left out, never a start-up failure.
  const set = await loadServerModules(opts.confDir);
  const cfg = await loadConfig(opts.confDir, { modules: set.modules, runtime: !cluster.isWorker });
  const log = createLogger({ level: cfg.logging.level, format: cfg.logging.format, ...(cfg.logging.file ? { file: cfg.logging.file } : {}) });
  // stdout is the log stream: a library's console output must arrive as a record, not raw text.
  routeConsoleToLog(log.child('console'));
  installOperatorSignals();
  operatorSignalLog(log);
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
  return runSingle(cfg, set, log, opts.serverName, opts.confDir);
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

