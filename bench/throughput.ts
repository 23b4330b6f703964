// npm run bench: whole-scan throughput of mailsift (and, with --rspamd, of the reference Rspamd
// in the same run) on the corpus's development split over keep-alive HTTP, at several
// concurrencies. Prints messages/s, p50/p99 latency, server CPU ms per message and the peak PSS
// of each server's whole process tree (with what each process held at that peak).
// mailsift is measured reached three ways in the same run (--via, vias.ts): directly, through
// the proxy worker's HTTP relay, and through its milter front end, and the relays' overhead
// over direct (CPU per message, p50) is printed after the table.
// Both servers get the same treatment: the same messages, client, concurrency and DNS stub
// (dns-stub.ts: NXDOMAIN with an SOA of TTL 0, so neither caches an answer), the same unmeasured
// warm-up pass, and with --trained the same training (train.ts). --split measures any corpus
// folder instead of the development split.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { Command } from 'commander';
import { loadCorpus, loadFolder, shuffled, type CorpusMessage } from './corpus.js';
import { LeanMilterConnection, milterMessage } from './milter-client.js';
import { cpuMsByPid, cpuMsOf, processTree, PssSampler, rspamdRole, type PssPeak } from './proc-stats.js';
import { flushReferenceBayes, startReferenceRspamd, type RunningServer } from './servers.js';
import { BAYES_STORES, bayesPlacement, tallyText, trainThroughController, type BayesPlacement, type BayesStore } from './train.js';
import { parseVias, startMailsiftVias, type MailsiftVias, type Via } from './vias.js';
import { recordedEnvelope } from './recorded-envelope.js';
import type { ScanMeta } from '../src/plugin-api/index.js';

const ENVELOPE_KINDS = ['none', 'recorded'] as const;
type EnvelopeKind = (typeof ENVELOPE_KINDS)[number];

/**
 * Warm-up: before its measured runs, each server scans the same messages once, unmeasured, at
 * concurrency 8 (by default the whole corpus; `--warmup <n>` for fewer, 0 for none), so the
 * measurement is of a long-running server whose JIT (V8's for mailsift, LuaJIT's for Rspamd) has
 * compiled its hot paths, not of its first minute.
 */
const WARMUP_CONCURRENCY = 8;
/**
 * Idle time before each measured pass of a server: none. The stub's NXDOMAIN answers carry an
 * SOA of TTL 0, which mailsift's resolver does not cache (RFC 2308: a negative answer is kept
 * min(SOA TTL, MINIMUM) seconds; test/bench/dns-stub.test.ts checks it), and Rspamd 3.4 keeps no
 * DNS cache: a pass right after another does the same DNS work as the first. (With the old stub's
 * SOA-less answers, cached 60 s, a pass had to wait a minute not to replay the one before.)
 * `--settle` still adds a pause, e.g. to let a machine's other load pass.
 */
const DEFAULT_SETTLE_MS = 0;
/**
 * Arrival order. `grouped` (the default, as every earlier figure was measured) sends the messages
 * folder by folder, so the 250 hard-ham messages (HTML-heavy, about three times the CPU of the
 * others) arrive in one burst; `mixed` sends them in one fixed shuffled order, as an MTA would
 * see ham, hard ham and spam arrive interleaved. Both servers get the same order.
 */
const ORDER_SEED = 0x5eed;
/** Per-scan time-out: above Rspamd's 8 s task deadline, so a slow scan is measured rather than dropped. */
const SCAN_TIMEOUT_MS = 30_000;

export interface LevelResult {
  /** The row's name: the server, and how it was reached unless directly (`mailsift via proxy`). */
  server: string;
  via: Via;
  concurrency: number;
  /** 0-based pass at this level; -1 for the median row of several passes (--repeat). */
  pass: number;
  messages: number;
  errors: number;
  seconds: number;
  messagesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerMessage: number;
  /** The proxy workers' share of cpuMsPerMessage (mailsift; every via, so an idle proxy shows as ~0). */
  relayCpuMsPerMessage?: number;
  /** The benchmark client's own CPU per message: when it nears the server's, the client is the bottleneck. */
  clientCpuMsPerMessage: number;
  /**
   * cpuMsPerMessage by role (processes of one role summed: both scan workers under `normal`):
   * where a server's CPU goes besides its scanners (supervisor, controller, Rspamd's main).
   */
  cpuByRole: Record<string, number>;
  actions: Record<string, number>;
}

