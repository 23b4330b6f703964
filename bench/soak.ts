// npm run soak: N minutes of scanning at a fixed concurrency on the corpus's development split
// (bench/corpus.ts: easy-ham-1, hard-ham-1, spam-1 only) against `mailsift serve` started as the
// benchmark starts it (bench/servers.ts: shipped conf/, free loopback ports, the NXDOMAIN DNS
// stub), with a private data_dir. Every minute it prints msg/s, errors (non-2xx replies,
// connection errors, time-outs) and the RSS of every process (supervisor, each worker,
// controller); at the end, totals and each process's RSS after warm-up against its RSS at the
// end. Exits 1 on any error, any worker replaced, or memory growth past --mem-growth-mb.
import { dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { loadCorpus, shuffled } from './corpus.js';
import { processRole, processTree, sampleProcess, type ProcessRole } from './proc-stats.js';
import { startMailsift, stopOnSignal } from './servers.js';
import { LeanConnection, wireRequest } from './throughput.js';

/** Order of the corpus: one fixed shuffle, so ham and spam arrive interleaved as an MTA sees them. */
const ORDER_SEED = 0x50a4;
const MINUTE_MS = 60_000;

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== dirname(dir)) dir = dirname(dir);
  return dir;
}

type ErrorKind = 'non-2xx' | 'connection' | 'timeout';

function errorKind(e: Error): ErrorKind {
  if (e.message.startsWith('HTTP ')) return 'non-2xx';
  if (e.message.startsWith('no reply within')) return 'timeout';
  return 'connection';
}

interface Proc { pid: number; role: ProcessRole }

function processes(supervisor: number): Proc[] {
  return processTree([supervisor]).map((pid) => ({ pid, role: processRole(pid, supervisor) })).sort((a, b) => a.role.localeCompare(b.role) || a.pid - b.pid);
}

const mib = (kib: number): string => (kib / 1024).toFixed(0);

