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
//           for 10 s (a moment above it is one large input, not growth).
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { decode as msgpackDecode } from '@msgpack/msgpack';
import { zstdDecompressBounded } from '../../src/http/zstd.js';
import { Rng } from './rng.js';
import { send, HANG_MS, type Outcome, type Target } from './send.js';
import { FuzzServer, READ_PASSWORD, type Role } from './server.js';
import { stopOnSignal } from '../servers.js';
import { loadSeeds } from './seeds.js';
import { knownBug } from './known.js';
import { FindingStore, type Finding, type FindingKind } from './findings.js';
import type { FuzzInput, Port, Surface, SurfaceContext } from './surface.js';
import { v2Surface } from './surfaces/v2.js';
import { chunkedSurface } from './surfaces/chunked.js';
import { v3Surface } from './surfaces/v3.js';
import { zstdSurface } from './surfaces/zstd.js';
import { httpcryptSurface } from './surfaces/httpcrypt.js';
import { controllerSurface, isSafeForController } from './surfaces/controller.js';
import { mimeSurface } from './surfaces/mime.js';
import { legacySurface } from './surfaces/legacy.js';

const SURFACES = ['v2', 'chunked', 'v3', 'zstd', 'httpcrypt', 'controller', 'mime', 'legacy'] as const;
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
}

interface SurfaceStats {
  sent: number;
  skipped: Record<string, number>;
  classes: Record<string, number>;
  findings: Record<string, number>;
  seconds: number;
  unconfirmed: Record<string, number>;
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
  kind: 'crash' | 'hang' | 'slow';
  exit?: { role: string; pid: number; log: string[] };
}

function roleFor(port: Port): Role {
  return port === 'scan' ? 'normal' : 'controller';
}

