// npm run bench:verdicts: proves a speed change kept the verdicts. It starts mailsift the way
// `npm run bench` does (same configuration, DNS stub, optional training), scans every message of
// the split once through /checkv2, and records each message's action, score and symbol set.
//   npm run bench:verdicts -- --save before.json        (on the commit before the change)
//   npm run bench:verdicts -- --compare before.json     (after it)
// --compare lists every message whose action or symbol set changed (symbols added and removed)
// and exits 1 when any did; scores are shown beside them but a score alone does not count as a
// change unless --scores is given. Both flags may be used in one run (--save after.json --compare before.json).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { loadCorpus, loadFolder, type CorpusMessage } from './corpus.js';
import { startMailsift } from './servers.js';
import { LeanConnection, wireRequest } from './throughput.js';
import { BAYES_STORES, bayesPlacement, tallyText, trainThroughController, type BayesStore } from './train.js';

/** Scans in flight: enough to keep 2 workers busy, as the throughput bench's main level. */
const DEFAULT_CONCURRENCY = 8;
/** Score differences below this are rounding, not a change (Rspamd prints scores to 2 decimals). */
const SCORE_EPSILON = 0.005;

export interface Verdict {
  action: string;
  score: number;
  /** Symbol names, sorted. */
  symbols: string[];
}

export interface VerdictFile {
  date: string;
  commit: string;
  setup: string;
  /** Message name (its path in the split) → verdict; a scan that failed is recorded as its error. */
  verdicts: Record<string, Verdict | { error: string }>;
}

export interface VerdictChange {
  name: string;
  before: Verdict | { error: string } | undefined;
  after: Verdict | { error: string } | undefined;
  added: string[];
  removed: string[];
}

function isVerdict(v: Verdict | { error: string } | undefined): v is Verdict {
  return v !== undefined && 'action' in v;
}

/** Reads the action, score and symbol names of a /checkv2 JSON reply. */
export function verdictOf(body: Buffer): Verdict {
  const r = JSON.parse(body.toString('utf8')) as { action?: unknown; score?: unknown; symbols?: Record<string, unknown> };
  return { action: String(r.action), score: Number(r.score), symbols: Object.keys(r.symbols ?? {}).sort() };
}

/** Every message whose action or symbol set differs between two runs (or whose score does, with `scores`). */
export function compareVerdicts(before: VerdictFile['verdicts'], after: VerdictFile['verdicts'], scores = false): VerdictChange[] {
  const out: VerdictChange[] = [];
  for (const name of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const b = before[name];
    const a = after[name];
    if (isVerdict(b) && isVerdict(a)) {
      const added = a.symbols.filter((s) => !b.symbols.includes(s));
      const removed = b.symbols.filter((s) => !a.symbols.includes(s));
      const scoreChanged = scores && Math.abs(a.score - b.score) >= SCORE_EPSILON;
      if (a.action !== b.action || added.length || removed.length || scoreChanged) out.push({ name, before: b, after: a, added, removed });
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push({ name, before: b, after: a, added: [], removed: [] });
    }
  }
  return out;
}

function describe(v: Verdict | { error: string } | undefined): string {
  if (v === undefined) return 'not scanned';
  return isVerdict(v) ? `${v.action} ${v.score.toFixed(2)}` : `error: ${v.error}`;
}

export function changeLines(changes: VerdictChange[]): string[] {
  return changes.map((c) => {
    const syms = [...c.added.map((s) => `+${s}`), ...c.removed.map((s) => `-${s}`)].join(' ');
    return `${c.name}: ${describe(c.before)} -> ${describe(c.after)}${syms ? `  ${syms}` : ''}`;
  });
}

async function scanAll(scan: string, corpus: CorpusMessage[], concurrency: number): Promise<VerdictFile['verdicts']> {
  const verdicts: VerdictFile['verdicts'] = {};
  let next = 0;
  const worker = async (): Promise<void> => {
    const conn = new LeanConnection(scan);
    try {
      while (next < corpus.length) {
        const m = corpus[next++]!;
        try {
          verdicts[m.name] = verdictOf(await conn.request(wireRequest(scan, m.bytes)));
        } catch (e) {
          verdicts[m.name] = { error: (e as Error).message };
        }
      }
    } finally {
      conn.close();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  // Keys in corpus order, so saved files diff cleanly.
  return Object.fromEntries(corpus.map((m) => [m.name, verdicts[m.name]!]));
}

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== dirname(dir)) dir = dirname(dir);
  return dir;
}

