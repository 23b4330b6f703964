// `node dist/bench/accuracy-direct.js`: the in-process variant of the accuracy bench (bench/accuracy.ts
// measures through a running server). Five-fold cross-validation of the whole scan (built-in rules + Bayes) on
// the corpus's development split (easy-ham-1, hard-ham-1, spam-1; never the blind-evaluation folders).
// For each fold a fresh in-memory Bayes store learns every message of the other four folds through
// the same classifier as /learnspam and /learnham (as a bulk training; `--guarded` applies the
// 95 % guard instead), then the held-out fold is scanned by the real engine, with DNS answered
// NXDOMAIN by a loopback server and no envelope. Prints the ham false-positive rate and spam
// recall at the shipped `add header` threshold, the ROC-AUC of the score, learn throughput, and
// the classifier's own ROC-AUC on its unrounded probability.
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { loadConfig } from '../src/config/load.js';
import { createMapRegistry } from '../src/maps/index.js';
import { createEngine } from '../src/engine/index.js';
import { builtinModules } from '../src/modules/index.js';
import { bayesModule } from '../src/modules/bayes/index.js';
import { parseMessage } from '../src/message/parse-message.js';
import { emptyMeta } from '../src/plugin-api/index.js';
import { BayesClassifier, bayesConfig, MemoryBayesStore } from '../src/rule-libs/bayes/index.js';
import { StoreError, type Stores } from '../src/storage/types.js';
import { loadCorpus, shuffled, type CorpusMessage } from './corpus.js';
import { rocAuc } from './accuracy-metrics.js';
import { runRulesOnly } from './accuracy-rules.js';
import { createNetServices } from '../src/net/index.js';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { neuralCapture, reportNeural, type NeuralItem } from './accuracy-neural.js';

const FOLDS = 5;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
/** Fixed shuffle seed: every run splits the folds the same way, so runs are comparable. */
const SHUFFLE_SEED = 0x5eed;

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== dirname(dir)) dir = dirname(dir);
  return dir;
}

/** Stores other than Bayes are absent in this run: any use fails as a down store would. */
function bayesOnlyStores(bayes: MemoryBayesStore): Stores {
  const down = new Proxy({}, {
    get: (_t, prop) => (prop === 'then' ? undefined : () => Promise.reject(new StoreError('STORE_UNAVAILABLE', 'not configured in the accuracy benchmark'))),
  });
  // The Proxy stands in for the three stores the benchmark does not use; each method rejects.
  return { bayes, fuzzy: down as Stores['fuzzy'], history: down as Stores['history'], kv: down as Stores['kv'], close: async () => {} };
}

interface Scored {
  msg: CorpusMessage;
  score: number;
  /** Spam probability the classifier reported (0.5 when it inserted nothing). */
  prob: number;
  /** The classifier's exact probability (0.5 when it had nothing to say): the option rounds it. */
  exactProb: number;
  bayes?: string;
  symbols: Array<{ name: string; score: number }>;
  fold: number;
}

/** The classifier's probability back from the symbol's option ("98.20%" = q − 0.5 scaled to 100). */
function probOf(name: string | undefined, option: string | undefined): number {
  if (!name || !option) return 0.5;
  const q = 0.5 + Number.parseFloat(option) / 200;
  return name === 'BAYES_SPAM' ? q : 1 - q;
}

