// Memory of each process of `mailsift serve`, idle and after a short load: the table of
// docs/tuning.md ("Where a process's memory goes now"). Starts the server as the throughput bench
// does (bench/servers.ts: free loopback ports, its own data directory and DNS stub), waits, prints
// every process's PSS (anonymous and file-backed parts from /proc/<pid>/smaps_rollup), scans a
// proportional sample of the development split a few times at concurrency 8 while sampling the
// peak, and prints the table again.
//   node dist/bench/process-memory.js [--limit 400] [--passes 3] [--idle 20] [--workers 2] [--verdicts file]
// --verdicts writes one line per message of the last pass (action, score, symbols) to compare two builds.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { ScanClient } from '../src/client/index.js';
import { loadCorpus } from './corpus.js';
import { processRole, processTree, pssParts, PssSampler, type PssParts } from './proc-stats.js';
import { startMailsift } from './servers.js';

/** Scans in flight, as the side-by-side figures are measured. */
const CONCURRENCY = 8;
/** Largest sample: the development split has about 3 250 messages. */
const MAX_LIMIT = 4_000;
const MAX_PASSES = 50;

const mib = (kib: number): string => (kib / 1024).toFixed(1);

function printTable(title: string, pids: number[], supervisor: number): void {
  const rows = pids
    .map((pid) => ({ pid, role: processRole(pid, supervisor), u: pssParts(pid) }))
    .filter((r): r is { pid: number; role: ReturnType<typeof processRole>; u: PssParts } => r.u !== undefined)
    .sort((a, b) => a.role.localeCompare(b.role) || a.pid - b.pid);
  const total = rows.reduce((s, r) => s + r.u.pssKiB, 0);
  console.log(`${title}: ${mib(total)} MiB PSS`);
  for (const r of rows) console.log(`  ${r.role.padEnd(11)} ${String(r.pid).padStart(7)}  PSS ${mib(r.u.pssKiB).padStart(6)}  anon ${mib(r.u.anonKiB).padStart(6)}  file ${mib(r.u.fileKiB).padStart(5)}`);
}

function boundedInt(max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`expected an integer 0–${max}`);
    return n;
  };
}

const opts = new Command('bench-process-memory')
  .option('--limit <n>', 'messages per pass (a proportional sample of the development split)', boundedInt(MAX_LIMIT), 400)
  .option('--passes <n>', 'passes over the sample', boundedInt(MAX_PASSES), 3)
  .option('--idle <seconds>', 'wait after start-up before the idle table', boundedInt(600), 20)
  .option('--workers <n>', 'normal workers', boundedInt(16), 2)
  .option('--verdicts <file>', 'write the last pass\'s verdicts here')
  .parse()
  .opts<{ limit: number; passes: number; idle: number; workers: number; verdicts?: string }>();

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const messages = await loadCorpus(repoRoot, opts.limit);
const server = await startMailsift(repoRoot, opts.workers);
try {
  const supervisor = server.pids()[0]!;
  const pids = (): number[] => processTree([supervisor]).filter((p) => processRole(p, supervisor) !== 'other');
  await new Promise((r) => setTimeout(r, opts.idle * 1000));
  printTable(`idle ${opts.idle} s after start`, pids(), supervisor);
  const client = new ScanClient({ server: server.scan });
  const verdicts: string[] = [];
  const sampler = new PssSampler(pids, (p) => processRole(p, supervisor));
  for (let pass = 0; pass < opts.passes; pass++) {
    let next = 0;
    const t0 = Date.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < messages.length) {
        const i = next++;
        const m = messages[i]!;
        const r = (await client.scan(m.bytes)).result;
        verdicts[i] = `${m.name} ${r.action} ${r.score?.toFixed(2) ?? '-'} ${Object.keys(r.symbols ?? {}).sort().join(',')}`;
      }
    }));
    console.log(`pass ${pass + 1}: ${messages.length} messages in ${Date.now() - t0} ms`);
  }
  const peak = sampler.stop();
  console.log(`peak ${mib(peak.totalKiB)} MiB PSS = ${peak.processes.map(([role, kib]) => `${role} ${mib(kib)}`).join(' + ')}`);
  printTable('after the load', pids(), supervisor);
  if (opts.verdicts) writeFileSync(opts.verdicts, `${verdicts.join('\n')}\n`);
} finally {
  await server.stop();
}
