// What the supervisor and its worker processes share: the roles, the environment a worker is
// forked with, the IPC messages between them, and the parts of the configuration the supervisor
// reads. Kept free of the engine's code: the supervisor process imports only this side
// (supervisor.ts), and the workers the rest (in-process.ts).

import v8 from 'node:v8';
import type { LoadedConfig } from '../config/load.js';
import { followLogRotation } from '../observability/log.js';

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

/** Time given to in-flight scans on shutdown beyond the task deadline, before a hard stop. */
export const SHUTDOWN_EXTRA_MS = 5_000;
/** Exit status of a worker that cannot start (config or bind error): EX_CONFIG from sysexits. */
export const EXIT_STARTUP_FAILED = 78;

export const ROLE_ENV = 'MAILSIFT_WORKER_ROLE';
/** Directory where each worker keeps its scan board (scan-board.ts), named by the supervisor. */
export const BOARD_DIR_ENV = 'MAILSIFT_SCAN_BOARD_DIR';
/** Port the supervisor picked for a controller configured with port 0 (see freePort). */
export const CONTROLLER_PORT_ENV = 'MAILSIFT_CONTROLLER_PORT';
/** Ports the supervisor picked for the proxy's TCP binds configured with port 0, as a JSON list by bind. */
export const PROXY_PORTS_ENV = 'MAILSIFT_PROXY_PORTS';
/** The ServeOptions of a forked worker, as JSON: its entry (worker-main.ts) has no command line to parse. */
export const SERVE_OPTIONS_ENV = 'MAILSIFT_SERVE_OPTIONS';

export interface IpcMessage {
  /**
   * `retire`: a reload replaced this worker; it drains its connections (CloseOptions) and exits.
   * `prepare` → `prepared`, then `commit` or `abort`: a reload that keeps the processes swaps
   * each scan worker's engine, all of them only once every one has built its new engine.
   * `check` → `checked`: the controller checks the configuration directory for a reload
   * (configCheckReply), its modules already loaded.
   */
  type: 'ready' | 'shutdown' | 'retire' | 'prepare' | 'prepared' | 'commit' | 'abort' | 'check' | 'checked';
  role?: WorkerRole;
  /** Which reload a prepare/commit/abort/prepared belongs to. */
  seq?: number;
  /** processShape() of the configuration the supervisor checked: the worker refuses another. */
  shape?: string;
  /** `prepared`: why the worker could not. */
  error?: string;
  /** `checked`: the ConfigCheckReply, structured-cloned (v8.serialize) as base64: cluster IPC is JSON, which would turn the settings' Maps into {}. */
  check?: string;
}

/** `host:port` with IPv6 hosts bracketed, as in the config's `bind`. */
export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** How long a stop or a retirement waits for in-flight scans. */
export function graceMs(cfg: PrimaryConfig): number {
  return cfg.workers.normal.taskTimeout * 1000 + SHUTDOWN_EXTRA_MS;
}

export function onStopSignal(handler: (signal: NodeJS.Signals) => void): void {
  let fired = false;
  const once = (signal: NodeJS.Signals) => {
    if (fired) return; // a second Ctrl-C while draining is not a reason to drain twice
    fired = true;
    // Before the first line of the stop: after a rename, every line of it goes to the file's name.
    followLogRotation();
    handler(signal);
  };
  process.on('SIGTERM', once);
  process.on('SIGINT', once);
}

/**
 * What the supervisor reads of the configuration: the processes (workers), where they keep
 * their data and statistics (data_dir, stores), and its own log lines. The whole configuration
 * is loaded and checked in a short-lived child process (config-process.ts); only this part
 * stays.
 */
export type PrimaryConfig = Pick<LoadedConfig, 'workers' | 'stores' | 'dataDir' | 'logging'>;

/** What about a configuration decides its workers' processes (ports, counts, limits, stores, logs): a reload that leaves it alone can swap engines in place (engine-swap.ts). */
export function processShape(cfg: PrimaryConfig): string {
  return JSON.stringify({ workers: cfg.workers, stores: cfg.stores, dataDir: cfg.dataDir, logging: cfg.logging });
}

/** The problems of a refused configuration, one per entry. */
export function problemList(errors: string): string[] {
  return errors.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

/** The supervisor's part of a configuration, with its processShape() as the checking process computed it. */
export interface PrimaryPart {
  cfg: PrimaryConfig;
  shape: string;
}

export function primaryPartOf(cfg: LoadedConfig): PrimaryPart {
  return { cfg: { workers: cfg.workers, stores: cfg.stores, dataDir: cfg.dataDir, logging: cfg.logging }, shape: processShape(cfg) };
}

/** A configuration directory checked as `configtest` checks it; `part` only when it has no problems. */
export interface ConfigCheckReply {
  errors: string;
  notes: string[];
  part?: PrimaryPart;
}

export function encodeCheckReply(r: ConfigCheckReply): string {
  return v8.serialize(r).toString('base64');
}

export function decodeCheckReply(text: string): ConfigCheckReply {
  return v8.deserialize(Buffer.from(text, 'base64')) as ConfigCheckReply;
}
