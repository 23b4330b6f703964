// The server under fuzz: `mailsift serve` as the benchmark starts it (bench/servers.ts: shipped
// conf/, free loopback ports, the NXDOMAIN DNS stub so no lookup leaves the machine), changed
// only where the fuzzer needs it: a private data_dir inside its temporary conf dir (saves,
// learns and maps written by fuzzed controller requests land there and are deleted with it),
// controller passwords, a fixed HTTPCrypt keypair, a zstd input dictionary, and a bounded heap
// so a runaway worker ends in a crash the fuzzer sees instead of gigabytes of swap.
//
// A proxy worker stands in front of the normal workers (its only upstream group is them): in
// `milter` mode (the milter surface's MTA sessions) or `http` mode (the spamc surface's legacy
// lines through the proxy). One server has one proxy mode (workers.proxy is one section), so a
// campaign over surfaces needing both restarts the server between them (main.ts).
//
// It also watches the process tree: which PID holds which role (read from the worker's
// environment), worker exits the fuzzer did not cause, RSS and CPU per process.
import { readFileSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { freePort, startMailsift, type RunningServer } from '../servers.js';
import { processRole, processTree, sampleProcess, type ProcessRole } from '../proc-stats.js';
import { formatKeypair, keypairFromSecret, type KexKeypair } from '../../src/crypto/keypair.js';
import { HANG_MS, send, type Target } from './send.js';

export const READ_PASSWORD = 'fuzz-read';
export const ENABLE_PASSWORD = 'fuzz-enable';
/** Id stored in bench/fuzz/zstd.dict (trained with `zstd --train --dictID=4242` on the fixtures' messages). */
export const DICTIONARY_ID = 4242;
/** How often the known processes are checked to notice a worker that exited. */
const WATCH_MS = 250;
/**
 * How often the whole process tree is listed (to find the workers that replaced exited ones).
 * Listing it reads every process's stat file on the machine (a few ms on a busy one); checking
 * the known ones every WATCH_MS reads four.
 */
const FULL_SCAN_MS = 2_000;
/** After an exit, the tree is listed on every look for this long (the replacement starting). */
const RESCAN_AFTER_EXIT_MS = 10_000;
/** Log lines kept to explain a crash. */
const LOG_LINES = 400;
/** The supervisor's watchdog fires this long after the fuzzer would call an input hung (s). */
const WATCHDOG_MARGIN_S = 5;
/** How long the fuzzer waits for the supervisor to replace a worker before giving up on the run. */
const REPLACE_TIMEOUT_MS = 60_000;

export type Role = ProcessRole;

/** What the proxy worker speaks: milter (MTA sessions) or HTTP (scan requests and legacy lines). */
export type ProxyMode = 'milter' | 'http';

/** One JSON line of the server's log, parsed (pino: numeric `level`, `msg`, the extra fields). */
export interface LogRecord {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** pino's number for `error`. */
export const ERROR_LEVEL = 50;

function parseLogLine(line: string): LogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(line) as unknown;
    if (!v || typeof v !== 'object') return undefined;
    const r = v as Record<string, unknown>;
    return typeof r.level === 'number' && typeof r.msg === 'string' ? (r as LogRecord) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The server's HTTPCrypt keypair. Fixed (derived from a constant, not the campaign seed) so a
 * saved encrypted finding replays against any later fuzz server.
 */
export function fuzzServerKeypair(): KexKeypair {
  const sk = new Uint8Array(createHash('sha256').update('mailsift fuzz server key').digest());
  sk[0]! &= 248;
  sk[31]! &= 127;
  sk[31]! |= 64;
  return keypairFromSecret(sk);
}

export interface WorkerExit {
  pid: number;
  role: Role;
  at: number;
  /** Server log lines that mention the PID or a crash, from just before the exit was noticed. */
  log: string[];
}

export interface ProcSample {
  pid: number;
  role: Role;
  rssKiB: number;
  /** Peak RSS (VmHWM) of the process so far. */
  hwmKiB: number;
  cpuMs: number;
}

export function readProc(pid: number, role: Role): ProcSample | undefined {
  const s = sampleProcess(pid);
  return s ? { ...s, role } : undefined;
}

/**
 * The process's start time (clock ticks after boot, /proc/<pid>/stat field 22) while it is
 * alive and not a zombie (exited, not yet reaped); undefined otherwise. With the PID it names
 * one process: a PID reused by a newer process has a later start.
 */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[0] === 'Z' || rest[0] === 'X' ? undefined : rest[19];
  } catch {
    return undefined;
  }
}

export interface FuzzServerOptions {
  root: string;
  workers: number;
  /** V8 old-space limit of every server process, MiB. */
  heapMb: number;
  /** Copy the server's output to stderr. */
  echo?: boolean;
  /** The proxy worker's front end (milter by default). */
  proxyMode?: ProxyMode;
}

