// npm run fuzz: a seeded, mutation-based fuzzer against a live `mailsift serve` (see
// server.ts for how it is started). Surfaces (surfaces/*.ts) generate inputs; this file sends
// them, watches the server, confirms what looks wrong by re-sending it alone, saves findings
// (findings.ts) and prints the figures per surface. `--replay file.bin` re-sends one finding.
//
// What counts as a finding:
//   crash   a worker exited (noticed by its PID leaving the supervisor's process tree);
//           the inputs in flight then are re-sent one by one to find the one that does it;
//   hang    no reply within 10 s of the input's last byte (the fuzzer half-closes after
//           writing, so a server waiting for more body has no excuse); a worker spinning
//           with nothing in flight is killed so the campaign can go on;
//   slow    a scan whose reply says it took over --slow-ms of server time (time_real),
//           confirmed when re-sent alone by the CPU the workers spent on it;
//   5xx     a 5xx reply the surface does not allow (Surface.expected5xx);
//   memory  a process whose RSS stayed more than --mem-growth-mb above its level after warm-up
//           for 10 s (a moment above it is one large input, not growth);
//   exception  an error-level line in the server's log (a module's rule threw, a front end's
//           "bug" path) while the input was in flight, confirmed when re-sent alone; one per
//           distinct message + module + symbol + error;
//   interference  (milter) the canary session sent after a fuzzed session did not get the
//           verdicts a fresh server gives it: one session affected another;
//   unlogged-close  (milter) the server closed a session that did not QUIT without a log line
//           naming the session's peer.
import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { decode as msgpackDecode } from '@msgpack/msgpack';
import { zstdDecompressBounded } from '../../src/http/zstd.js';
import { Rng } from './rng.js';
import { send, HANG_MS, Pool, type Outcome, type Target } from './send.js';
import { FuzzServer, READ_PASSWORD, type Role } from './server.js';
import { stopOnSignal } from '../servers.js';
import { loadSeeds } from './seeds.js';
import { knownBug } from './known.js';
import { exceptionKey, FindingStore, type Finding, type FindingKind } from './findings.js';
import type { FuzzInput, Port, Surface, SurfaceContext } from './surface.js';
import { v2Surface } from './surfaces/v2.js';
import { chunkedSurface } from './surfaces/chunked.js';
import { v3Surface } from './surfaces/v3.js';
import { zstdSurface } from './surfaces/zstd.js';
import { httpcryptSurface } from './surfaces/httpcrypt.js';
import { controllerSurface, isSafeForController } from './surfaces/controller.js';
import { mimeSurface } from './surfaces/mime.js';
import { legacySurface } from './surfaces/legacy.js';
import { milterSurface } from './surfaces/milter.js';
import { spamcSurface } from './surfaces/spamc.js';
import { CANARY_SESSION, canarySummary, finalFrames, GTUBE_REJECT, readerEnd, sendMilter, type MilterResult } from './milter-wire.js';
import { ERROR_LEVEL, type LogRecord, type ProxyMode } from './server.js';
import { proxyModeFor } from './surface.js';

/** In this order under `all`: the ones needing the HTTP proxy last, so the server restarts once. */
const SURFACES = ['v2', 'chunked', 'v3', 'zstd', 'httpcrypt', 'controller', 'mime', 'legacy', 'milter', 'spamc'] as const;
/** How often RSS is sampled for the memory check. */
const MEMORY_SAMPLE_MS = 2_000;
/**
 * Samples in a row a process must stay above its baseline + --mem-growth-mb before it is a
 * finding: one large input (a 50 MB body) lifts RSS for a moment, and that is not growth.
 */
const SUSTAINED_SAMPLES = 5;
/** A process must have lived this long before its RSS counts as a baseline (its own warm-up). */
const MEMORY_SETTLE_MS = 15_000;
/** Inputs of each kind re-sent alone per surface to confirm a crash, hang or slow scan; the rest are counted. */
const MAX_CONFIRMATIONS = 25;
/** A worker using more than this share of a core with nothing in flight is spinning (hung). */
const SPIN_SHARE = 0.6;
/** Inputs that ended with a dropped connection this recently are suspects of a worker's exit. */
const CRASH_WINDOW_MS = 2_000;
/** Progress line interval. */
const PROGRESS_MS = 15_000;
/**
 * A worker whose event loop has sent no heartbeat for this long when an input timed out is
 * the hung one (the supervisor's /healthy names it), and is killed so the campaign goes on.
 */
const STALLED_MS = 5_000;
/** How long the CPU figures of a worker may take to settle after its reply, when an input is re-sent alone. */
const CPU_SETTLE_MS = 400;
/** Poll interval while waiting for them. */
const CPU_POLL_MS = 50;
/** Times an input refused at connect (no worker up) is sent again once the workers are back. */
const REFUSED_RETRIES = 3;
/** Inputs finished this recently are suspects of an error line in the server's log. */
const EXCEPTION_WINDOW_MS = 1_500;
/** How long the server's log line about a session it closed may take to reach us (through the supervisor). */
const LOG_WAIT_MS = 2_000;
/** After an input re-sent alone, time for its error lines to arrive. */
const LOG_SETTLE_MS = 300;


function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== dirname(dir)) dir = dirname(dir);
  return dir;
}

const log = (s: string): void => { process.stderr.write(`${s}\n`); };

/** The scan's own time from its reply (`time_real`, seconds): JSON, zstd-compressed JSON or msgpack. */
export function serverMs(o: Outcome): number | undefined {
  if (o.kind !== 'reply' || o.status !== 200) return undefined;
  let body = o.body;
  if (/\r\ncompression:\s*zstd/i.test(o.head)) {
    try {
      body = zstdDecompressBounded(body, 16 * 1024 * 1024);
    } catch {
      return undefined;
    }
  }
  const m = /"time_real"\s*:\s*([0-9.eE+-]+)/.exec(body.toString('latin1'));
  if (m) return Number(m[1]) * 1000;
  if (/msgpack/i.test(o.head)) {
    try {
      const v = msgpackDecode(body) as { time_real?: unknown };
      if (typeof v.time_real === 'number') return v.time_real * 1000;
    } catch { /* not one msgpack object */ }
  }
  return undefined;
}

function statusClass(o: Outcome): string {
  if (o.kind === 'reply') return o.status === 0 ? 'not-http' : `${Math.floor(o.status / 100)}xx`;
  return o.kind; // closed, error, timeout
}

interface Options {
  surface: string;
  inputs: number;
  seed: number;
  out: string;
  concurrency: number;
  workers: number;
  slowMs: number;
  memGrowthMb: number;
  heapMb: number;
  skipKnown: boolean;
  corpus: boolean;
  replay?: string;
  echo: boolean;
  dryRun: boolean;
}