class Campaign {
  readonly #server: FuzzServer;
  readonly #o: Options;
  readonly #store: FindingStore;
  #paused: Promise<void> | undefined;
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
  }

  target(port: Port): Target {
    return port === 'scan' ? this.#server.scan : this.#server.controller;
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

  #sampleMemory(): void {
    const now = Date.now();
    const suspects = this.#sinceSample;
    this.#sinceSample = [];
    for (const s of this.#server.samples()) {
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
      log(`[exit] ${e.role} worker ${e.pid} exited; ${e.log.slice(-3).join(' | ').slice(0, 600)}`);
      const port: Port = e.role === 'controller' ? 'controller' : 'scan';
      const cand = new Map<number, FuzzInput>();
      for (const f of this.#inFlight.values()) if (f.input.port === port) cand.set(f.index, f.input);
      for (const [t, i, input] of this.#dropped) if (e.at - t <= CRASH_WINDOW_MS && input.port === port) cand.set(i, input);
      if (cand.size === 0) log('[exit] no input of this surface was in flight on that port');
      for (const [index, input] of cand) suspects.push({ index, input, kind: 'crash', exit: { role: e.role, pid: e.pid, log: e.log } });
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
  async resendAlone(input: FuzzInput): Promise<{ outcome: Outcome; cpuMs: number; exits: ReturnType<FuzzServer['exits']>; hung: boolean }> {
    await this.#server.waitReady(this.#o.workers);
    const role = roleFor(input.port);
    const exitsBefore = this.#server.exitCount;
    const cpu0 = this.#server.cpuMs(role);
    const outcome = await send(this.target(input.port), input.bytes, HANG_MS);
    await new Promise((r) => setTimeout(r, 400));
    const cpuMs = this.#server.cpuMs(role) - cpu0;
    const exits = this.#server.exits(exitsBefore);
    this.#exitsSeen = this.#server.exitCount;
    const hung = outcome.kind === 'timeout';
    if (hung) await this.killSpinning(role);
    if (exits.length || hung) await this.#server.waitReady(this.#o.workers);
    return { outcome, cpuMs, exits, hung };
  }

  async run(surface: Surface, inputs: number): Promise<SurfaceStats> {
    this.#surface = surface.name;
    const stats: SurfaceStats = { sent: 0, skipped: {}, classes: {}, findings: {}, seconds: 0, unconfirmed: {} };
    const suspects: Suspect[] = [];
    const seen = new Set<string>();
    let next = 0;
    const t0 = performance.now();
    let lastProgress = t0;
    const count = (rec: Record<string, number>, k: string): void => { rec[k] = (rec[k] ?? 0) + 1; };
    const addSuspect = (s: Suspect): void => {
      const k = `${s.kind}:${s.index}`;
      if (seen.has(k)) return;
      seen.add(k);
      suspects.push(s);
    };
    const exitWatch = setInterval(() => {
      const found: Suspect[] = [];
      this.#collectExits(found);
      for (const s of found) addSuspect(s);
    }, 250);
    const loop = async (): Promise<void> => {
      while (next < inputs) {
        while (this.#paused) await this.#paused;
        const index = next++;
        const input = surface.generate(Rng.forInput(this.#o.seed, surface.name, index));
        const known = knownBug(input.bytes);
        if (this.#o.skipKnown && known === 'received-odd-whitespace') { count(stats.skipped, known); continue; }
        if (input.port === 'controller' && !isSafeForController(input.bytes, this.#ctx!)) { count(stats.skipped, 'unsafe-savemap'); continue; }
        this.#inFlight.set(index, { index, input, started: performance.now() });
        this.#lastSent = { surface: surface.name, index, input };
        this.#sinceSample.push(this.#lastSent);
        const outcome = await send(this.target(input.port), input.bytes);
        this.#inFlight.delete(index);
        stats.sent++;
        this.#sentTotal++;
        count(stats.classes, statusClass(outcome));
        if (outcome.kind === 'closed' || outcome.kind === 'error') {
          this.#dropped.push([Date.now(), index, input]);
          if (this.#dropped.length > 256) this.#dropped.shift();
        }
        if (outcome.kind === 'reply' && outcome.status >= 500 && !surface.expected5xx(outcome.status, outcome.head, outcome.body)) {
          const text = outcome.body.toString('latin1', 0, 300);
          count(stats.findings, '5xx');
          this.#record({ surface: surface.name, seed: this.#o.seed, index, kind: '5xx', port: input.port, note: input.note, ...(known ? { known } : {}), confirmed: true, status: outcome.status, reply: text, timings: { clientMs: outcome.ms }, bytes: input.bytes.length, date: new Date().toISOString() }, input.bytes, `${outcome.status}:${text.replace(/\d+/g, 'N').slice(0, 120)}`);
        }
        const sms = serverMs(outcome);
        if (sms !== undefined && sms > this.#o.slowMs) addSuspect({ index, input, outcome, kind: 'slow' });
        if (outcome.kind === 'timeout') {
          addSuspect({ index, input, outcome, kind: 'hang' });
          if (!this.#paused) {
            // Stop sending, let the rest finish or time out, and kill a worker stuck on it.
            let release!: () => void;
            this.#paused = new Promise<void>((r) => { release = r; });
            void (async () => {
              await this.#drain();
              const killed = await this.killSpinning(roleFor(input.port));
              log(`[hang] ${surface.name} #${index}: no reply in ${HANG_MS} ms; ${killed} spinning worker(s) killed`);
              this.#paused = undefined;
              release();
            })();
          }
        }
        const now = performance.now();
        if (now - lastProgress > PROGRESS_MS) {
          lastProgress = now;
          log(`[${surface.name}] ${stats.sent}/${inputs} sent, ${(stats.sent / ((now - t0) / 1000)).toFixed(1)}/s, ${JSON.stringify(stats.classes)}, suspects ${suspects.length}`);
        }
      }
    };
    await Promise.all(Array.from({ length: this.#o.concurrency }, loop));
    clearInterval(exitWatch);
    stats.seconds = (performance.now() - t0) / 1000;
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
    for (const s of suspects) {
      tried[s.kind] = (tried[s.kind] ?? 0) + 1;
      if (tried[s.kind]! > MAX_CONFIRMATIONS) {
        stats.unconfirmed[s.kind] = (stats.unconfirmed[s.kind] ?? 0) + 1;
        continue;
      }
      const known = knownBug(s.input.bytes);
      const r = await this.resendAlone(s.input);
      const base = { surface: surface.name, seed: this.#o.seed, index: s.index, port: s.input.port, note: s.input.note, ...(known ? { known } : {}), bytes: s.input.bytes.length, date: new Date().toISOString() };
      const clientMs = r.outcome.ms;
      const sms = serverMs(r.outcome);
      const timings = { clientMs, ...(sms !== undefined ? { serverMs: sms } : {}), cpuMs: r.cpuMs };
      let kind: FindingKind | undefined;
      if (r.exits.length) kind = 'crash';
      else if (r.outcome.kind === 'timeout') kind = 'hang';
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
  const head = ['surface', 'sent', 'skipped', 'inputs/s', 'replies by class', 'findings', 'unconfirmed'];
  const body = rows.map(([name, s]) => [
    name, String(s.sent), String(Object.values(s.skipped).reduce((a, b) => a + b, 0)), (s.sent / Math.max(s.seconds, 1e-9)).toFixed(1),
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
  const server = await FuzzServer.start({ root, workers: o.workers, heapMb: o.heapMb, echo: o.echo });
  stopOnSignal(() => server.stop());
  try {
    const c = new Campaign(server, o, new FindingStore(o.out), 0);
    const hwm0 = server.samples().filter((s) => s.role === roleFor(port)).reduce((a, s) => a + s.hwmKiB, 0);
    const r = await c.resendAlone({ bytes, port, note: '' });
    const hwm1 = server.samples().filter((s) => s.role === roleFor(port)).reduce((a, s) => a + s.hwmKiB, 0);
    const status = r.outcome.kind === 'reply' ? `status ${r.outcome.status}` : r.outcome.kind;
    const sms = serverMs(r.outcome);
    log(`reply: ${status} in ${r.outcome.ms.toFixed(0)} ms${sms !== undefined ? `, server time ${sms.toFixed(0)} ms` : ''}, worker CPU ${r.cpuMs.toFixed(0)} ms, worker exits ${r.exits.length}${r.exits.length ? ` (${r.exits[0]!.log.slice(-2).join(' | ').slice(0, 400)})` : ''}, peak RSS +${((hwm1 - hwm0) / 1024).toFixed(0)} MiB`);
    const reproduces =
      kind === 'crash' ? r.exits.length > 0
        : kind === 'hang' ? r.outcome.kind === 'timeout'
          : kind === 'slow' ? r.cpuMs > o.slowMs
            : kind === '5xx' ? r.outcome.kind === 'reply' && r.outcome.status === meta?.status
              : kind === 'memory' ? (hwm1 - hwm0) / 1024 > o.memGrowthMb
                : r.exits.length > 0 || r.outcome.kind === 'timeout' || r.cpuMs > o.slowMs || (r.outcome.kind === 'reply' && r.outcome.status >= 500);
    process.stdout.write(`${basename(file)}: ${reproduces ? 'REPRODUCES' : 'does not reproduce'}${kind ? ` (${kind})` : ''}\n`);
    return reproduces ? 1 : 0;
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const program = new Command('fuzz')
    .option('--surface <name>', `one of ${SURFACES.join(', ')}, a comma-separated list, or all`, 'all')
    .option('--inputs <n>', 'inputs per surface', (v) => Number(v), 1000)
    .option('--seed <n>', 'campaign seed (the same seed sends the same inputs)', (v) => Number(v), 1)
    .option('--out <dir>', 'directory for findings', 'fuzz-findings')
    .option('--concurrency <n>', 'inputs in flight at once', (v) => Number(v), 4)
    .option('--workers <n>', 'normal workers of the server', (v) => Number(v), 2)
    .option('--slow-ms <n>', 'server time (and, re-sent alone, worker CPU) above which a scan is slow', (v) => Number(v), 1000)
    .option('--mem-growth-mb <n>', 'RSS growth of a process after warm-up reported as a finding', (v) => Number(v), 256)
    .option('--heap-mb <n>', 'V8 old-space limit of the server processes', (v) => Number(v), 1024)
    .option('--skip-known', 'do not send inputs that hit a known hang (Received with odd whitespace)')
    .option('--no-corpus', 'seed messages from the fixtures only (faster start)')
    .option('--replay <file>', 're-send one saved finding (.bin) and say whether it still reproduces')
    .option('--echo', "copy the server's output to stderr")
    .parse();
  const o = program.opts<Options>();
  o.skipKnown = Boolean(o.skipKnown);
  o.echo = Boolean(o.echo);
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
  log(`${seeds.messages.length} messages, ${seeds.scanRequests.length} recorded requests; starting the server (${o.workers} workers)…`);
  const server = await FuzzServer.start({ root, workers: o.workers, heapMb: o.heapMb, echo: o.echo });
  stopOnSignal(() => server.stop());
  const store = new FindingStore(o.out);
  const rows: Array<[string, SurfaceStats]> = [];
  let campaign: Campaign | undefined;
  try {
    const maps = await mapIds(server);
    const ctx: SurfaceContext = { seeds, mapIds: maps.all, writableMapIds: maps.writable };
    log(`controller maps: ${maps.all.length} (${maps.writable.length} inside the temp dir, the only ones /savemap is aimed at)`);
    const surfaces = surfacesFor(names, ctx, root);
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
    const mem = campaign?.memoryTable() ?? [];
    await server.stop();
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
    process.exitCode = 2;
  });
}