function headCommit(root: string): string {
  try {
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root }).toString().trim() !== '';
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim() + (dirty ? '+changes' : '');
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const o = new Command('bench-verdicts')
    .option('--save <file>', 'write every message\'s verdict to this file')
    .option('--compare <file>', 'compare with a saved file: list messages whose action or symbol set changed (exit 1 if any)')
    .option('--scores', 'with --compare: a changed score counts as a change too')
    .option('--split <folder>', 'scan this corpus folder (one message per file) instead of the development split')
    .option('--limit <n>', 'scan only a proportional sample of this many messages', (v) => Number(v))
    .option('--workers <n>', 'normal workers', (v) => Number(v), 2)
    .option('--concurrency <n>', 'scans in flight', (v) => Number(v), DEFAULT_CONCURRENCY)
    .option('--trained', 'train Bayes on the development split through the controller first')
    .option('--train-limit <n>', 'with --trained: learn only a proportional sample of this many messages', (v) => Number(v))
    .option('--store <store>', `with --trained: Bayes store, ${BAYES_STORES.join(' or ')}`, 'sqlite')
    .parse()
    .opts<{ save?: string; compare?: string; scores?: boolean; split?: string; limit?: number; workers: number; concurrency: number; trained?: boolean; trainLimit?: number; store: string }>();
  if (!o.save && !o.compare) throw new Error('nothing to do: give --save <file>, --compare <file> or both');
  if (!(BAYES_STORES as readonly string[]).includes(o.store)) throw new Error(`--store: expected ${BAYES_STORES.join(' or ')}, found ${o.store}`);
  const log = (s: string): void => { process.stderr.write(`${s}\n`); };
  const root = repoRoot();
  // Read first: a missing or unreadable file should fail before minutes of scanning.
  const before = o.compare ? (JSON.parse(await readFile(o.compare, 'utf8')) as VerdictFile) : undefined;
  const corpus = o.split ? await loadFolder(resolve(o.split), o.limit) : await loadCorpus(root, o.limit);
  const placement = o.trained ? bayesPlacement(o.store as BayesStore) : undefined;
  const setup = `${o.split ? `split ${o.split}` : 'development split'}${o.limit !== undefined ? ` (limit ${o.limit})` : ''}; ${placement ? `trained${o.trainLimit !== undefined ? ` (train limit ${o.trainLimit})` : ''}, Bayes in ${o.store}` : 'untrained'}`;
  if (before && before.setup !== setup) log(`note: ${o.compare} was made with "${before.setup}", this run is "${setup}"`);
  log(`starting mailsift with ${o.workers} workers…`);
  const server = await startMailsift(root, o.workers, placement ? { patchConf: (conf) => placement.patch(conf) } : {});
  let verdicts: VerdictFile['verdicts'];
  try {
    if (placement) {
      const train = await loadCorpus(root, o.trainLimit);
      log(`training Bayes on ${train.length} messages…`);
      log(tallyText(await trainThroughController(server.controller!, train, true)));
    }
    log(`scanning ${corpus.length} messages…`);
    verdicts = await scanAll(server.scan, corpus, o.concurrency);
  } finally {
    await server.stop();
    await placement?.cleanUp();
  }
  const failed = Object.values(verdicts).filter((v) => !isVerdict(v)).length;
  if (failed) log(`${failed} scans failed (recorded as errors)`);
  const file: VerdictFile = { date: new Date().toISOString(), commit: headCommit(root), setup, verdicts };
  if (o.save) {
    await writeFile(o.save, JSON.stringify(file, null, 1) + '\n');
    log(`${Object.keys(verdicts).length} verdicts written to ${o.save}`);
  }
  if (before) {
    const changes = compareVerdicts(before.verdicts, verdicts, o.scores === true);
    const lines = changeLines(changes);
    process.stdout.write(`${before.commit} -> ${file.commit}: ${changes.length} of ${Object.keys(verdicts).length} messages changed${o.scores ? ' (action, symbols or score)' : ' (action or symbol set)'}\n${lines.map((l) => `  ${l}\n`).join('')}`);
    if (changes.length) process.exitCode = 1;
  }
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    process.stderr.write(`bench:verdicts: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 2;
  });
}