async function main(): Promise<void> {
  const program = new Command()
    .option('-c, --conf <dir>', 'configuration directory', join(repoRoot(), 'conf'))
    .option('--limit <n>', 'use only this many messages (proportional sample)', (v) => Number.parseInt(v, 10))
    .option('--window <n>', 'OSB window (default: the config\'s)', (v) => Number.parseInt(v, 10))
    .option('--rules-only', 'the rules alone: no Bayes, no fuzzy, DNS answered NXDOMAIN by a loopback server (bench/accuracy-rules.ts)')
    .option('--verbose', 'with --rules-only: per-symbol hit rates on ham and spam')
    .option('--dump-json <file>', 'write each scan\'s symbols, score and Bayes probability to this file (input for analysis and score tuning)')
    .option('--recorded-envelope', 'with --rules-only: pass the envelope the corpus MTA recorded (sender IP, HELO, Return-Path) instead of none')
    .option('--seed <n>', 'shuffle seed of the fold split (default: the fixed one, so runs compare)', (v) => Number.parseInt(v, 10))
    .option('--neural', 'also train the neural network per fold on the other folds\' symbol vectors and report what it adds (bench/accuracy-neural.ts)')
    .option('--guarded', 'learn as /learnspam does without Learn-Type: bulk: skip messages already classified with 95 % confidence')
    .parse();
  const opts = program.opts<{ conf: string; limit?: number; window?: number; guarded?: boolean; rulesOnly?: boolean; verbose?: boolean; recordedEnvelope?: boolean; dumpJson?: string; seed?: number; neural?: boolean }>();
  const cfg = await loadConfig(opts.conf);
  const addHeader = cfg.engine.actions['add header']?.threshold ?? cfg.engine.actions['add_header']?.threshold ?? 6;
  if (opts.rulesOnly) {
    await runRulesOnly(cfg, await loadCorpus(repoRoot(), opts.limit), addHeader, { verbose: opts.verbose === true, recordedEnvelope: opts.recordedEnvelope === true, ...(opts.dumpJson ? { dumpJson: opts.dumpJson } : {}) });
    return;
  }
  const rawBayes = { ...(cfg.engine.modules['bayes'] ?? {}), ...(opts.window ? { window: opts.window } : {}) };
  const classifier = new BayesClassifier(bayesConfig(rawBayes));
  const corpus = shuffled(await loadCorpus(repoRoot(), opts.limit), opts.seed ?? SHUFFLE_SEED);
  const parsed = corpus.map((m) => parseMessage(m.bytes));
  const fold = corpus.map((_, i) => i % FOLDS);
  const capture = opts.neural ? neuralCapture() : undefined;
  const modules = [...builtinModules.filter((m) => m.name !== 'bayes'), bayesModule, ...(capture ? [capture.module] : [])];
  const neuralItems: NeuralItem[] = [];

  // DNS as in the rules-only run: a loopback server answering NXDOMAIN at once, so network rules
  // run their real code but cannot hit, and no scan waits on a resolver the machine may not reach.
  const dns = await startDnsServer({ zone: {} });
  const net = createNetServices({ dns: { ...cfg.engine.dns, servers: [dns.address], retransmits: 0 } });
  const scored: Scored[] = [];
  let learnMs = 0;
  let learned = 0;
  const refused: Record<string, number> = {};
  for (let k = 0; k < FOLDS; k++) {
    const store = new MemoryBayesStore();
    const t0 = performance.now();
    for (let i = 0; i < corpus.length; i++) {
      if (fold[i] === k) continue;
      // Parse and tokenise inside the timing: that is what a learn costs.
      const msg = parseMessage(corpus[i]!.bytes);
      const cls = corpus[i]!.group === 'spam-1' ? 'spam' : 'ham';
      try {
        await classifier.learn(store, classifier.tokenize(msg), { cls, messageId: msg.messageId, bulk: opts.guarded !== true });
        learned++;
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'other';
        refused[code] = (refused[code] ?? 0) + 1;
      }
    }
    learnMs += performance.now() - t0;
    const maps = createMapRegistry({ baseDir: cfg.dir, log: quiet }); // shipped map paths are relative to the config dir
    const engine = await createEngine({ ...cfg.engine, modules: { ...cfg.engine.modules, bayes: rawBayes } }, modules, { stores: bayesOnlyStores(store), log: quiet, net, maps });
    for (let i = 0; i < corpus.length; i++) {
      if (fold[i] !== k) continue;
      const r = await engine.scan(corpus[i]!.bytes, emptyMeta());
      const vec = capture?.take();
      if (vec) neuralItems.push({ spam: corpus[i]!.group === 'spam-1', score: r.score, fold: k, vec });
      // The same classification again, outside the engine, for the probability unrounded.
      const exact = await classifier.classify(store, classifier.tokenize(parsed[i]!), classifier.scope(''));
      const b = r.symbols.find((s) => s.name === 'BAYES_SPAM' || s.name === 'BAYES_HAM');
      scored.push({ msg: corpus[i]!, score: r.score, prob: probOf(b?.name, b?.options?.[0]), exactProb: exact?.prob ?? 0.5, ...(b ? { bayes: `${b.name}(${b.score.toFixed(2)})` } : {}), symbols: r.symbols.map((s) => ({ name: s.name, score: s.score })), fold: k });
    }
    process.stderr.write(`fold ${k + 1}/${FOLDS} done\n`);
  }
  await net.close();
  await dns.close();
  if (opts.dumpJson) {
    await writeFile(opts.dumpJson, JSON.stringify(scored.map((x) => ({ name: x.msg.name, group: x.msg.group, fold: x.fold, score: x.score, prob: x.prob, exactProb: x.exactProb, symbols: x.symbols }))));
  }

  const ham = scored.filter((s) => s.msg.group !== 'spam-1');
  const spam = scored.filter((s) => s.msg.group === 'spam-1');
  const fp = ham.filter((s) => s.score >= addHeader);
  const tp = spam.filter((s) => s.score >= addHeader);
  const auc = rocAuc(spam.map((s) => s.score), ham.map((s) => s.score));
  const pct = (a: number, b: number): string => `${((100 * a) / b).toFixed(2)} %`;
  console.log(`messages: ${scored.length} (ham ${ham.length}, spam ${spam.length}), ${FOLDS}-fold cross-validation, add header threshold ${addHeader}`);
  console.log(`false positives (ham at or above threshold): ${fp.length}/${ham.length} = ${pct(fp.length, ham.length)}`);
  console.log(`spam recall (spam at or above threshold): ${tp.length}/${spam.length} = ${pct(tp.length, spam.length)}`);
  console.log(`ROC-AUC of the score: ${auc.toFixed(5)}`);
  console.log(`learn throughput: ${(learned / (learnMs / 1000)).toFixed(0)} messages/s (${learned} learned, refused: ${JSON.stringify(refused)})`);
  const withBayes = scored.filter((s) => s.bayes).length;
  console.log(`scans with a Bayes symbol: ${withBayes}/${scored.length}`);
  // The classifier on its own: how well its probability separates, and its verdict's errors.
  const bAuc = rocAuc(spam.map((s) => s.exactProb), ham.map((s) => s.exactProb));
  const bFp = ham.filter((s) => s.prob > 0.5 && s.bayes).length;
  const bTp = spam.filter((s) => s.prob > 0.5 && s.bayes).length;
  console.log(`Bayes alone: ROC-AUC ${bAuc.toFixed(5)}, BAYES_SPAM on ham ${bFp}/${ham.length} = ${pct(bFp, ham.length)}, on spam ${bTp}/${spam.length} = ${pct(bTp, spam.length)}`);
  const strongSpam = spam.filter((s) => s.prob >= 0.99);
  console.log(`spam below the threshold although Bayes is >= 99 % sure: ${strongSpam.filter((s) => s.score < addHeader).length}/${spam.length - tp.length}`);
  for (const s of fp) console.log(`  FP ${s.msg.name} score ${s.score.toFixed(2)} ${s.bayes ?? ''}`);
  const profile = capture?.profile();
  if (capture && profile) await reportNeural(neuralItems, FOLDS, profile);
}

await main();