export class FuzzServer {
  readonly scan: Target;
  readonly controller: Target;
  /** The proxy worker's listener (milter or HTTP, per proxyMode). */
  readonly proxy: Target;
  readonly proxyMode: ProxyMode;
  readonly #listeners = new Set<(r: LogRecord) => void>();
  readonly #server: RunningServer;
  readonly #log: string[];
  /** pid → role of the processes seen alive at the last look. */
  #known = new Map<number, Role>();
  /** Processes the fuzzer killed itself: their exit is not a crash. */
  readonly #killed = new Set<number>();
  readonly #exits: WorkerExit[] = [];
  readonly #timer: NodeJS.Timeout;
  /** The server's temporary configuration directory (its data_dir is inside). */
  readonly confDir: string;

  private constructor(server: RunningServer, log: string[], confDir: string, proxy: Target, proxyMode: ProxyMode) {
    this.#server = server;
    this.proxy = proxy;
    this.proxyMode = proxyMode;
    this.confDir = confDir;
    this.#log = log;
    const [sh, sp] = server.scan.split(':');
    const [ch, cp] = server.controller!.split(':');
    this.scan = { host: sh!, port: Number(sp) };
    this.controller = { host: ch!, port: Number(cp) };
    this.#look();
    this.#timer = setInterval(() => this.#look(), WATCH_MS);
    this.#timer.unref();
  }

  static async start(o: FuzzServerOptions): Promise<FuzzServer> {
    const log: string[] = [];
    let partial = '';
    const proxyMode = o.proxyMode ?? 'milter';
    const proxyPort = await freePort();
    // Lines arrive before the FuzzServer exists (start-up): they go to its listeners once it does.
    let self: FuzzServer | undefined;
    const kp = formatKeypair(fuzzServerKeypair());
    let dir = '';
    const server = await startMailsift(o.root, o.workers, {
      nodeArgs: [`--max-old-space-size=${o.heapMb}`],
      onOutput: (chunk) => {
        if (o.echo) process.stderr.write(chunk);
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) {
          log.push(l.length > 2000 ? `${l.slice(0, 2000)}…` : l);
          if (log.length > LOG_LINES) log.shift();
          if (self && self.#listeners.size) {
            const r = parseLogLine(l);
            if (r) for (const f of self.#listeners) f(r);
          }
        }
      },
      patchConf: async (conf, confDir) => {
        dir = confDir;
        conf.data_dir = join(confDir, 'data');
        conf.logging = { level: 'warn', format: 'json' };
        await copyFile(join(o.root, 'bench', 'fuzz', 'zstd.dict'), join(confDir, 'fuzz.dict'));
        const keypair = { pubkey: kp.pubkey, privkey: kp.privkey };
        conf.workers = {
          ...conf.workers,
          // The bounded heap of every worker (the supervisor passes it on; the node flag
          // above covers the supervisor itself), and the supervisor's watchdog as a backstop
          // a little after the fuzzer's own hang limit: a stalled worker the fuzzer did not
          // get to kill is replaced in seconds, not the shipped 30 s.
          max_heap: `${o.heapMb}M`,
          watchdog_timeout: `${Math.ceil(HANG_MS / 1000) + WATCHDOG_MARGIN_S}s`,
          normal: { ...conf.workers?.normal, keypair, zstd_input_dictionary: 'fuzz.dict' },
          // The throttle is off: mutated passwords would otherwise lock the fuzzer out of
          // every route for a minute at a time.
          controller: { ...conf.workers?.controller, keypair, password: READ_PASSWORD, enable_password: ENABLE_PASSWORD, auth_fail_limit: 0 },
          // The normal workers are its one upstream group. The HTTP proxy answers legacy lines
          // as Rspamd 3.4 does (legacy_compat: rspamd) while the normal workers keep the
          // spamd default: the spamc surface meets both behaviours.
          proxy: {
            enabled: true,
            milter: proxyMode === 'milter',
            count: 1,
            bind: `127.0.0.1:${proxyPort}`,
            upstreams: { local: { hosts: String(conf.workers?.normal?.bind), default: true } },
            ...(proxyMode === 'http' ? { legacy_compat: 'rspamd' } : {}),
          },
        };
      },
    });
    const fs = new FuzzServer(server, log, dir, { host: '127.0.0.1', port: proxyPort }, proxyMode);
    self = fs;
    try {
      await fs.waitReady();
    } catch (e) {
      await fs.stop();
      throw e;
    }
    return fs;
  }

  get supervisorPid(): number {
    return this.#server.pids()[0]!;
  }

  #lastFullScan = 0;
  #rescanUntil = 0;
  /** pid → start time of the process known by that PID. */
  readonly #started = new Map<number, string>();

