// npm run bench:accuracy: what users get, measured on the corpus's development split (easy-ham-1,
// hard-ham-1, spam-1; never the folders held out for blind evaluation). Every figure comes from a
// real `mailsift serve` with fresh stores: Bayes is trained through the controller's /learnspam and
// /learnham as `rspamc learn_spam` sends them (learn conditions and all; `--bulk` sends
// `Learn-Type: bulk`), and messages are scanned through /checkv2 with no envelope, DNS answered
// NXDOMAIN by a loopback stub.
//
// Two ways to divide the mail (bench/accuracy-split.ts): shuffled folds, and a time-ordered split
// (learn the older 80 % of each folder in time order, evaluate on the newer 20 %). "Rules only" is
// a server that was never trained, scanning every message in time order. For each: ham false
// positives and spam recall at the shipped `add header` threshold, the ROC-AUC of the score, and
// the spam recall the score could reach at a ham false-positive rate of at most 0.1 %.
//
// `--rspamd` runs the same experiments (same splits, same messages in the same order, same
// requests) against the reference Rspamd 3.4 of /work/shared/tools/reference-rspamd, its Bayes
// emptied before each, and prints its table after mailsift's; `--no-mailsift` runs it alone.
//
// The in-process variant (no server, the classifier learned directly; --neural, --verbose symbol
// tables) is bench/accuracy-direct.ts.
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { stringify as stringifyYaml } from 'yaml';
import { loadConfig } from '../src/config/load.js';
import { loadCorpus, type CorpusMessage } from './corpus.js';
import { recallAtFp, rocAuc } from './accuracy-metrics.js';
import { receivedTime, shuffledFolds, timeOrdered, type Experiment } from './accuracy-split.js';
import { mailsiftFilter, rspamdFilter, scanAll, trainThroughController, type FilterUnderTest, type LearnTally, type ScanOutcome } from './accuracy-server.js';
import { actionDisagreements, commonSymbols } from './accuracy-reply.js';

/** Fixed shuffle seed: every run splits the folds the same way, so runs are comparable. */
const SHUFFLE_SEED = 0x5eed;
/** The operating point the recall-at-FP column reports. */
const MAX_FP_RATE = 0.001;
/** A symbol in at least this share of the rules-only scans is listed as firing on (nearly) every message. */
const EVERYWHERE_SHARE = 0.99;

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== dirname(dir)) dir = dirname(dir);
  return dir;
}

