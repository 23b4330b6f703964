// npm run bench: whole-scan throughput of mailsift (and, with --rspamd, of the reference Rspamd
// in the same run) on the corpus's development split over keep-alive HTTP, at several
// concurrencies. Prints messages/s, p50/p99 latency, server CPU ms per message and peak RSS.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { ScanClient } from '../src/client/index.js';
import { loadCorpus, type CorpusMessage } from './corpus.js';
import { RssSampler, treeCpuMs } from './proc-stats.js';
import { startMailsift, startReferenceRspamd, type RunningServer } from './servers.js';

/** Messages scanned (at concurrency 8, unmeasured) before each server's measured runs, to warm JITs and caches. */
const WARMUP_MESSAGES = 200;
/** Per-scan time-out: above Rspamd's 8 s task deadline, so a slow scan is measured rather than dropped. */
const SCAN_TIMEOUT_MS = 30_000;

export interface LevelResult {
  server: string;
  concurrency: number;
  messages: number;
  errors: number;
  seconds: number;
  messagesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerMessage: number;
  /** The benchmark client's own CPU per message: when it nears the server's, the client is the bottleneck. */
  clientCpuMsPerMessage: number;
  actions: Record<string, number>;
}

export interface ServerSummary {
  server: string;
  peakPssMiB: number;
  levels: LevelResult[];
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

async function scanAll(client: ScanClient, corpus: CorpusMessage[], concurrency: number) {
  const latencies: number[] = [];
  const actions: Record<string, number> = {};
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < corpus.length) {
      const msg = corpus[next++]!;
      const t0 = performance.now();
      try {
        const reply = await client.scan(msg.bytes, { bodyBlock: false });
        latencies.push(performance.now() - t0);
        const action = typeof reply.result.action === 'string' ? reply.result.action : '?';
        actions[action] = (actions[action] ?? 0) + 1;
      } catch (e) {
        errors++;
        firstError ??= `${msg.name}: ${(e as Error).message}`;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { seconds: (performance.now() - started) / 1000, latencies, actions, errors, firstError };
}

async function measure(server: RunningServer, corpus: CorpusMessage[], levels: number[], log: (s: string) => void): Promise<ServerSummary> {
  const client = new ScanClient({ server: server.scan, timeoutMs: SCAN_TIMEOUT_MS, keepAlive: true });
  const rss = new RssSampler(() => server.pids());
  const out: LevelResult[] = [];
  try {
    await scanAll(client, corpus.slice(0, WARMUP_MESSAGES), 8);
    for (const c of levels) {
      log(`${server.name}: concurrency ${c}, ${corpus.length} messages…`);
      const cpu0 = treeCpuMs(server.pids());
      const own0 = process.cpuUsage();
      const run = await scanAll(client, corpus, c);
      const own = process.cpuUsage(own0);
      const cpu1 = treeCpuMs(server.pids());
      const sorted = run.latencies.sort((a, b) => a - b);
      const done = corpus.length - run.errors;
      if (run.firstError) log(`${server.name}: ${run.errors} failed scans, first: ${run.firstError}`);
      out.push({
        server: server.name,
        concurrency: c,
        messages: done,
        errors: run.errors,
        seconds: run.seconds,
        messagesPerSec: done / run.seconds,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        cpuMsPerMessage: done ? (cpu1 - cpu0) / done : NaN,
        clientCpuMsPerMessage: done ? (own.user + own.system) / 1000 / done : NaN,
        actions: run.actions,
      });
    }
  } finally {
    client.close();
  }
  return { server: server.name, peakPssMiB: rss.stop() / (1024 * 1024), levels: out };
}

function table(summaries: ServerSummary[], corpus: CorpusMessage[]): string {
  const groups = new Map<string, number>();
  for (const m of corpus) groups.set(m.group, (groups.get(m.group) ?? 0) + 1);
  const mib = corpus.reduce((s, m) => s + m.bytes.length, 0) / (1024 * 1024);
  const lines = [`corpus: ${corpus.length} messages (${[...groups].map(([g, n]) => `${g} ${n}`).join(', ')}), ${mib.toFixed(1)} MiB`];
  const head = ['server', 'conc', 'msgs/s', 'p50 ms', 'p99 ms', 'cpu ms/msg', 'client cpu', 'errors', 'peak mem MiB (PSS)'];
  const rows: string[][] = [];
  for (const s of summaries) {
    for (const l of s.levels) {
      rows.push([s.server, String(l.concurrency), l.messagesPerSec.toFixed(1), l.p50Ms.toFixed(2), l.p99Ms.toFixed(2), l.cpuMsPerMessage.toFixed(2), l.clientCpuMsPerMessage.toFixed(2), String(l.errors), s.peakPssMiB.toFixed(0)]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push(fmt(head), ...rows.map(fmt));
  for (const s of summaries) {
    const a = s.levels[0]?.actions ?? {};
    lines.push(`${s.server} actions: ${Object.entries(a).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const program = new Command('bench-throughput')
    .option('--rspamd', 'also measure the reference Rspamd 3.4 in the same run')
    .option('--json', 'print the results as JSON')
    .option('--workers <n>', 'normal workers per server', (v) => Number(v), 2)
    .option('--concurrency <list>', 'comma-separated concurrency levels', '1,8,32')
    .option('--limit <n>', 'scan only a proportional sample of this many messages', (v) => Number(v))
    .option('--no-mailsift', 'skip mailsift (measure only Rspamd)')
    .parse();
  const o = program.opts<{ rspamd?: boolean; json?: boolean; workers: number; concurrency: string; limit?: number; mailsift: boolean }>();
  const levels = o.concurrency.split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const log = (s: string): void => { process.stderr.write(`${s}\n`); };
  const root = repoRoot();
  const corpus = await loadCorpus(root, o.limit);
  const summaries: ServerSummary[] = [];
  const runOne = async (start: () => Promise<RunningServer>): Promise<void> => {
    const server = await start();
    try {
      summaries.push(await measure(server, corpus, levels, log));
    } finally {
      await server.stop();
    }
  };
  if (o.mailsift) {
    log(`starting mailsift with ${o.workers} workers…`);
    await runOne(() => startMailsift(root, o.workers));
  }
  if (o.rspamd) {
    log(`starting the reference Rspamd with ${o.workers} workers…`);
    await runOne(() => startReferenceRspamd(o.workers));
  }
  if (o.json) process.stdout.write(JSON.stringify({ date: new Date().toISOString(), workers: o.workers, corpus: corpus.length, results: summaries }, null, 2) + '\n');
  else process.stdout.write(table(summaries, corpus) + '\n');
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`bench: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