interface SurfaceStats {
  sent: number;
  skipped: Record<string, number>;
  classes: Record<string, number>;
  findings: Record<string, number>;
  seconds: number;
  unconfirmed: Record<string, number>;
  /** CPU the fuzzer process spent on this surface's sending phase (all of it: generation, sockets, checks), ms. */
  fuzzerCpuMs: number;
  /** Of which generating inputs (surface.generate and the known-bug check), ms. */
  generateCpuMs: number;
  /** CPU the server's processes spent in the same phase, ms. */
  serverCpuMs: number;
}

interface InFlight {
  index: number;
  input: FuzzInput;
  started: number;
}

interface Suspect {
  index: number;
  input: FuzzInput;
  outcome?: Outcome;
  kind: 'crash' | 'hang' | 'slow' | 'exception' | 'interference' | 'unlogged-close';
  exit?: { role: string; pid: number; log: string[] };
  /** exception: its key and the line; interference: what the canary got. */
  detail?: string;
  line?: string;
}

function roleFor(port: Port): Role {
  switch (port) {
    case 'scan': return 'normal';
    case 'controller': return 'controller';
    default: return 'proxy';
  }
}

/** The ports whose inputs reach a worker of `role` (the proxy relays to the normal workers). */
function portsReaching(role: Role): Port[] {
  switch (role) {
    case 'controller': return ['controller'];
    case 'proxy': return ['milter', 'proxy'];
    default: return ['scan', 'milter', 'proxy'];
  }
}

/** A milter session's outcome class for the summary: what the server sent, and who closed. */
function milterClass(r: MilterResult): string {
  const what = finalFrames(r.frames).length ? 'verdict' : r.rest.toString('latin1', 0, 5) === 'HTTP/' ? 'http' : r.frames.length ? 'frames' : r.outcome.kind === 'timeout' ? 'timeout' : 'nothing';
  return `milter-${what}${r.serverClosedFirst ? '' : '-eof'}`;
}

/** What a sent input gave: the outcome, and for a milter session its details. */
interface Sent {
  outcome: Outcome;
  milter?: MilterResult;
}

class Campaign {
  readonly #server: FuzzServer;
  readonly #o: Options;
  readonly #store: FindingStore;
  #paused: Promise<void> | undefined;
  /** A hang check is running (one at a time; timeouts meanwhile only add suspects). */
  #checkingHang = false;
  readonly #pools: Record<Port, Pool>;
  #inFlight = new Map<number, InFlight>();
  /** Recently finished inputs with a dropped connection: [time, index, input]. */
  #dropped: Array<[number, number, FuzzInput]> = [];
  #exitsSeen = 0;
  #sentTotal = 0;
  readonly #warmupInputs: number;
  #baselines = new Map<number, { role: Role; rssKiB: number }>();
  #memReported = new Set<number>();
  /** pid → samples in a row above the threshold. */
  #memAbove = new Map<number, number>();
  #memTimer: NodeJS.Timeout | undefined;
  #firstSeen = new Map<number, number>();
  /** Inputs sent since the last memory sample (suspects of a jump). */
  #sinceSample: Array<{ surface: string; index: number; input: FuzzInput }> = [];
  #surface = '';
  #lastSent: { surface: string; index: number; input: FuzzInput } | undefined;