function intOption(v: string): number {
  const n = Number.parseInt(v, 10);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

interface Options {
  split: 'folds' | 'time' | 'both';
  folds: number;
  trainFraction: number;
  bulk?: boolean;
  quick?: boolean;
  limit?: number;
  seed?: number;
  bayes?: string;
  dumpJson?: string;
  trainOrder: 'mixed' | 'spam-first' | 'ham-first';
  /** commander's negation of --no-rules-only */
  rulesOnly: boolean;
  rspamd?: boolean;
  /** commander's negation of --no-mailsift */
  mailsift: boolean;
}

const isSpam = (o: ScanOutcome): boolean => o.msg.group === 'spam-1';
const pct = (a: number, b: number): string => `${((100 * a) / Math.max(1, b)).toFixed(2)} %`;

/** One line of the summary table, and the false positives by name. */
function summarise(label: string, outcomes: readonly ScanOutcome[], addHeader: number): { row: string; fps: string[] } {
  const ham = outcomes.filter((o) => !isSpam(o));
  const spam = outcomes.filter(isSpam);
  const fp = ham.filter((o) => o.score >= addHeader);
  const tp = spam.filter((o) => o.score >= addHeader);
  const auc = rocAuc(spam.map((o) => o.score), ham.map((o) => o.score));
  const at = recallAtFp(spam.map((o) => o.score), ham.map((o) => o.score), MAX_FP_RATE);
  const row = `| ${label} | ${ham.length} / ${spam.length} | ${fp.length} = ${pct(fp.length, ham.length)} | ${tp.length} = ${pct(tp.length, spam.length)} | ${auc.toFixed(4)} | ${(100 * at.recall).toFixed(1)} % (score > ${at.threshold.toFixed(2)}) |`;
  const fps = fp.map((o) => `  FP ${label}: ${o.msg.name} score ${o.score.toFixed(2)} ${Object.entries(o.symbols).filter(([, s]) => s !== 0).map(([n, s]) => `${n}(${s.toFixed(2)})`).join(' ')}`);
  return { row, fps };
}

/** The training messages one class after the other (each in the split's order), or as they are. */
function classOrder(train: readonly CorpusMessage[], order: Options['trainOrder']): readonly CorpusMessage[] {
  if (order === 'mixed') return train;
  const spam = train.filter((m) => m.group === 'spam-1');
  const ham = train.filter((m) => m.group !== 'spam-1');
  return order === 'spam-first' ? [...spam, ...ham] : [...ham, ...spam];
}

function tallyText(t: LearnTally): string {
  const side = (r: Record<string, number>): string => Object.entries(r).map(([k, n]) => `${k} ${n}`).join(', ');
  return `spam: ${side(t.spam)}; ham: ${side(t.ham)}`;
}

async function main(): Promise<void> {
  const program = new Command()
    .option('--split <which>', 'folds (shuffled), time (time-ordered) or both', 'both')
    .option('--folds <n>', 'number of shuffled folds', intOption, 5)
    .option('--train-fraction <f>', 'time-ordered split: the older share of each folder learned', Number.parseFloat, 0.8)
    .option('--quick', 'the time-ordered split only (one training, about a fifth of the run)')
    .option('--train-order <order>', 'mixed (the split\'s order: time or shuffled), spam-first or ham-first (one class\'s folder after the other, as `rspamc learn_spam dir; rspamc learn_ham dir` does)', 'mixed')
    .option('--no-rules-only', 'skip the untrained server (when comparing ways of training)')
    .option('--bulk', 'train with Learn-Type: bulk (the learn conditions\' opt-out for initial training)')
    .option('--bayes <json>', 'Bayes options for the servers, as local.d/bayes.yaml (e.g. \'{"learn_prob_guard":0.99}\')')
    .option('--limit <n>', 'use only this many messages (proportional sample)', intOption)
    .option('--seed <n>', 'shuffle seed of the folds (default: the fixed one, so runs compare)', intOption)
    .option('--dump-json <file>', 'write every scan (server, mode, split, message, score, action, symbols, Bayes probability) to this file, for rescoring')
    .option('--rspamd', 'also run every experiment against the reference Rspamd 3.4 (/work/shared/tools/reference-rspamd) and print its table')
    .option('--no-mailsift', 'with --rspamd: the reference Rspamd only')
    .parse();
  const opts = program.opts<Options>();
  if (opts.quick) opts.split = 'time';
  if (!['folds', 'time', 'both'].includes(opts.split)) throw new Error(`--split: folds, time or both, not ${opts.split}`);
  if (!['mixed', 'spam-first', 'ham-first'].includes(opts.trainOrder)) throw new Error(`--train-order: mixed, spam-first or ham-first, not ${opts.trainOrder}`);
  if (!opts.mailsift && !opts.rspamd) throw new Error('nothing to measure: --no-mailsift without --rspamd');
  if (opts.rspamd && opts.bayes) throw new Error('--bayes is mailsift\'s local.d/bayes.yaml: not with --rspamd');
  const root = repoRoot();
  const cfg = await loadConfig(join(root, 'conf'));
  const addHeader = cfg.engine.actions['add header']?.threshold ?? cfg.engine.actions['add_header']?.threshold ?? 6;
  const bayesYaml = opts.bayes ? stringifyYaml(JSON.parse(opts.bayes)) : undefined;
  const filters: FilterUnderTest[] = [];
  if (opts.mailsift) filters.push(mailsiftFilter(root, addHeader, bayesYaml));
  if (opts.rspamd) filters.push(rspamdFilter());

  const corpus = await loadCorpus(root, opts.limit);
  const experiments: Array<{ split: 'folds' | 'time'; exp: Experiment }> = [];
  if (opts.split !== 'time') for (const exp of shuffledFolds(corpus, opts.folds, opts.seed ?? SHUFFLE_SEED)) experiments.push({ split: 'folds', exp });
  const time = opts.split !== 'folds' ? timeOrdered(corpus, opts.trainFraction) : undefined;
  if (time) experiments.push({ split: 'time', exp: time });

  const dump: Array<Record<string, unknown>> = [];
  console.log(`development split: ${corpus.length} messages; training ${opts.bulk ? 'with Learn-Type: bulk' : 'as rspamc learn_* sends it (learn conditions apply)'}, order ${opts.trainOrder}${opts.bayes ? `; bayes ${opts.bayes}` : ''}`);
  // Each table as soon as its filter is done: a failure of the next one does not lose it.
  for (const filter of filters) {
    try {
      const run = await runFilter(filter, corpus, experiments, opts);
      console.log(report(filter.name, run, opts, time, (mode, split, outs) => {
        if (opts.dumpJson) for (const o of outs) dump.push({ server: filter.name, mode, split, name: o.msg.name, group: o.msg.group, score: o.score, action: o.action, bayesProb: o.bayesProb, symbols: o.symbols });
      }));
    } finally {
      await filter.close();
    }
  }
  if (opts.dumpJson) await writeFile(opts.dumpJson, JSON.stringify(dump));
}

interface FilterRun {
  addHeader: number;
  /** Every message scanned by the untrained server, in time order (empty with --no-rules-only). */
  rules: ScanOutcome[];
  trained: Record<'folds' | 'time', ScanOutcome[]>;
  tallies: string[];
}

/** Every experiment against one filter: rules only, then each training. */
async function runFilter(filter: FilterUnderTest, corpus: readonly CorpusMessage[], experiments: ReadonlyArray<{ split: 'folds' | 'time'; exp: Experiment }>, opts: Options): Promise<FilterRun> {
  const log = (line: string): void => void process.stderr.write(`${filter.name}: ${line}\n`);
  // Rules only: one untrained server scans everything in time order, as a server that was never
  // trained would have seen the mail; each split then reads its evaluation part.
  const t0 = performance.now();
  const inTimeOrder = corpus.map((m) => ({ m, t: receivedTime(m.bytes) })).sort((a, b) => a.t - b.t).map((x) => x.m);
  let rules: ScanOutcome[] = [];
  let addHeader: number | undefined;
  if (opts.rulesOnly) {
    const { server, done } = await filter.untrained();
    try {
      addHeader = await filter.addHeader(server);
      rules = await scanAll(server, inTimeOrder);
    } finally {
      await done();
    }
    log(`rules only: ${rules.length} scans in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }

  const trained: Record<'folds' | 'time', ScanOutcome[]> = { folds: [], time: [] };
  const tallies: string[] = [];
  for (const { split, exp } of experiments) {
    const { server, done } = await filter.untrained();
    try {
      addHeader ??= await filter.addHeader(server);
      const tally = await trainThroughController(server, classOrder(exp.train, opts.trainOrder), opts.bulk === true);
      const outs = await scanAll(server, exp.evaluate);
      trained[split].push(...outs);
      const learned = tally.spam['learned'] ?? 0;
      const learnedHam = tally.ham['learned'] ?? 0;
      tallies.push(`${exp.label}: learned ${learnedHam} ham, ${learned} spam of ${exp.train.length} in ${(tally.ms / 1000).toFixed(0)} s (${tallyText(tally)})`);
      log(tallies.at(-1)!);
    } finally {
      await done();
    }
  }
  if (addHeader === undefined) throw new Error('no experiment ran');
  return { addHeader, rules, trained, tallies };
}

/** One filter's table, learn tallies, false positives and the checks on its replies. */
function report(name: string, run: FilterRun, opts: Options, time: Experiment | undefined, record: (mode: string, split: string, outs: readonly ScanOutcome[]) => void): string {
  const rulesOf = (msgs: readonly CorpusMessage[]): ScanOutcome[] => {
    const want = new Set(msgs.map((m) => m.name));
    return run.rules.filter((o) => want.has(o.msg.name));
  };
  const rows: string[] = [];
  const fps: string[] = [];
  const add = (label: string, outs: readonly ScanOutcome[]): void => {
    const s = summarise(label, outs, run.addHeader);
    rows.push(s.row);
    fps.push(...s.fps);
  };
  if (opts.split !== 'time') {
    add(`shuffled ${opts.folds} folds, trained`, run.trained.folds);
    if (opts.rulesOnly) add('shuffled, rules only', run.rules);
    record('trained', 'folds', run.trained.folds);
    record('rules', 'folds', run.rules);
  }
  if (time) {
    add('time-ordered, trained', run.trained.time);
    if (opts.rulesOnly) add('time-ordered, rules only', rulesOf(time.evaluate));
    record('trained', 'time', run.trained.time);
    record('rules', 'time', rulesOf(time.evaluate));
  }
  const all = [...run.rules, ...run.trained.folds, ...run.trained.time];
  const required = [...new Set(all.map((o) => o.requiredScore).filter((r) => r !== undefined))];
  const out = [`\n## ${name}: add header threshold ${run.addHeader}${required.length ? `; the replies' required_score ${required.join(', ')}` : ''}`];
  out.push(...run.tallies);
  out.push('| split, mode | ham / spam evaluated | ham false positives | spam recall | ROC-AUC | spam recall at FP ≤ 0.1 % |');
  out.push('|---|---|---|---|---|---|');
  out.push(...rows, ...fps);
  const odd = actionDisagreements(all, run.addHeader);
  out.push(`replies whose action disagrees with score ≥ ${run.addHeader}: ${odd.length}${odd.slice(0, 10).map((o) => ` ${o.msg.name} ${o.score.toFixed(2)} ${o.action}`).join(';')}`);
  if (run.rules.length) {
    const common = commonSymbols(run.rules, EVERYWHERE_SHARE);
    out.push(`symbols in ≥ ${EVERYWHERE_SHARE * 100} % of the ${run.rules.length} rules-only scans: ${common.map((c) => `${c.name} ${c.hits} (score ${c.scores.join('/')})`).join(', ') || 'none'}`);
  }
  return out.join('\n');
}

await main();