async function main(): Promise<void> {
  const o = new Command('soak')
    .option('--minutes <n>', 'how long to scan', (v) => Number(v), 30)
    .option('--concurrency <n>', 'scans in flight', (v) => Number(v), 64)
    .option('--workers <n>', 'normal workers', (v) => Number(v), 2)
    .option('--warmup-minutes <n>', 'minutes before the RSS baseline is taken', (v) => Number(v), 1)
    .option('--mem-growth-mb <n>', 'RSS growth of a process from the end of warm-up to the end that fails the soak', (v) => Number(v), 100)
    .parse()
    .opts<{ minutes: number; concurrency: number; workers: number; warmupMinutes: number; memGrowthMb: number }>();
  for (const [k, v] of Object.entries(o)) if (!Number.isFinite(v) || v < 0) throw new Error(`--${k}: expected a non-negative number, found ${v}`);
  if (o.warmupMinutes >= o.minutes) throw new Error(`--warmup-minutes (${o.warmupMinutes}) must be shorter than --minutes (${o.minutes})`);
  const log = (s: string): void => { process.stdout.write(`${s}\n`); };
  const root = repoRoot();
  const corpus = shuffled(await loadCorpus(root), ORDER_SEED);
  log(`corpus: ${corpus.length} messages (development split); starting mailsift with ${o.workers} workers…`);
  const server = await startMailsift(root, o.workers, {
    patchConf: (conf, confDir) => {
      conf.data_dir = join(confDir, 'data'); // statistics and history of the soak stay in its temp dir
      conf.logging = { level: 'warn', format: 'json' };
    },
    onOutput: (c) => { if (/"level":(50|60)|error|crash/i.test(c)) process.stderr.write(c); },
  });
  stopOnSignal(() => server.stop());
  const supervisor = server.pids()[0]!;
  const wires = corpus.map((m) => wireRequest(server.scan, m.bytes));
  const start = processes(supervisor);
  log(`processes: ${start.map((p) => `${p.role} ${p.pid}`).join(', ')}`);

  let next = 0;
  let stop = false;
  const minute = { ok: 0, errors: { 'non-2xx': 0, connection: 0, timeout: 0 } as Record<ErrorKind, number> };
  const total = { ok: 0, errors: { 'non-2xx': 0, connection: 0, timeout: 0 } as Record<ErrorKind, number> };
  let firstError: string | undefined;
  const loop = async (): Promise<void> => {
    const conn = new LeanConnection(server.scan);
    try {
      while (!stop) {
        const i = next++ % wires.length;
        try {
          await conn.request(wires[i]!);
          minute.ok++;
          total.ok++;
        } catch (e) {
          const k = errorKind(e as Error);
          minute.errors[k]++;
          total.errors[k]++;
          firstError ??= `${corpus[i]!.name}: ${(e as Error).message}`;
        }
      }
    } finally {
      conn.close();
    }
  };

  const baseline = new Map<number, number>();
  const last = new Map<number, number>();
  const replaced: string[] = [];
  const known = new Set(start.map((p) => p.pid));
  const t0 = performance.now();
  const ticker = (async () => {
    for (let m = 1; m <= o.minutes; m++) {
      await new Promise((r) => setTimeout(r, t0 + m * MINUTE_MS - performance.now()));
      const procs = processes(supervisor);
      for (const p of procs) if (!known.has(p.pid)) { known.add(p.pid); replaced.push(`${p.role} ${p.pid} appeared in minute ${m}`); }
      const mem = procs.map((p) => ({ ...p, kib: sampleProcess(p.pid)?.rssKiB ?? 0 }));
      for (const p of mem) {
        last.set(p.pid, p.kib);
        if (m === o.warmupMinutes || (m > o.warmupMinutes && !baseline.has(p.pid))) baseline.set(p.pid, p.kib);
      }
      const errs = minute.errors['non-2xx'] + minute.errors.connection + minute.errors.timeout;
      log(`minute ${String(m).padStart(3)}: ${(minute.ok / 60).toFixed(1)} msg/s, errors ${errs} (non-2xx ${minute.errors['non-2xx']}, connection ${minute.errors.connection}, timeout ${minute.errors.timeout}), RSS MiB: ${mem.map((p) => `${p.role} ${p.pid} ${mib(p.kib)}`).join(', ')}${m === o.warmupMinutes ? '  (baseline after warm-up)' : ''}`);
      minute.ok = 0;
      minute.errors = { 'non-2xx': 0, connection: 0, timeout: 0 };
    }
    stop = true;
  })();
  await Promise.all([...Array.from({ length: o.concurrency }, loop), ticker]);
  const seconds = (performance.now() - t0) / 1000;
  const end = processes(supervisor);
  await server.stop();

  const errors = total.errors['non-2xx'] + total.errors.connection + total.errors.timeout;
  log('');
  log(`total: ${total.ok + errors} messages in ${(seconds / 60).toFixed(1)} min (${(total.ok / seconds).toFixed(1)} msg/s), errors ${errors} (non-2xx ${total.errors['non-2xx']}, connection ${total.errors.connection}, timeout ${total.errors.timeout})${firstError ? `; first: ${firstError}` : ''}`);
  let grew = false;
  log(`RSS after warm-up (minute ${o.warmupMinutes}) → end, per process:`);
  for (const p of end) {
    const b = baseline.get(p.pid);
    const e = last.get(p.pid) ?? 0;
    const d = b === undefined ? undefined : (e - b) / 1024;
    const over = d !== undefined && d > o.memGrowthMb;
    grew ||= over;
    log(`  ${p.role.padEnd(10)} ${String(p.pid).padEnd(8)} ${b === undefined ? '-' : mib(b)} → ${mib(e)} MiB${d === undefined ? '' : ` (${d >= 0 ? '+' : ''}${d.toFixed(0)} MiB${b ? `, ${((d * 1024 * 100) / b).toFixed(1)} %` : ''})`}${over ? `  GREW MORE THAN ${o.memGrowthMb} MiB` : ''}`);
  }
  const gone = start.filter((p) => !end.some((q) => q.pid === p.pid));
  for (const p of gone) replaced.push(`${p.role} ${p.pid} is gone`);
  if (replaced.length) log(`workers replaced during the soak: ${replaced.join('; ')}`);
  const ok = errors === 0 && !grew && replaced.length === 0;
  log(ok ? 'soak passed: no errors, memory flat after warm-up' : `soak FAILED:${errors ? ` ${errors} errors;` : ''}${grew ? ' memory grew;' : ''}${replaced.length ? ' workers replaced;' : ''}`);
  process.exitCode = ok ? 0 : 1;
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`soak: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 2;
  });
}