  /**
   * Updates the known processes and records the exits. `full` lists the whole tree; otherwise
   * only the known processes are checked (cheap), and the tree is listed every FULL_SCAN_MS or
   * after an exit, when a replacement is due.
   */
  #look(full = false): void {
    const sup = this.supervisorPid;
    const t = Date.now();
    const now = new Map<number, Role>();
    /** PIDs that now name a newer process than the one known by them (which has exited). */
    const reused = new Set<number>();
    if (full || t - this.#lastFullScan >= FULL_SCAN_MS || t < this.#rescanUntil) {
      this.#lastFullScan = t;
      for (const pid of processTree([sup])) {
        const start = startTime(pid);
        if (start === undefined) continue;
        const known = this.#started.get(pid);
        if (start !== known) {
          if (known !== undefined) reused.add(pid);
          this.#started.set(pid, start);
        }
        now.set(pid, (!reused.has(pid) && this.#known.get(pid)) || processRole(pid, sup));
      }
    } else {
      let gone = false;
      for (const [pid, role] of this.#known) {
        const start = startTime(pid);
        if (start !== undefined && start === this.#started.get(pid)) now.set(pid, role);
        else gone = true;
      }
      // A replacement is coming: list the tree on every look for a while, so that one which
      // exits soon after it started is seen too.
      if (gone) this.#rescanUntil = t + RESCAN_AFTER_EXIT_MS;
    }
    for (const [pid, role] of this.#known) {
      if (now.has(pid) && !reused.has(pid)) continue;
      if (this.#killed.delete(pid)) continue;
      const needle = String(pid);
      const log = this.#log.filter((l) => l.includes(needle) || /crash|heap|fatal|uncaught/i.test(l)).slice(-20);
      this.#exits.push({ pid, role, at: Date.now(), log });
    }
    this.#known = now;
  }

  /** Worker exits not caused by the fuzzer, oldest first; `from` skips the ones already seen. */
  exits(from = 0): WorkerExit[] {
    this.#look();
    return this.#exits.slice(from);
  }

  get exitCount(): number {
    this.#look();
    return this.#exits.length;
  }

  processes(): Array<{ pid: number; role: Role }> {
    this.#look(true);
    return [...this.#known].map(([pid, role]) => ({ pid, role }));
  }

  samples(): ProcSample[] {
    return this.processes().map((p) => readProc(p.pid, p.role)).filter((s): s is ProcSample => s !== undefined);
  }

  pidsOf(role: Role): number[] {
    return this.processes().filter((p) => p.role === role).map((p) => p.pid);
  }

  /** CPU ms used so far by the processes of `role`. */
  cpuMs(role: Role): number {
    let sum = 0;
    for (const pid of this.pidsOf(role)) sum += readProc(pid, role)?.cpuMs ?? 0;
    return sum;
  }

  kill(pid: number): void {
    this.#killed.add(pid);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      this.#killed.delete(pid);
    }
  }

  /**
   * Resolves when every worker slot is filled, the scan port answers /ping and the
   * controller's /healthy says every worker is up (a replacement answers /ping a little before
   * the supervisor counts it ready).
   */
  async waitReady(workers = 2): Promise<void> {
    const deadline = Date.now() + REPLACE_TIMEOUT_MS;
    const ping = Buffer.from('GET /ping HTTP/1.0\r\n\r\n');
    const healthy = Buffer.from(`GET /healthy HTTP/1.0\r\nPassword: ${READ_PASSWORD}\r\n\r\n`);
    for (;;) {
      const normal = this.pidsOf('normal').length;
      const ctl = this.pidsOf('controller').length;
      const proxy = this.pidsOf('proxy').length;
      if (normal >= workers && ctl >= 1 && proxy >= 1) {
        const a = await send(this.scan, ping, 2000);
        const b = await send(this.controller, healthy, 2000);
        // The milter front answers an HTTP ping on its port too; the HTTP proxy relays it.
        const c = await send(this.proxy, ping, 2000);
        if (a.kind === 'reply' && a.status === 200 && b.kind === 'reply' && b.status === 200 && c.kind === 'reply' && c.status === 200) return;
      }
      if (Date.now() > deadline) throw new Error(`the server did not come back within ${REPLACE_TIMEOUT_MS} ms (normal workers ${normal}, controller ${ctl}, proxy ${proxy}):\n${this.#log.slice(-20).join('\n')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Calls `f` with every JSON line the server logs from now on; returns the unsubscribe. */
  onLog(f: (r: LogRecord) => void): () => void {
    this.#listeners.add(f);
    return () => this.#listeners.delete(f);
  }

  logTail(n: number): string[] {
    return this.#log.slice(-n);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#server.stop();
  }
}