export interface ServerSummary {
  server: string;
  via: Via;
  /** Peak PSS of the server's whole process tree (Rspamd's includes its redis, see peakPss). */
  peakPssMiB: number;
  /** The peak, process by process. */
  peakPss: PssPeak;
  /** One row per level: the pass, or with --repeat the median of the passes. */
  levels: LevelResult[];
  /** With --repeat: every pass. */
  passes?: LevelResult[];
}

function repoRoot(): string {
  // Runs from dist/bench/ (npm run bench) or bench/ (tsx); the repo root holds package.json.
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== dirname(dir)) dir = dirname(dir);
  return dir;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * The benchmark's own HTTP client. It shares the 2 cores with the server it measures, so it does
 * as little as it can: every request is built once before the runs (head and body in one
 * buffer), each of the `concurrency` loops owns one kept-alive socket, and a reply is read only
 * as far as its Content-Length and the JSON `action` string. ScanClient (http.Agent, header
 * objects, JSON.parse of every reply) cost about 2 ms of CPU per message, as much as a scan.
 */
interface Waiter { resolve: (body: Buffer) => void; reject: (e: Error) => void }

export class LeanConnection {
  readonly #host: string;
  readonly #port: number;
  #sock: net.Socket | undefined;
  #buf: Buffer = Buffer.alloc(0);
  #waiter: Waiter | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(server: string) {
    const i = server.lastIndexOf(':');
    this.#host = server.slice(0, i);
    this.#port = Number(server.slice(i + 1));
  }

  /** Sends one pre-built request; resolves with the reply body of a 200 reply. */
  request(wire: Buffer): Promise<Buffer> {
    const sock = this.#sock ?? this.#connect();
    return new Promise<Buffer>((resolve, reject) => {
      this.#waiter = { resolve, reject };
      this.#timer = setTimeout(() => this.#fail(new Error(`no reply within ${SCAN_TIMEOUT_MS} ms`)), SCAN_TIMEOUT_MS);
      sock.write(wire);
    });
  }

  close(): void {
    this.#sock?.destroy();
    this.#sock = undefined;
  }

  #connect(): net.Socket {
    const sock = net.connect({ host: this.#host, port: this.#port, noDelay: true });
    // A socket given up on (closed after a reply) must not fail the next request's socket.
    sock.on('data', (d: Buffer) => { if (this.#sock === sock) this.#onData(d); });
    sock.on('error', (e) => { if (this.#sock === sock) this.#fail(e); });
    sock.on('close', () => { if (this.#sock === sock) this.#fail(new Error('connection closed before the reply')); });
    this.#sock = sock;
    this.#buf = Buffer.alloc(0);
    return sock;
  }

  #fail(e: Error): void {
    this.close();
    const w = this.#settle();
    w?.reject(e);
  }

  #settle(): Waiter | undefined {
    clearTimeout(this.#timer);
    const w = this.#waiter;
    this.#waiter = undefined;
    return w;
  }

  #onData(d: Buffer): void {
    this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
    const end = this.#buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.#buf.toString('latin1', 0, end);
    const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!len) return this.#fail(new Error(`reply without Content-Length: ${head.split('\r\n')[0]}`));
    const total = end + 4 + Number(len[1]);
    if (this.#buf.length < total) return;
    const body = this.#buf.subarray(end + 4, total);
    const rest = this.#buf.subarray(total);
    this.#buf = rest.length ? Buffer.from(rest) : Buffer.alloc(0);
    const status = head.slice(9, 12);
    const keep = !/\r\nconnection:\s*close/i.test(head);
    if (!keep) this.close();
    const w = this.#settle();
    if (status !== '200') w?.reject(new Error(`HTTP ${status}: ${body.toString('utf8', 0, 200)}`));
    else w?.resolve(body);
  }
}

/**
 * The envelope an MTA passes with a scan, as header lines of the headers protocol. A value with a
 * line break or a byte beyond Latin-1 (a corpus header gone wrong) is left out, not sent broken.
 */
export function envelopeHeaders(meta: ScanMeta | undefined): string {
  if (!meta) return '';
  const fields: Array<[string, string | undefined]> = [['IP', meta.ip], ['Helo', meta.helo], ['Hostname', meta.hostname], ['From', meta.from], ...(meta.rcpt ?? []).map((r): [string, string] => ['Rcpt', r])];
  return fields.filter((f): f is [string, string] => f[1] !== undefined && f[1] !== '' && /^[\x20-\x7e\xa0-\xff]+$/.test(f[1])).map(([k, v]) => `${k}: ${v}\r\n`).join('');
}

/** A /checkv2 request exactly as sent (no body block, like `rspamc` without flags), with `envelope` when given. */
export function wireRequest(server: string, message: Buffer, envelope?: ScanMeta): Buffer {
  const head = `POST /checkv2 HTTP/1.1\r\nHost: ${server}\r\nConnection: keep-alive\r\nContent-Type: text/plain\r\n${envelopeHeaders(envelope)}Content-Length: ${message.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), message]);
}

/** Each message's envelope for --envelope: none (as `rspamc` sends without options) or the one its MTA recorded. */
function envelopesFor(corpus: CorpusMessage[], kind: EnvelopeKind): Array<ScanMeta | undefined> {
  return corpus.map((m) => (kind === 'recorded' ? recordedEnvelope(m.bytes) : undefined));
}

/** The reply's action, without parsing the whole JSON body (the action is a plain string). */
function actionOf(body: Buffer): string {
  const m = /"action"\s*:\s*"([^"]*)"/.exec(body.toString('latin1'));
  return m ? m[1]! : '?';
}

/** One client connection of a target: sends prebuilt request `i`, resolves with the scan's action. */
interface Channel {
  request(wire: Buffer): Promise<string>;
  close(): void;
}

/**
 * What the benchmark measures: one server reached one way. Targets that share a server's
 * scanners (mailsift direct, via proxy, via milter) share its process set and its DNS cache.
 */
interface Target {
  name: string;
  /** The server whose scanners do the work (targets of one server wait for each other's DNS answers to expire). */
  server: string;
  via: Via;
  address: string;
  /** Every process whose CPU and memory count (exactly these, no descendants added). */
  pids(): number[];
  /** The relays among pids() (mailsift's proxy workers). */
  relayPids?(): number[];
  /** What each of pids() is, for the memory breakdown. */
  roleOf(pid: number): string;
  /** Each corpus message as this target's client sends it. */
  wires: Buffer[];
  open(): Channel;
}

function httpChannel(address: string): Channel {
  const conn = new LeanConnection(address);
  return { request: async (wire) => actionOf(await conn.request(wire)), close: () => conn.close() };
}

function milterChannel(address: string): Channel {
  const conn = new LeanMilterConnection(address, SCAN_TIMEOUT_MS);
  return { request: (wire) => conn.request(wire), close: () => conn.close() };
}

function targetName(server: string, via: Via): string {
  return via === 'direct' ? server : `${server} via ${via}`;
}

function mailsiftTargets(m: MailsiftVias, vias: readonly Via[], corpus: CorpusMessage[], envelopes: Array<ScanMeta | undefined>): Target[] {
  return vias.map((via): Target => {
    const address = m.address[via]!;
    const wires = via === 'milter' ? corpus.map((msg, i) => milterMessage(msg.bytes, `BENCH${i.toString(16).toUpperCase()}`)) : corpus.map((msg, i) => wireRequest(address, msg.bytes, envelopes[i]));
    return { name: targetName('mailsift', via), server: 'mailsift', via, address, pids: () => m.pids(), relayPids: () => m.relayPids(), roleOf: (p) => m.roleOf(p), wires, open: () => (via === 'milter' ? milterChannel(address) : httpChannel(address)) };
  });
}

function serverTarget(s: RunningServer, corpus: CorpusMessage[], envelopes: Array<ScanMeta | undefined>): Target {
  return { name: s.name, server: s.name, via: 'direct', address: s.scan, pids: () => processTree(s.pids()), roleOf: rspamdRole, wires: corpus.map((m, i) => wireRequest(s.scan, m.bytes, envelopes[i])), open: () => httpChannel(s.scan) };
}

async function scanAll(target: Target, corpus: CorpusMessage[], concurrency: number) {
  /** [latency ms, corpus index] of each scan. */
  const timed: Array<[number, number]> = [];
  const actions: Record<string, number> = {};
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const worker = async (): Promise<void> => {
    const conn = target.open();
    try {
      while (next < corpus.length) {
        const i = next++;
        const t0 = performance.now();
        try {
          const action = await conn.request(target.wires[i]!);
          timed.push([performance.now() - t0, i]);
          actions[action] = (actions[action] ?? 0) + 1;
        } catch (e) {
          errors++;
          firstError ??= `${corpus[i]!.name}: ${(e as Error).message}`;
        }
      }
    } finally {
      conn.close();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { seconds: (performance.now() - started) / 1000, timed, actions, errors, firstError };
}

/** One measured pass of one server at one concurrency. */
async function measurePass(server: Target, corpus: CorpusMessage[], c: number, pass: number, log: (s: string) => void, slowest: number): Promise<LevelResult> {
  log(`${server.name}: concurrency ${c}, ${corpus.length} messages${pass > 0 ? ` (pass ${pass + 1})` : ''}…`);
  const relayPids = server.relayPids?.();
  const byPid0 = cpuMsByPid(server.pids());
  const relay0 = relayPids ? cpuMsOf(relayPids) : 0;
  const own0 = process.cpuUsage();
  const run = await scanAll(server, corpus, c);
  const own = process.cpuUsage(own0);
  const byPid1 = cpuMsByPid(server.pids());
  const relay1 = relayPids ? cpuMsOf(relayPids) : 0;
  // Slowest first: --slowest lists the head; the percentiles read the latencies ascending.
  run.timed.sort((a, b) => b[0] - a[0]);
  const sorted = run.timed.map(([ms]) => ms).reverse();
  const done = corpus.length - run.errors;
  const cpuByRole = cpuPerRole(byPid0, byPid1, (pid) => server.roleOf(pid), done);
  if (run.firstError) log(`${server.name}: ${run.errors} failed scans, first: ${run.firstError}`);
  for (const [ms, i] of run.timed.slice(0, slowest)) {
    log(`${server.name} c=${c} slow: ${ms.toFixed(1)} ms  ${corpus[i]!.bytes.length} bytes  ${corpus[i]!.name}`);
  }
  return {
    server: server.name,
    via: server.via,
    concurrency: c,
    pass,
    messages: done,
    errors: run.errors,
    seconds: run.seconds,
    messagesPerSec: done / run.seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    // The roles' sum (see cpuPerRole for workers that start or end during the pass).
    cpuMsPerMessage: done ? Object.values(cpuByRole).reduce((a, b) => a + b, 0) : NaN,
    ...(relayPids ? { relayCpuMsPerMessage: done ? (relay1 - relay0) / done : NaN } : {}),
    clientCpuMsPerMessage: done ? (own.user + own.system) / 1000 / done : NaN,
    cpuByRole,
    actions: run.actions,
  };
}

/**
 * Each role's CPU per message over a pass, from the processes alive at its end: one that started
 * during the pass (a restarted worker) counts from zero; one that ended is gone from /proc with
 * its CPU, and a crash shows in the errors instead.
 */
function cpuPerRole(before: Map<number, number>, after: Map<number, number>, roleOf: (pid: number) => string, done: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [pid, ms] of after) {
    const role = roleOf(pid);
    out[role] = (out[role] ?? 0) + (done ? (ms - (before.get(pid) ?? 0)) / done : NaN);
  }
  return out;
}

/** The median of each figure over a level's passes, figure by figure. */
function medianOf(passes: LevelResult[]): LevelResult {
  const mid = <T>(xs: T[], by: (x: T) => number): number => {
    const v = xs.map(by).sort((a, b) => a - b);
    const h = Math.floor(v.length / 2);
    return v.length % 2 ? v[h]! : (v[h - 1]! + v[h]!) / 2;
  };
  const first = passes[0]!;
  return {
    ...first,
    pass: -1,
    messages: mid(passes, (l) => l.messages),
    errors: mid(passes, (l) => l.errors),
    seconds: mid(passes, (l) => l.seconds),
    messagesPerSec: mid(passes, (l) => l.messagesPerSec),
    p50Ms: mid(passes, (l) => l.p50Ms),
    p99Ms: mid(passes, (l) => l.p99Ms),
    cpuMsPerMessage: mid(passes, (l) => l.cpuMsPerMessage),
    ...(first.relayCpuMsPerMessage !== undefined ? { relayCpuMsPerMessage: mid(passes, (l) => l.relayCpuMsPerMessage ?? NaN) } : {}),
    clientCpuMsPerMessage: mid(passes, (l) => l.clientCpuMsPerMessage),
    cpuByRole: Object.fromEntries(Object.keys(first.cpuByRole).map((role) => [role, mid(passes, (l) => l.cpuByRole[role] ?? 0)])),
  };
}

/**
 * Measures every target at every level, `repeat` passes each. The targets take turns pass by
 * pass (the one that goes first rotates), so their figures at a level come from the same
 * minutes of the machine: its speed drifts by tens of percent within minutes, and measuring one
 * target after the other put that drift between them. A pass starts once its server's previous
 * scans are `settleMs` old (none by default: see DEFAULT_SETTLE_MS).
 */
async function measureAll(targets: Target[], corpus: CorpusMessage[], levels: number[], repeat: number, warmup: number, log: (s: string) => void, slowest = 0, settleMs = DEFAULT_SETTLE_MS): Promise<ServerSummary[]> {
  const samplers = new Map<string, PssSampler>();
  for (const t of targets) if (!samplers.has(t.server)) samplers.set(t.server, new PssSampler(() => t.pids(), (p) => t.roleOf(p)));
  const passes = targets.map((): LevelResult[] => []);
  const lastScan = new Map<string, number>();
  if (warmup > 0) {
    const n = Math.min(warmup, corpus.length);
    for (const t of targets) {
      log(`${t.name}: warm-up, ${n} messages at concurrency ${WARMUP_CONCURRENCY} (unmeasured)…`);
      const run = await scanAll(t, corpus.slice(0, n), WARMUP_CONCURRENCY);
      if (run.firstError) log(`${t.name}: ${run.errors} failed warm-up scans, first: ${run.firstError}`);
      lastScan.set(t.server, performance.now());
    }
  }
  let round = 0;
  for (const c of levels) {
    for (let pass = 0; pass < repeat; pass++) {
      const shift = round++ % targets.length;
      const order = targets.map((_, i) => (i + shift) % targets.length);
      for (const i of order) {
        const t = targets[i]!;
        const wait = (lastScan.get(t.server) ?? -Infinity) + settleMs - performance.now();
        if (wait > 0) {
          log(`${(wait / 1000).toFixed(0)} s idle (--settle)…`);
          await new Promise((r) => setTimeout(r, wait));
        }
        passes[i]!.push(await measurePass(t, corpus, c, pass, log, slowest));
        lastScan.set(t.server, performance.now());
      }
    }
  }
  const peaks = new Map([...samplers].map(([k, s]) => [k, s.stop()]));
  return targets.map((t, i) => ({
    server: t.name,
    via: t.via,
    peakPssMiB: peaks.get(t.server)!.totalKiB / 1024,
    peakPss: peaks.get(t.server)!,
    levels: repeat > 1 ? levels.map((c) => medianOf(passes[i]!.filter((l) => l.concurrency === c))) : passes[i]!,
    ...(repeat > 1 ? { passes: passes[i]! } : {}),
  }));
}

/** The issue's targets for a relayed scan at concurrency 8, over scanning directly. */
export const OVERHEAD_TARGET = { concurrency: 8, cpuPct: 10, p50Ms: 2 } as const;

export interface Overhead {
  via: Via;
  concurrency: number;
  /** Extra CPU per message over direct, in % of direct's (median over the paired passes). */
  cpuPct: number;
  /** Extra p50 latency over direct, ms (median over the paired passes). */
  p50Ms: number;
  /**
   * The proxy workers' own CPU per message, in % of direct's CPU per message (median over the
   * paired passes). The scanners do the same work on every via, so this is the relay's cost
   * without the pass-to-pass drift of the scanners' CPU, which on a busy machine is larger
   * than the 10 % being judged.
   */
  relayCpuPct: number;
  /** Each pass's pair (same level, same round): [cpu %, p50 ms, relay cpu %]. */
  pairs: Array<[number, number, number]>;
  /** Within the targets (only judged at OVERHEAD_TARGET.concurrency). */
  withinTarget?: boolean;
}

function median(xs: number[]): number {
  const v = [...xs].sort((a, b) => a - b);
  const h = Math.floor(v.length / 2);
  return v.length % 2 ? v[h]! : (v[h - 1]! + v[h]!) / 2;
}

/**
 * Each relayed via of mailsift against mailsift direct, pass by pass: a via's pass is compared
 * with direct's pass of the same round, which ran minutes apart at most, so the machine's drift
 * between rounds stays out of the difference; the median of those pairs is reported.
 */
export function overheads(summaries: ServerSummary[]): Overhead[] {
  const direct = summaries.find((s) => s.server === 'mailsift');
  if (!direct) return [];
  const passesOf = (s: ServerSummary): LevelResult[] => s.passes ?? s.levels;
  const out: Overhead[] = [];
  for (const s of summaries) {
    if (s.via === 'direct' || !s.server.startsWith('mailsift')) continue;
    for (const c of [...new Set(passesOf(s).map((l) => l.concurrency))]) {
      const pairs: Array<[number, number, number]> = [];
      for (const l of passesOf(s).filter((x) => x.concurrency === c)) {
        const d = passesOf(direct).find((x) => x.concurrency === c && x.pass === l.pass);
        if (d) pairs.push([(l.cpuMsPerMessage / d.cpuMsPerMessage - 1) * 100, l.p50Ms - d.p50Ms, ((l.relayCpuMsPerMessage ?? NaN) / d.cpuMsPerMessage) * 100]);
      }
      if (pairs.length === 0) continue;
      const o: Overhead = { via: s.via, concurrency: c, cpuPct: median(pairs.map((p) => p[0])), p50Ms: median(pairs.map((p) => p[1])), relayCpuPct: median(pairs.map((p) => p[2])), pairs };
      if (c === OVERHEAD_TARGET.concurrency) o.withinTarget = o.cpuPct <= OVERHEAD_TARGET.cpuPct && o.p50Ms <= OVERHEAD_TARGET.p50Ms;
      out.push(o);
    }
  }
  return out;
}

function overheadTable(list: Overhead[]): string[] {
  if (list.length === 0) return [];
  const lines = [
    `overhead over mailsift direct (median of paired passes; target at concurrency ${OVERHEAD_TARGET.concurrency}: at most +${OVERHEAD_TARGET.cpuPct} % cpu/msg and +${OVERHEAD_TARGET.p50Ms} ms p50)`,
    "  cpu/msg: all mailsift processes against direct's; proxy's own: the proxy workers' CPU alone, in % of direct's (steadier: the scanners' share drifts)",
  ];
  for (const o of list) {
    const sign = (x: number, d: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;
    const each = o.pairs.length > 1 ? `  (passes: ${o.pairs.map(([c, p, r]) => `${sign(c, 1)} %/${sign(p, 2)} ms/proxy ${r.toFixed(1)} %`).join(', ')})` : '';
    const verdict = o.withinTarget === undefined ? '' : o.withinTarget ? '  within target' : '  OVER TARGET';
    lines.push(`  via ${o.via.padEnd(6)} c=${String(o.concurrency).padEnd(3)} cpu/msg ${sign(o.cpuPct, 1).padStart(6)} % (proxy's own ${o.relayCpuPct.toFixed(1)} %)   p50 ${sign(o.p50Ms, 2).padStart(6)} ms${verdict}${each}`);
  }
  return lines;
}

/** Where each server's CPU per message went, role by role (the first level's row: the median with --repeat). */
function cpuRoleLines(summaries: ServerSummary[]): string[] {
  return summaries.flatMap((s) => {
    const l = s.levels[0];
    if (!l) return [];
    const parts = Object.entries(l.cpuByRole).sort((a, b) => b[1] - a[1]);
    return [`${s.server} cpu ms/msg by role: ${parts.map(([role, ms]) => `${role} ${ms.toFixed(2)}`).join(' + ')}`];
  });
}

/** Each server's peak PSS, process by process at that peak, and each role's own peak. */
export function memoryLines(summaries: ServerSummary[]): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  const mib = (kib: number): string => (kib / 1024).toFixed(0);
  for (const s of summaries) {
    const server = s.server.split(' via ')[0]!;
    if (seen.has(server)) continue;
    seen.add(server);
    const p = s.peakPss;
    lines.push(`${server} peak PSS ${mib(p.totalKiB)} MiB = ${p.processes.map(([role, kib]) => `${role} ${mib(kib)}`).join(' + ')}`);
    lines.push(`  each role's own peak: ${Object.entries(p.rolePeakKiB).map(([role, kib]) => `${role} ${mib(kib)}`).join(', ')}`);
  }
  return lines;
}

function table(summaries: ServerSummary[], corpus: CorpusMessage[], order: string, setup: string): string {
  const groups = new Map<string, number>();
  for (const m of corpus) groups.set(m.group, (groups.get(m.group) ?? 0) + 1);
  const mib = corpus.reduce((s, m) => s + m.bytes.length, 0) / (1024 * 1024);
  const lines = [`corpus: ${corpus.length} messages (${[...groups].map(([g, n]) => `${g} ${n}`).join(', ')}), ${mib.toFixed(1)} MiB, ${order} order; ${setup}`];
  const head = ['server', 'conc', 'msgs/s', 'p50 ms', 'p99 ms', 'cpu ms/msg', 'of it proxy', 'client cpu', 'errors', 'peak mem MiB (PSS)'];
  const rows: string[][] = [];
  const row = (name: string, s: ServerSummary, l: LevelResult): string[] =>
    [name, String(l.concurrency), l.messagesPerSec.toFixed(1), l.p50Ms.toFixed(2), l.p99Ms.toFixed(2), l.cpuMsPerMessage.toFixed(2), l.relayCpuMsPerMessage?.toFixed(2) ?? '-', l.clientCpuMsPerMessage.toFixed(2), String(l.errors), s.peakPssMiB.toFixed(0)];
  for (const s of summaries) {
    for (const l of s.passes ?? []) rows.push(row(`${s.server} pass ${l.pass + 1}`, s, l));
    for (const l of s.levels) rows.push(row(s.passes ? `${s.server} median` : s.server, s, l));
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push(fmt(head), ...rows.map(fmt));
  for (const s of summaries) {
    const a = s.levels[0]?.actions ?? {};
    lines.push(`${s.server} actions: ${Object.entries(a).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  lines.push(...cpuRoleLines(summaries));
  lines.push(...memoryLines(summaries));
  lines.push(...overheadTable(overheads(summaries)));
  return lines.join('\n');
}

async function main(): Promise<void> {
  const program = new Command('bench-throughput')
    .option('--rspamd', 'also measure the reference Rspamd 3.4 in the same run')
    .option('--json', 'print the results as JSON (the table then goes to stderr)')
    .option('--workers <n>', 'normal workers per server', (v) => Number(v), 2)
    .option('--concurrency <list>', 'comma-separated concurrency levels', '1,8,32')
    .option('--limit <n>', 'scan only a proportional sample of this many messages', (v) => Number(v))
    .option('--no-mailsift', 'skip mailsift (measure only Rspamd)')
    .option('--warmup <n>', 'messages each server scans unmeasured first (default: all; 0: no warm-up)', (v) => Number(v))
    .option('--slowest <n>', 'list the n slowest scans of each measured level', (v) => Number(v), 0)
    .option('--order <order>', 'arrival order: grouped (folder by folder) or mixed (one fixed shuffle)', 'grouped')
    .option('--repeat <n>', 'measured passes per level and server; the table adds their medians', (v) => Number(v), 1)
    .option('--settle <seconds>', 'idle time before each measured pass (default 0: the DNS stub\'s answers are never cached, so passes need no pause)', (v) => Number(v))
    .option('--split <folder>', 'measure this corpus folder (one message per file; subfolders are groups) instead of the development split')
    .option('--trained', 'train Bayes on the development split through each server\'s controller before measuring')
    .option('--train-limit <n>', 'with --trained: learn only a proportional sample of this many messages (quick checks)', (v) => Number(v))
    .option('--store <store>', `with --trained: mailsift's Bayes store, ${BAYES_STORES.join(' or ')} (Redis at 127.0.0.1:6379, under a key prefix removed at the end)`, 'sqlite')
    .option('--no-bulk', 'with --trained: learn mailsift without Learn-Type: bulk (its learn guards apply, as for Rspamd)')
    .option('--envelope <kind>', 'what the client sends with each message: none (as `rspamc` without options) or recorded (the sender IP, HELO, reverse name, Return-Path and recipient its MTA recorded, as an MTA passes them; not with --via milter, whose client sends no envelope)', 'none')
    .option('--via <list>', 'how the client reaches mailsift: direct (/checkv2 of the normal workers), proxy (HTTP through the proxy worker), milter (milter through the proxy worker)', 'direct,proxy,milter')
    .parse();
  const o = program.opts<{ rspamd?: boolean; json?: boolean; workers: number; concurrency: string; limit?: number; mailsift: boolean; warmup?: number; slowest: number; order: string; repeat: number; via: string; settle?: number; split?: string; trained?: boolean; trainLimit?: number; store: string; bulk: boolean; envelope: string }>();
  const vias = parseVias(o.via);
  if (o.settle !== undefined && !(o.settle >= 0)) throw new Error(`--settle: expected a number of seconds, found ${o.settle}`);
  const settleMs = o.settle !== undefined ? o.settle * 1000 : DEFAULT_SETTLE_MS;
  if (!(BAYES_STORES as readonly string[]).includes(o.store)) throw new Error(`--store: expected ${BAYES_STORES.join(' or ')}, found ${o.store}`);
  if (!Number.isInteger(o.repeat) || o.repeat < 1) throw new Error(`--repeat: expected a whole number of passes (1 or more), found ${o.repeat}`);
  if (o.order !== 'mixed' && o.order !== 'grouped') throw new Error(`--order: expected mixed or grouped, found ${o.order}`);
  const levels = o.concurrency.split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const log = (s: string): void => { process.stderr.write(`${s}\n`); };
  const root = repoRoot();
  const loaded = o.split ? await loadFolder(resolve(o.split), o.limit) : await loadCorpus(root, o.limit);
  const corpus = o.order === 'mixed' ? shuffled(loaded, ORDER_SEED) : loaded;
  if (!(ENVELOPE_KINDS as readonly string[]).includes(o.envelope)) throw new Error(`--envelope: expected ${ENVELOPE_KINDS.join(' or ')}, found ${o.envelope}`);
  if (o.envelope !== 'none' && o.mailsift && vias.includes('milter')) throw new Error('--envelope recorded: the milter client sends no envelope; measure --via direct or proxy');
  const envelopes = envelopesFor(corpus, o.envelope as EnvelopeKind);
  const warmup = o.warmup !== undefined && Number.isInteger(o.warmup) && o.warmup >= 0 ? o.warmup : corpus.length;
  const trained = o.trained ? await trainingPlan(root, o.store as BayesStore, o.bulk, o.trainLimit) : undefined;
  const setup = `${o.split ? `split ${o.split}` : 'development split'}; ${trained ? `trained on ${trained.messages.length} development-split messages (mailsift: ${trained.placement.describe}${o.bulk ? ', Learn-Type: bulk' : ''}; Rspamd: its redis)` : 'untrained'}; envelope ${o.envelope === 'recorded' ? 'as its MTA recorded it' : 'none'}`;
  const servers: Array<{ stop(): Promise<void> }> = [];
  const targets: Target[] = [];
  let summaries: ServerSummary[];
  try {
    if (o.mailsift) {
      log(`starting mailsift with ${o.workers} workers (reached ${vias.join(', ')})…`);
      const m = await startMailsiftVias(root, o.workers, vias, trained ? { patchConf: (conf) => trained.placement.patch(conf) } : {});
      servers.push(m);
      if (trained) {
        log(`mailsift: training Bayes on ${trained.messages.length} messages through ${m.main.controller}…`);
        log(`mailsift: ${tallyText(await trainThroughController(m.main.controller!, trained.messages, trained.bulk))}`);
      }
      targets.push(...mailsiftTargets(m, vias, corpus, envelopes));
    }
    if (o.rspamd) {
      log(`starting the reference Rspamd with ${o.workers} workers…`);
      const r = await startReferenceRspamd(o.workers);
      servers.push(r);
      if (trained) {
        await flushReferenceBayes();
        log(`rspamd: training Bayes on ${trained.messages.length} messages through ${r.controller}…`);
        log(`rspamd: ${tallyText(await trainThroughController(r.controller!, trained.messages, false))}`);
      }
      targets.push(serverTarget(r, corpus, envelopes));
    }
    if (targets.length === 0) throw new Error('nothing to measure: --no-mailsift without --rspamd');
    summaries = await measureAll(targets, corpus, levels, o.repeat, warmup, log, o.slowest, settleMs);
  } finally {
    for (const s of servers) await s.stop();
    await trained?.placement.cleanUp().catch((e: unknown) => log(`could not remove the run's Redis keys: ${(e as Error).message}`));
  }
  // With --json the table still goes to stderr, next to the progress lines.
  if (o.json) process.stdout.write(JSON.stringify({ date: new Date().toISOString(), workers: o.workers, corpus: corpus.length, order: o.order, setup, vias, results: summaries, overheads: overheads(summaries) }, null, 2) + '\n');
  (o.json ? process.stderr : process.stdout).write(table(summaries, corpus, o.order, setup) + '\n');
}

/** --trained: what both servers learn (the development split, or a sample of it) and where mailsift keeps it. */
async function trainingPlan(root: string, store: BayesStore, bulk: boolean, limit?: number): Promise<{ messages: CorpusMessage[]; placement: BayesPlacement; bulk: boolean }> {
  return { messages: await loadCorpus(root, limit), placement: bayesPlacement(store), bulk };
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`bench: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