  constructor(server: FuzzServer, o: Options, store: FindingStore, totalInputs: number) {
    this.#server = server;
    this.#o = o;
    this.#store = store;
    this.#warmupInputs = Math.min(500, Math.max(50, Math.floor(totalInputs / 10)));
    this.#exitsSeen = server.exitCount;
    this.#pools = { scan: new Pool(server.scan, o.concurrency), controller: new Pool(server.controller, o.concurrency), proxy: new Pool(server.proxy, o.concurrency), milter: new Pool(server.proxy, 0) };
    server.onLog((r) => this.#onLog(r));
  }

  target(port: Port): Target {
    switch (port) {
      case 'scan': return this.#server.scan;
      case 'controller': return this.#server.controller;
      default: return this.#server.proxy;
    }
  }

  closePools(): void {
    for (const p of Object.values(this.#pools)) p.close();
  }

  /** One input on the wire: a milter session, or an HTTP/text request (pooled when the surface allows). */
  async #send(input: FuzzInput, pooled: boolean): Promise<Sent> {
    if (input.port === 'milter') {
      const m = await sendMilter(this.#server.proxy, input.bytes);
      return { outcome: m.outcome, milter: m };
    }
    return { outcome: await (pooled ? this.#pools[input.port].send(input.bytes) : send(this.target(input.port), input.bytes)) };
  }

  // ---- the server's log: error lines (exceptions) and the milter sessions it names

  /** Error lines seen, for the inputs re-sent alone to look at. */
  #errorLines: LogRecord[] = [];
  /** Milter peers (`127.0.0.1:port`) the server logged a line about, with when. */
  readonly #loggedPeers = new Map<string, number>();
  /** Inputs that finished lately, any outcome: [time, index, input]. */
  #recent: Array<[number, number, FuzzInput]> = [];
  /** During a surface's run: where the suspects of an error line go. */
  #onException: ((s: Suspect) => void) | undefined;

  #onLog(r: LogRecord): void {
    if (typeof r.peer === 'string' && typeof r.session === 'string') {
      this.#loggedPeers.set(r.peer, Date.now());
      if (this.#loggedPeers.size > 10_000) {
        const cutoff = Date.now() - 60_000;
        for (const [k, t] of this.#loggedPeers) if (t < cutoff) this.#loggedPeers.delete(k);
      }
    }
    if (r.level < ERROR_LEVEL) return;
    this.#errorLines.push(r);
    if (this.#errorLines.length > 1000) this.#errorLines.shift();
    const add = this.#onException;
    if (!add) return;
    const key = exceptionKey(r);
    const line = JSON.stringify(r).slice(0, 2000);
    log(`[exception] ${key}`);
    const now = Date.now();
    const cand = new Map<number, FuzzInput>();
    for (const f of this.#inFlight.values()) cand.set(f.index, f.input);
    for (const [t, i, input] of this.#recent) if (now - t <= EXCEPTION_WINDOW_MS) cand.set(i, input);
    for (const [index, input] of cand) add({ index, input, kind: 'exception', detail: key, line });
  }

  /** Waits for a log line naming the milter session from `localPort` (logged after `since`). */
  async #sessionLogged(localPort: number, since: number): Promise<boolean> {
    const peer = `127.0.0.1:${localPort}`;
    for (let waited = 0; ; waited += CPU_POLL_MS) {
      const t = this.#loggedPeers.get(peer);
      if (t !== undefined && t >= since - 1000) return true;
      if (waited >= LOG_WAIT_MS) return false;
      await new Promise((r) => setTimeout(r, CPU_POLL_MS));
    }
  }

  /**
   * True when the server closed a session on its own without saying why: the session did not
   * reach a QUIT (readerEnd), was not the HTTP ping answered with its pong, and no log line
   * names its peer.
   */
  async #unloggedClose(input: FuzzInput, m: MilterResult): Promise<boolean> {
    if (!m.serverClosedFirst || m.localPort === 0) return false;
    const end = readerEnd(input.bytes);
    if (end === 'quit') return false;
    if (end === 'http' && m.rest.toString('latin1', 0, 15) === 'HTTP/1.1 200 OK') return false;
    return !(await this.#sessionLogged(m.localPort, m.started));
  }

  /** The canary's summary on a fresh server (set before the milter surface runs). */
  #canaryReference: string | undefined;

  async canaryReference(): Promise<string> {
    if (this.#canaryReference === undefined) {
      const r = await sendMilter(this.#server.proxy, CANARY_SESSION);
      const summary = canarySummary(r);
      if (!summary.includes(GTUBE_REJECT)) throw new Error(`the milter canary does not get the GTUBE reject on a fresh server: ${summary}`);
      this.#canaryReference = summary;
      log(`[milter] canary on a fresh server: ${summary}`);
    }
    return this.#canaryReference;
  }

  /** Sends the canary; undefined when it got the reference verdicts, else what it got. */
  async #canary(): Promise<string | undefined> {
    const ref = await this.canaryReference();
    const got = canarySummary(await sendMilter(this.#server.proxy, CANARY_SESSION));
    return got === ref ? undefined : got;
  }

  /**
   * After an input timed out: kills the workers whose event loop is stalled, without stopping
   * the campaign. The supervisor's /healthy names the workers that sent no heartbeat lately;
   * those silent for STALLED_MS are hung, not busy. When /healthy cannot tell (the controller
   * is the one hung, or it does not answer), the campaign pauses, lets the inputs in flight
   * finish and kills what spins with nothing in flight.
   */
  async #checkHang(port: Port, label: string): Promise<void> {
    if (this.#checkingHang) {
      // One check at a time, but a timeout during it gets a look of its own afterwards: the
      // worker it met may have stalled after the running check asked.
      this.#recheck = { port, label };
      return;
    }
    this.#checkingHang = true;
    try {
      await this.#checkHangOnce(port, label);
    } finally {
      this.#checkingHang = false;
    }
    const again = this.#recheck;
    this.#recheck = undefined;
    if (again) await this.#checkHang(again.port, again.label);
  }

  #recheck: { port: Port; label: string } | undefined;

  async #checkHangOnce(port: Port, label: string): Promise<void> {
    const role = roleFor(port);
    // The proxy waits on the normal workers: a stalled one of those is the likelier cause.
    const stalled = role === 'normal' || role === 'proxy' ? await this.#stalledWorkers() : undefined;
    if (stalled && (role === 'normal' || stalled.length > 0)) {
      const alive = new Set(this.#server.pidsOf('normal'));
      const kill = stalled.filter((w) => alive.has(w.pid) && w.silentMs >= STALLED_MS);
      for (const w of kill) {
        log(`[hang] killing normal worker ${w.pid} (no heartbeat for ${(w.silentMs / 1000).toFixed(0)} s)`);
        this.#server.kill(w.pid);
      }
      log(`[hang] ${label}: no reply in ${HANG_MS} ms; ${kill.length} stalled worker(s) killed`);
      // Inputs sent before the replacements are up would only meet a refused connection.
      if (kill.length) await this.#pauseUntilReady();
      return;
    }
    // Stop sending, let the rest finish or time out, and kill a worker stuck on it.
    let release!: () => void;
    this.#paused = new Promise<void>((r) => { release = r; });
    try {
      await this.#drain();
      const killed = await this.killSpinning(role);
      log(`[hang] ${label}: no reply in ${HANG_MS} ms; ${killed} spinning worker(s) killed`);
    } finally {
      this.#paused = undefined;
      release();
    }
  }

  /** Holds back new inputs until every worker slot is filled again. */
  async #pauseUntilReady(): Promise<void> {
    if (this.#paused) return this.#paused;
    let release!: () => void;
    this.#paused = new Promise<void>((r) => { release = r; });
    try {
      await this.#server.waitReady(this.#o.workers);
    } finally {
      this.#paused = undefined;
      release();
    }
  }

  /**
   * The scan workers /healthy reports silent, with how long; [] when all are well; undefined
   * when /healthy does not say (no answer, or a text this does not read).
   */
  async #stalledWorkers(): Promise<Array<{ pid: number; silentMs: number }> | undefined> {
    const o = await send(this.#server.controller, Buffer.from(`GET /healthy HTTP/1.0\r\nPassword: ${READ_PASSWORD}\r\n\r\n`), 3000);
    if (o.kind !== 'reply') return undefined;
    if (o.status === 200) return [];
    const text = `${o.head}\n${o.body.toString('latin1')}`;
    // The reason phrase and the body say it both: one entry per PID.
    const silent = new Map<number, number>();
    for (const m of text.matchAll(/normal worker (\d+): no heartbeat for (\d+) s/g)) silent.set(Number(m[1]), Math.max(silent.get(Number(m[1])) ?? 0, Number(m[2]) * 1000));
    // Workers starting or restarting are listed too, without a heartbeat figure: none stalled.
    if (silent.size === 0 && !/workers are not responding/.test(text)) return undefined;
    return [...silent].map(([pid, silentMs]) => ({ pid, silentMs }));
  }

  startMemoryWatch(): void {
    this.#memTimer = setInterval(() => this.#sampleMemory(), MEMORY_SAMPLE_MS);
    this.#memTimer.unref();
  }

  stopMemoryWatch(): void {
    clearInterval(this.#memTimer);
  }

  /** Baseline, now and peak RSS per live process, for the summary. */
  memoryTable(): string[] {
    const rows: string[] = [];
    for (const s of this.#server.samples()) {
      const b = this.#baselines.get(s.pid);
      rows.push(`  ${s.role.padEnd(10)} pid ${String(s.pid).padEnd(8)} rss ${(s.rssKiB / 1024).toFixed(0).padStart(5)} MiB  peak ${(s.hwmKiB / 1024).toFixed(0).padStart(5)} MiB  after warm-up ${b ? `${(b.rssKiB / 1024).toFixed(0)} MiB` : '-'}`);
    }
    return rows;
  }

  /** CPU ms last seen per server process, exited ones included (a killed worker's CPU still counts). */
  readonly #cpuSeen = new Map<number, number>();

  #serverCpuMs(): number {
    for (const s of this.#server.samples()) this.#cpuSeen.set(s.pid, s.cpuMs);
    let sum = 0;
    for (const v of this.#cpuSeen.values()) sum += v;
    return sum;
  }

  #sampleMemory(): void {
    const now = Date.now();
    const suspects = this.#sinceSample;
    this.#sinceSample = [];
    for (const s of this.#server.samples()) {
      this.#cpuSeen.set(s.pid, s.cpuMs);
      if (!this.#firstSeen.has(s.pid)) this.#firstSeen.set(s.pid, now);
      const b = this.#baselines.get(s.pid);
      if (!b) {
        if (this.#sentTotal >= this.#warmupInputs && now - this.#firstSeen.get(s.pid)! >= MEMORY_SETTLE_MS) this.#baselines.set(s.pid, { role: s.role, rssKiB: s.rssKiB });
        continue;
      }
      const growthMiB = (s.rssKiB - b.rssKiB) / 1024;
      const above = growthMiB > this.#o.memGrowthMb ? (this.#memAbove.get(s.pid) ?? 0) + 1 : 0;
      this.#memAbove.set(s.pid, above);
      if (above >= SUSTAINED_SAMPLES && !this.#memReported.has(s.pid)) {
        this.#memReported.add(s.pid);
        // The input sent last before the jump (or before this sample, when nothing was sent in it).
        const last = suspects[suspects.length - 1] ?? this.#lastSent;
        if (!last) continue;
        log(`[memory] ${s.role} ${s.pid}: RSS ${(b.rssKiB / 1024).toFixed(0)} → ${(s.rssKiB / 1024).toFixed(0)} MiB after warm-up, for ${(SUSTAINED_SAMPLES * MEMORY_SAMPLE_MS) / 1000} s`);
        this.#record({
          surface: last.surface, seed: this.#o.seed, index: last.index, kind: 'memory', port: last.input.port, note: `${suspects.length} inputs in the last ${MEMORY_SAMPLE_MS} ms; the last one saved; ${last.input.note}`,
          confirmed: false, timings: {}, memory: { role: s.role, pid: s.pid, baselineMiB: b.rssKiB / 1024, nowMiB: s.rssKiB / 1024 }, bytes: last.input.bytes.length, date: new Date().toISOString(),
        }, last.input.bytes, `${s.role}`);
      }
    }
  }

  #record(f: Finding, bytes: Buffer, key: string): void {
    const path = this.#store.add(f, bytes, key);
    log(`[finding] ${f.surface} #${f.index} ${f.kind}${f.known ? ` (known: ${f.known})` : ''}${f.confirmed ? '' : ' (unconfirmed)'}${f.status ? ` status ${f.status}` : ''}${f.timings.cpuMs !== undefined ? ` cpu ${f.timings.cpuMs.toFixed(0)} ms` : ''}${path ? ` → ${basename(path)}` : ''}`);
  }

  /** Worker exits since the last look, with the inputs that could have caused them. */
  #collectExits(suspects: Suspect[]): void {
    const exits = this.#server.exits(this.#exitsSeen);
    this.#exitsSeen += exits.length;
    for (const e of exits) {
      // The supervisor's watchdog (set a little past HANG_MS, server.ts) killed a stalled
      // worker: a hang of an input in flight, not a crash.
      const stalled = e.log.some((l) => l.includes(`${e.pid} stalled: no heartbeat`));
      log(`[exit] ${e.role} worker ${e.pid} ${stalled ? 'stalled and was replaced by the watchdog' : 'exited'}; ${e.log.slice(-3).join(' | ').slice(0, 600)}`);
      const ports = portsReaching(e.role);
      const cand = new Map<number, FuzzInput>();
      for (const f of this.#inFlight.values()) if (ports.includes(f.input.port)) cand.set(f.index, f.input);
      for (const [t, i, input] of this.#dropped) if (e.at - t <= CRASH_WINDOW_MS && ports.includes(input.port)) cand.set(i, input);
      if (cand.size === 0) log('[exit] no input of this surface was in flight on that port');
      for (const [index, input] of cand) suspects.push({ index, input, kind: stalled ? 'hang' : 'crash', exit: { role: e.role, pid: e.pid, log: e.log } });
    }
  }

  /** Kills workers of `role` that use a core with nothing in flight (hung). Returns how many. */
  async killSpinning(role: Role): Promise<number> {
    const before = new Map(this.#server.pidsOf(role).map((pid) => [pid, this.#server.samples().find((s) => s.pid === pid)?.cpuMs ?? 0]));
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 1500));
    const elapsed = performance.now() - t0;
    let killed = 0;
    for (const s of this.#server.samples()) {
      const b = before.get(s.pid);
      if (b === undefined) continue;
      if ((s.cpuMs - b) / elapsed > SPIN_SHARE) {
        log(`[hang] killing ${role} worker ${s.pid} (busy with nothing in flight)`);
        this.#server.kill(s.pid);
        killed++;
      }
    }
    if (killed) await this.#server.waitReady(this.#o.workers);
    return killed;
  }

  /** Waits for every input in flight to finish. */
  async #drain(): Promise<void> {
    while (this.#inFlight.size > 0) await new Promise((r) => setTimeout(r, 50));
  }

  /** Re-sends one input alone and reports what happened. */
  async resendAlone(input: FuzzInput): Promise<{ outcome: Outcome; cpuMs: number; exits: ReturnType<FuzzServer['exits']>; hung: boolean; hwmKiB: number; errors: LogRecord[]; unloggedClose: boolean; canary?: string }> {
    await this.#server.waitReady(this.#o.workers);
    const role = roleFor(input.port);
    const exitsBefore = this.#server.exitCount;
    const cpu0 = this.#server.cpuMs(role);
    const errorsBefore = this.#errorLines.length;
    const sent = await this.#send(input, false);
    const outcome = sent.outcome;
    const unloggedClose = sent.milter ? await this.#unloggedClose(input, sent.milter) : false;
    // The session after it must get the verdicts a fresh server gives.
    const canary = input.port === 'milter' && outcome.kind !== 'timeout' ? await this.#canary() : undefined;
    // The worker may still be finishing the task after its reply: wait until its CPU time
    // stops moving (two polls alike) rather than a fixed pause.
    let cpu = this.#server.cpuMs(role);
    for (let waited = 0; waited < CPU_SETTLE_MS; waited += CPU_POLL_MS) {
      await new Promise((r) => setTimeout(r, CPU_POLL_MS));
      const next = this.#server.cpuMs(role);
      if (next === cpu) break;
      cpu = next;
    }
    const cpuMs = cpu - cpu0;
    // Peak RSS of the role's processes now, before a hung one is killed and its figures go with it.
    const hwmKiB = this.#server.samples().filter((s) => s.role === role).reduce((a, s) => a + s.hwmKiB, 0);
    const exits = this.#server.exits(exitsBefore);
    this.#exitsSeen = this.#server.exitCount;
    const hung = outcome.kind === 'timeout';
    await new Promise((r) => setTimeout(r, LOG_SETTLE_MS));
    const errors = this.#errorLines.slice(errorsBefore);
    if (hung) await this.#checkHang(input.port, 're-sent alone');
    if (exits.length || hung) await this.#server.waitReady(this.#o.workers);
    return { outcome, cpuMs, exits, hung, hwmKiB, errors, unloggedClose, ...(canary !== undefined ? { canary } : {}) };
  }

  async run(surface: Surface, inputs: number): Promise<SurfaceStats> {
    this.#surface = surface.name;
    const stats: SurfaceStats = { sent: 0, skipped: {}, classes: {}, findings: {}, seconds: 0, unconfirmed: {}, fuzzerCpuMs: 0, generateCpuMs: 0, serverCpuMs: 0 };
    const cpuNow = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
    const serverCpu = (): number => this.#serverCpuMs();
    const fuzzerCpu0 = cpuNow();
    const serverCpu0 = serverCpu();
    const suspects: Suspect[] = [];
    const seen = new Set<string>();
    let next = 0;
    const t0 = performance.now();
    let lastProgress = t0;
    const count = (rec: Record<string, number>, k: string): void => { rec[k] = (rec[k] ?? 0) + 1; };
    const addSuspect = (s: Suspect): void => {
      const k = `${s.kind}:${s.index}${s.kind === 'exception' ? `:${s.detail}` : ''}`;
      if (seen.has(k)) return;
      seen.add(k);
      suspects.push(s);
    };
    this.#onException = addSuspect;
    const milter = surface.proxyMode === 'milter';
    if (milter) await this.canaryReference();
    const exitWatch = setInterval(() => {
      const found: Suspect[] = [];
      this.#collectExits(found);
      for (const s of found) addSuspect(s);
    }, 250);
    const loop = async (): Promise<void> => {
      while (next < inputs) {
        while (this.#paused) await this.#paused;
        const index = next++;
        const g0 = cpuNow();
        const input = surface.generate(Rng.forInput(this.#o.seed, surface.name, index));
        // Only --skip-known needs the verdict for every input; findings look it up when saved.
        const known = this.#o.skipKnown ? knownBug(input.bytes) : undefined;
        stats.generateCpuMs += cpuNow() - g0;
        if (known === 'received-odd-whitespace') { count(stats.skipped, known); continue; }
        if (input.port === 'controller' && !isSafeForController(input.bytes, this.#ctx!)) { count(stats.skipped, 'unsafe-savemap'); continue; }
        this.#inFlight.set(index, { index, input, started: performance.now() });
        this.#lastSent = { surface: surface.name, index, input };
        this.#sinceSample.push(this.#lastSent);
        let sent = await this.#send(input, surface.keepAlive);
        // Refused: no worker was there to take it (all being replaced), so the input never
        // reached the server; it goes again once they are back rather than count as tested.
        for (let retry = 0; retry < REFUSED_RETRIES && sent.outcome.kind === 'error' && sent.outcome.code === 'ECONNREFUSED'; retry++) {
          await this.#pauseUntilReady();
          sent = await this.#send(input, surface.keepAlive);
        }
        const outcome = sent.outcome;
        if (sent.milter) {
          if (await this.#unloggedClose(input, sent.milter)) addSuspect({ index, input, outcome, kind: 'unlogged-close' });
          // Still in flight while the canary runs: an exit or error line meanwhile may be its doing.
          if (outcome.kind !== 'timeout') {
            const got = await this.#canary();
            if (got !== undefined) {
              log(`[milter] canary after #${index}: ${got}`);
              addSuspect({ index, input, outcome, kind: got === 'no reply in time' ? 'hang' : 'interference', detail: got });
            }
          }
        }
        this.#inFlight.delete(index);
        this.#recent.push([Date.now(), index, input]);
        if (this.#recent.length > 256) this.#recent.shift();
        stats.sent++;
        this.#sentTotal++;
        count(stats.classes, sent.milter ? milterClass(sent.milter) : statusClass(outcome));
        if (outcome.kind === 'closed' || outcome.kind === 'error' || outcome.retried) {
          this.#dropped.push([Date.now(), index, input]);
          if (this.#dropped.length > 256) this.#dropped.shift();
        }
        if (outcome.kind === 'reply' && outcome.status >= 500 && !surface.expected5xx(outcome.status, outcome.head, outcome.body)) {
          const text = outcome.body.toString('latin1', 0, 300);
          const bug = known ?? knownBug(input.bytes);
          count(stats.findings, '5xx');
          this.#record({ surface: surface.name, seed: this.#o.seed, index, kind: '5xx', port: input.port, note: input.note, ...(bug ? { known: bug } : {}), confirmed: true, status: outcome.status, reply: text, timings: { clientMs: outcome.ms }, bytes: input.bytes.length, date: new Date().toISOString() }, input.bytes, `${outcome.status}:${text.replace(/\d+/g, 'N').slice(0, 120)}`);
        }
        const sms = serverMs(outcome);
        if (sms !== undefined && sms > this.#o.slowMs) addSuspect({ index, input, outcome, kind: 'slow' });
        if (outcome.kind === 'timeout') {
          addSuspect({ index, input, outcome, kind: 'hang' });
          void this.#checkHang(input.port, `${surface.name} #${index}`);
        }
        const now = performance.now();
        if (now - lastProgress > PROGRESS_MS) {
          lastProgress = now;
          log(`[${surface.name}] ${stats.sent}/${inputs} sent, ${(stats.sent / ((now - t0) / 1000)).toFixed(1)}/s, ${JSON.stringify(stats.classes)}, suspects ${suspects.length}`);
        }
      }
    };
    await Promise.all(Array.from({ length: this.#o.concurrency }, loop));
    while (this.#checkingHang) await new Promise((r) => setTimeout(r, CPU_POLL_MS));
    clearInterval(exitWatch);
    // Error lines of the last inputs may still be on their way.
    await new Promise((r) => setTimeout(r, LOG_SETTLE_MS));
    this.#onException = undefined;
    stats.seconds = (performance.now() - t0) / 1000;
    stats.fuzzerCpuMs = cpuNow() - fuzzerCpu0;
    stats.serverCpuMs = serverCpu() - serverCpu0;
    await new Promise((r) => setTimeout(r, 500));
    const late: Suspect[] = [];
    this.#collectExits(late);
    for (const s of late) addSuspect(s);
    await this.#confirm(surface, suspects, stats);
    return stats;
  }

  #ctx: SurfaceContext | undefined;
  setContext(ctx: SurfaceContext): void {
    this.#ctx = ctx;
  }

  /** Re-sends each suspect alone (up to MAX_CONFIRMATIONS per kind) and records what it really does. */
  async #confirm(surface: Surface, suspects: Suspect[], stats: SurfaceStats): Promise<void> {
    const tried: Record<string, number> = {};
    const confirmed: Record<string, number> = {};
    const confirmedCrash = new Set<number>();
    /** Exception keys already confirmed: their other suspects are not re-sent. */
    const exceptionsConfirmed = new Set<string>();
    /** Re-sends per exception key (each key gets its own MAX_CONFIRMATIONS). */
    const perException = new Map<string, number>();
    const exceptionSuspects = new Map<string, Suspect>();
    for (const s of suspects) {
      if (s.kind === 'exception') {
        const key = s.detail!;
        if (exceptionsConfirmed.has(key)) continue;
        exceptionSuspects.set(key, exceptionSuspects.get(key) ?? s);
        const n = (perException.get(key) ?? 0) + 1;
        perException.set(key, n);
        if (n > MAX_CONFIRMATIONS) continue;
      }
      tried[s.kind] = (tried[s.kind] ?? 0) + 1;
      if (s.kind !== 'exception' && tried[s.kind]! > MAX_CONFIRMATIONS) {
        stats.unconfirmed[s.kind] = (stats.unconfirmed[s.kind] ?? 0) + 1;
        continue;
      }
      const known = knownBug(s.input.bytes);
      const r = await this.resendAlone(s.input);
      if (s.kind === 'exception' || s.kind === 'interference' || s.kind === 'unlogged-close') {
        const base = { surface: surface.name, seed: this.#o.seed, index: s.index, port: s.input.port, note: s.input.note, ...(known ? { known } : {}), bytes: s.input.bytes.length, date: new Date().toISOString(), timings: { clientMs: r.outcome.ms, cpuMs: r.cpuMs } };
        if (s.kind === 'exception') {
          const line = r.errors.find((e) => exceptionKey(e) === s.detail);
          if (!line) continue;
          exceptionsConfirmed.add(s.detail!);
          this.#record({ ...base, kind: 'exception', confirmed: true, exception: { key: s.detail!, line: JSON.stringify(line).slice(0, 4000) } }, s.input.bytes, s.detail!);
        } else if (s.kind === 'interference') {
          if (r.canary === undefined) continue;
          this.#record({ ...base, kind: 'interference', confirmed: true, canary: { expected: this.#canaryReference ?? '', got: r.canary } }, s.input.bytes, r.canary.replace(/\d+/g, 'N'));
        } else {
          if (!r.unloggedClose) continue;
          this.#record({ ...base, kind: 'unlogged-close', confirmed: true, reply: r.outcome.kind === 'reply' ? r.outcome.head.slice(0, 300) : r.outcome.kind }, s.input.bytes, s.input.note.split(' ').slice(0, 3).join(' '));
        }
        confirmed[s.kind] = (confirmed[s.kind] ?? 0) + 1;
        stats.findings[s.kind] = (stats.findings[s.kind] ?? 0) + 1;
        continue;
      }
      const base = { surface: surface.name, seed: this.#o.seed, index: s.index, port: s.input.port, note: s.input.note, ...(known ? { known } : {}), bytes: s.input.bytes.length, date: new Date().toISOString() };
      const clientMs = r.outcome.ms;
      const sms = serverMs(r.outcome);
      const timings = { clientMs, ...(sms !== undefined ? { serverMs: sms } : {}), cpuMs: r.cpuMs };
      let kind: FindingKind | undefined;
      if (r.exits.length) kind = 'crash';
      else if (r.outcome.kind === 'timeout' || r.canary === 'no reply in time') kind = 'hang';
      else if (r.cpuMs > this.#o.slowMs) kind = 'slow';
      if (!kind) continue;
      if (kind === 'crash') confirmedCrash.add(s.index);
      confirmed[s.kind] = (confirmed[s.kind] ?? 0) + 1;
      stats.findings[kind] = (stats.findings[kind] ?? 0) + 1;
      const exit = r.exits[0];
      const status = r.outcome.kind === 'reply' ? r.outcome.status : undefined;
      const key = kind === 'crash' ? (exit?.log.find((l) => /crash|heap|fatal/i.test(l)) ?? '').replace(/\d+/g, 'N').slice(0, 160) : kind === 'slow' ? s.input.note.split(' ').slice(0, 3).join(' ') : 'hang';
      this.#record({ ...base, kind, confirmed: true, ...(status !== undefined ? { status } : {}), timings, ...(exit ? { exit: { role: exit.role, pid: exit.pid, log: exit.log } } : {}) }, s.input.bytes, key);
    }
    // Exceptions no suspect reproduced alone: one unconfirmed record per key, with the first suspect's bytes.
    for (const [key, s] of exceptionSuspects) {
      if (exceptionsConfirmed.has(key)) continue;
      stats.unconfirmed.exception = (stats.unconfirmed.exception ?? 0) + 1;
      this.#record({ surface: surface.name, seed: this.#o.seed, index: s.index, kind: 'exception', port: s.input.port, note: s.input.note, confirmed: false, timings: {}, exception: { key, line: s.line ?? '' }, bytes: s.input.bytes.length, date: new Date().toISOString() }, s.input.bytes, key);
    }
    if (suspects.length) log(`[${surface.name}] re-sent alone: ${Object.entries(tried).map(([k, n]) => `${k} ${Math.min(n, MAX_CONFIRMATIONS)} (confirmed ${confirmed[k] ?? 0})`).join(', ')}`);
    // Exits that no suspect reproduced alone: recorded unconfirmed, with every suspect's bytes.
    const crashes = suspects.filter((s) => s.kind === 'crash');
    if (crashes.length && confirmedCrash.size === 0) {
      for (const s of crashes.slice(0, MAX_CONFIRMATIONS)) {
        stats.findings['crash-unconfirmed'] = (stats.findings['crash-unconfirmed'] ?? 0) + 1;
        this.#record({ surface: surface.name, seed: this.#o.seed, index: s.index, kind: 'crash', port: s.input.port, note: s.input.note, confirmed: false, timings: {}, ...(s.exit ? { exit: s.exit } : {}), bytes: s.input.bytes.length, date: new Date().toISOString() }, s.input.bytes, 'unconfirmed');
      }
    }
  }
}

function surfacesFor(names: string[], ctx: SurfaceContext, root: string): Surface[] {
  return names.map((n) => {
    switch (n) {
      case 'v2': return v2Surface(ctx);
      case 'chunked': return chunkedSurface(ctx);
      case 'v3': return v3Surface(ctx);
      case 'zstd': return zstdSurface(ctx, root);
      case 'httpcrypt': return httpcryptSurface(ctx);
      case 'controller': return controllerSurface(ctx);
      case 'mime': return mimeSurface(ctx);
      case 'legacy': return legacySurface(ctx);
      case 'milter': return milterSurface(ctx);
      case 'spamc': return spamcSurface(ctx);
      default: throw new Error(`--surface: expected one of ${SURFACES.join(', ')} or all, found ${n}`);
    }
  });
}

/** Map ids the controller lists, and those whose file is inside the server's temp dir. */
async function mapIds(server: FuzzServer): Promise<{ all: number[]; writable: number[] }> {
  const o = await send(server.controller, Buffer.from(`GET /maps HTTP/1.0\r\nPassword: ${READ_PASSWORD}\r\n\r\n`), 5000);
  if (o.kind !== 'reply' || o.status !== 200) throw new Error(`GET /maps failed: ${o.kind === 'reply' ? o.status : o.kind}`);
  const list = JSON.parse(o.body.toString('utf8')) as Array<{ map: number; uri: string; editable: boolean }>;
  const all = list.map((m) => m.map);
  const writable = list.filter((m) => m.editable && resolve(m.uri.replace(/^file:\/\//, '')).startsWith(server.confDir + '/')).map((m) => m.map);
  return { all, writable };
}

function table(rows: Array<[string, SurfaceStats]>): string {
  const head = ['surface', 'sent', 'skipped', 'inputs/s', 'fuzzer cpu ms/input (gen)', 'server cpu ms/input', 'replies by class', 'findings', 'unconfirmed'];
  const per = (ms: number, s: SurfaceStats): string => (ms / Math.max(1, s.sent)).toFixed(2);
  const body = rows.map(([name, s]) => [
    name, String(s.sent), String(Object.values(s.skipped).reduce((a, b) => a + b, 0)), (s.sent / Math.max(s.seconds, 1e-9)).toFixed(1),
    `${per(s.fuzzerCpuMs, s)} (${per(s.generateCpuMs, s)})`, per(s.serverCpuMs, s),
    Object.entries(s.classes).sort().map(([k, v]) => `${k} ${v}`).join(', '),
    Object.entries(s.findings).sort().map(([k, v]) => `${k} ${v}`).join(', ') || '-',
    Object.entries(s.unconfirmed).sort().map(([k, v]) => `${k} ${v}`).join(', ') || '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [fmt(head), ...body.map(fmt)].join('\n');
}

async function replay(o: Options, root: string): Promise<number> {
  const file = resolve(o.replay!);
  const bytes = readFileSync(file);
  const metaFile = file.replace(/\.bin$/, '.json');
  const meta = existsSync(metaFile) ? (JSON.parse(readFileSync(metaFile, 'utf8')) as Finding) : undefined;
  const port: Port = meta?.port ?? 'scan';
  const kind = meta?.kind;
  log(`replaying ${basename(file)} (${bytes.length} bytes, ${kind ?? 'unknown kind'}, ${port} port)…`);
  const server = await FuzzServer.start({ root, workers: o.workers, heapMb: o.heapMb, echo: o.echo, proxyMode: proxyModeFor(port) ?? 'milter' });
  stopOnSignal(() => server.stop());
  try {
    const c = new Campaign(server, o, new FindingStore(o.out), 0);
    if (port === 'milter') await c.canaryReference();
    const hwm0 = server.samples().filter((s) => s.role === roleFor(port)).reduce((a, s) => a + s.hwmKiB, 0);
    const r = await c.resendAlone({ bytes, port, note: '' });
    const hwm1 = r.hwmKiB;
    const status = r.outcome.kind === 'reply' ? `status ${r.outcome.status}` : r.outcome.kind;
    const sms = serverMs(r.outcome);
    for (const e of r.errors) log(`error line: ${exceptionKey(e)}`);
    if (r.canary !== undefined) log(`canary after it: ${r.canary}`);
    if (r.unloggedClose) log('the server closed the session without a log line');
    log(`reply: ${status} in ${r.outcome.ms.toFixed(0)} ms${sms !== undefined ? `, server time ${sms.toFixed(0)} ms` : ''}, worker CPU ${r.cpuMs.toFixed(0)} ms, worker exits ${r.exits.length}${r.exits.length ? ` (${r.exits[0]!.log.slice(-2).join(' | ').slice(0, 400)})` : ''}, peak RSS +${((hwm1 - hwm0) / 1024).toFixed(0)} MiB`);
    const reproduces =
      kind === 'crash' ? r.exits.length > 0
        : kind === 'hang' ? r.outcome.kind === 'timeout'
          : kind === 'slow' ? r.cpuMs > o.slowMs
            : kind === '5xx' ? r.outcome.kind === 'reply' && r.outcome.status === meta?.status
              : kind === 'memory' ? (hwm1 - hwm0) / 1024 > o.memGrowthMb
                : kind === 'exception' ? r.errors.some((e) => exceptionKey(e) === meta?.exception?.key)
                  : kind === 'interference' ? r.canary !== undefined
                    : kind === 'unlogged-close' ? r.unloggedClose
                : r.exits.length > 0 || r.outcome.kind === 'timeout' || r.cpuMs > o.slowMs || (r.outcome.kind === 'reply' && r.outcome.status >= 500);
    process.stdout.write(`${basename(file)}: ${reproduces ? 'REPRODUCES' : 'does not reproduce'}${kind ? ` (${kind})` : ''}\n`);
    return reproduces ? 1 : 0;
  } finally {
    await server.stop();
  }
}

/**
 * --dry-run: generates the inputs of each surface without a server, and prints the fuzzer's
 * CPU per input and a digest of every input's bytes and port. The digest is the determinism
 * check (the same seed and count give the same digest on every run and every machine), the CPU
 * the generators' own cost, which the campaign pays on the cores the server needs.
 */
function dryRun(o: Options, names: string[], seeds: SurfaceContext['seeds'], root: string): void {
  const ctx: SurfaceContext = { seeds, mapIds: [], writableMapIds: [] };
  const rows: string[][] = [['surface', 'inputs', 'skipped', 'cpu ms/input', 'MiB/input', 'digest']];
  for (const s of surfacesFor(names, ctx, root)) {
    const hash = createHash('sha256');
    let skipped = 0;
    let bytes = 0;
    const u0 = process.cpuUsage();
    for (let index = 0; index < o.inputs; index++) {
      const input = s.generate(Rng.forInput(o.seed, s.name, index));
      if (o.skipKnown && knownBug(input.bytes) === 'received-odd-whitespace') { skipped++; continue; }
      if (input.port === 'controller' && !isSafeForController(input.bytes, ctx)) { skipped++; continue; }
      hash.update(`${index} ${input.port} ${input.bytes.length}\n`).update(input.bytes);
      bytes += input.bytes.length;
    }
    const u = process.cpuUsage(u0);
    rows.push([s.name, String(o.inputs), String(skipped), ((u.user + u.system) / 1000 / Math.max(1, o.inputs)).toFixed(3), (bytes / 1048576 / Math.max(1, o.inputs)).toFixed(3), hash.digest('hex').slice(0, 16)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  process.stdout.write(`${rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n')}\n`);
}

async function main(): Promise<void> {
  const program = new Command('fuzz')
    .option('--surface <name>', `one of ${SURFACES.join(', ')}, a comma-separated list, or all`, 'all')
    .option('--inputs <n>', 'inputs per surface', (v) => Number(v), 1000)
    .option('--seed <n>', 'campaign seed (the same seed sends the same inputs)', (v) => Number(v), 1)
    .option('--out <dir>', 'directory for findings', 'fuzz-findings')
    .option('--concurrency <n>', 'inputs in flight at once', (v) => Number(v), 8)
    .option('--workers <n>', 'normal workers of the server', (v) => Number(v), 2)
    .option('--slow-ms <n>', 'server time (and, re-sent alone, worker CPU) above which a scan is slow', (v) => Number(v), 1000)
    .option('--mem-growth-mb <n>', 'RSS growth of a process after warm-up reported as a finding', (v) => Number(v), 256)
    .option('--heap-mb <n>', "V8 old-space limit of the server processes (workers.max_heap); the shipped 2 GiB by default: a smaller one changes V8's heap growth, and the workers' GC cost with it", (v) => Number(v), 2048)
    .option('--skip-known', 'do not send inputs that hit a known hang (Received with odd whitespace)')
    .option('--no-corpus', 'seed messages from the fixtures only (faster start)')
    .option('--replay <file>', 're-send one saved finding (.bin) and say whether it still reproduces')
    .option('--echo', "copy the server's output to stderr")
    .option('--dry-run', 'generate the inputs without a server: CPU per input and a digest of the bytes (determinism check)')
    .parse();
  const o = program.opts<Options>();
  o.skipKnown = Boolean(o.skipKnown);
  o.echo = Boolean(o.echo);
  o.dryRun = Boolean(o.dryRun);
  for (const [k, v] of [['inputs', o.inputs], ['concurrency', o.concurrency], ['workers', o.workers], ['seed', o.seed]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${k}: expected a whole number, found ${v}`);
  }
  const root = repoRoot();
  if (o.replay) {
    process.exitCode = await replay(o, root);
    return;
  }
  const names = o.surface === 'all' ? [...SURFACES] : o.surface.split(',').map((s) => s.trim());
  log(`loading seeds${o.corpus ? ' (fixtures and the development corpus)' : ' (fixtures)'}…`);
  const seeds = await loadSeeds(root, o.corpus);
  if (o.dryRun) {
    dryRun(o, names, seeds, root);
    return;
  }
  log(`${seeds.messages.length} messages, ${seeds.scanRequests.length} recorded requests, ${seeds.milterSessions.length} milter sessions, ${seeds.spamcRequests.length} spamc requests`);
  const store = new FindingStore(o.out);
  const rows: Array<[string, SurfaceStats]> = [];
  const mem: string[] = [];
  // Consecutive surfaces that can share a server (the proxy's mode) run on one; a change of
  // mode restarts it. The surfaces' generators do not need the server, only the map ids.
  const probe = surfacesFor(names, { seeds, mapIds: [], writableMapIds: [] }, root);
  const groups: Array<{ mode: ProxyMode | undefined; names: string[] }> = [];
  probe.forEach((s, i) => {
    const last = groups[groups.length - 1];
    if (last && (s.proxyMode === undefined || last.mode === undefined || last.mode === s.proxyMode)) {
      last.mode ??= s.proxyMode;
      last.names.push(names[i]!);
    } else {
      groups.push({ mode: s.proxyMode, names: [names[i]!] });
    }
  });
  try {
    for (const g of groups) {
      const mode = g.mode ?? 'milter';
      log(`starting the server (${o.workers} workers, ${mode} proxy) for ${g.names.join(', ')}…`);
      const server = await FuzzServer.start({ root, workers: o.workers, heapMb: o.heapMb, echo: o.echo, proxyMode: mode });
      stopOnSignal(() => server.stop());
      let campaign: Campaign | undefined;
      try {
        const maps = await mapIds(server);
        const ctx: SurfaceContext = { seeds, mapIds: maps.all, writableMapIds: maps.writable };
        log(`controller maps: ${maps.all.length} (${maps.writable.length} inside the temp dir, the only ones /savemap is aimed at)`);
        const surfaces = surfacesFor(g.names, ctx, root);
        campaign = new Campaign(server, o, store, o.inputs * surfaces.length);
        campaign.setContext(ctx);
        campaign.startMemoryWatch();
        for (const s of surfaces) {
          log(`[${s.name}] ${o.inputs} inputs, seed ${o.seed}, concurrency ${o.concurrency}…`);
          const st = await campaign.run(s, o.inputs);
          rows.push([s.name, st]);
          log(`[${s.name}] done: ${st.sent} sent in ${st.seconds.toFixed(0)} s`);
        }
      } finally {
        campaign?.stopMemoryWatch();
        campaign?.closePools();
        mem.push(...(campaign?.memoryTable() ?? []));
        await server.stop();
      }
    }
  } finally {
    process.stdout.write(`${table(rows)}\n`);
    if (mem.length) process.stdout.write(`memory per process:\n${mem.join('\n')}\n`);
    const saved = store.all.length ? `${store.all.length} findings (${store.saved} saved in ${resolve(o.out)})` : 'no findings';
    process.stdout.write(`${saved}\n`);
  }
  if (store.all.some((f) => f.confirmed && !f.known)) process.exitCode = 1;
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`fuzz: ${(e as Error).stack ?? String(e)}\n`);
    // Exit now: the other sending loops of a failed run would go on against a stopped server.
    process.exit(2);
  });
}
