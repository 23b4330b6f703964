// neural: a small network over the symbols of a scan (the classic mode).
// NEURAL_CHECK (postfilter) applies the newest network of each rule and inserts NEURAL_SPAM or
// NEURAL_HAM with the output as weight; NEURAL_LEARN (idempotent, after the verdict) stores the
// scan's vector as a training sample when the verdict (or `ANN-Train`) says which class it is.
// Networks and vectors live in the key-value store, so every scanner shares them; a scanner
// picks up a newer version within watch_interval. Off unless configured, as in Rspamd.
//
// Differences from Rspamd: one profile per rule (tasks with a settings id are skipped); the
// hidden layer is tanh and capped at max_hidden units; fewer metatokens (vector.ts); training
// vectors are not de-duplicated (Rspamd keeps them in a Redis set); any scanner may train, the
// store's lock electing one, and the check runs on scans rather than on a timer.

import { defineModule } from '../../plugin-api/index.js';
import type { SymbolDef, Task } from '../../plugin-api/index.js';
import { kvOrDisable } from '../../module-helpers/policy-setup.js';
import { storeOutageLog, type StoreOutage } from '../../module-helpers/outage-log.js';
import { canPush, learnClass, readyToTrain } from './autotrain.js';
import { NeuralConfig, neuralRules } from './config.js';
import { neuralLearner, type NeuralLearner } from './learn.js';
import { RuleState } from './rule-state.js';
import { neuralStatus } from './status.js';
import { encodeVector, metatokens, sparseVector } from './vector.js';

/**
 * 0 / −0 as in Rspamd (score them in config to use them). The network only re-weighs the symbols
 * the score already adds up, and Bayes dominates them, so a score here bought no accuracy on the
 * development split (figures in docs/tuning.md).
 */
export const NEURAL_SYMBOLS: Record<string, SymbolDef> = {
  NEURAL_CHECK: { score: 0, group: 'neural', description: 'Neural network check' },
  NEURAL_LEARN: { score: 0, group: 'neural', description: 'Neural network training vector' },
  NEURAL_SPAM: { score: 0, group: 'neural', description: 'Neural network SPAM' },
  NEURAL_HAM: { score: -0, group: 'neural', description: 'Neural network HAM' },
};

const META_CACHE = 'neural.metatokens';

function taskMetatokens(task: Task): number[] {
  let mt = task.cache.get(META_CACHE) as number[] | undefined;
  if (!mt) {
    mt = metatokens({ size: task.raw.length, message: task.message, received: task.received, smtpRcpts: task.envelopeRcpt.length });
    task.cache.set(META_CACHE, mt);
  }
  return mt;
}

async function check(task: Task, rules: readonly RuleState[]): Promise<void> {
  if (task.meta.settingsId) return;
  for (const state of rules) {
    await state.refresh();
    const model = state.model;
    if (!model) continue;
    const o = model.net.apply(sparseVector(model.profile, taskMetatokens(task), task.verdict().symbols));
    const r = state.rule;
    const option = o.toFixed(3);
    if (o > 0) {
      if (o >= (r.spam_score_threshold ?? 0)) task.insert(r.symbol_spam, r.flat_threshold_curve ? 1 : o, option);
    } else if (-o >= (r.ham_score_threshold ?? 0)) {
      task.insert(r.symbol_ham, r.flat_threshold_curve ? 1 : -o, option);
    }
  }
}

async function learn(task: Task, rules: readonly RuleState[], allowLocal: boolean, outage: StoreOutage): Promise<void> {
  if (task.meta.settingsId || task.flags.has('skip')) return;
  if (!allowLocal && task.meta.userAgent?.toLowerCase() === 'rspamc') return;
  const verdict = task.verdict();
  for (const state of rules) {
    const cls = learnClass(verdict, state.rule.train, task.getRequestHeader('ANN-Train'));
    if (typeof cls !== 'string') {
      task.log.debug('neural: scan not learned', { rule: state.rule.name, reason: cls.skip });
      continue;
    }
    const train = state.rule.train;
    const version = state.storeVersion;
    try {
      const counts = await state.store.counts(version);
      if (!canPush(train, cls, counts, Math.random())) continue;
      const vec = sparseVector(state.profile, taskMetatokens(task), verdict.symbols);
      const slot = await state.store.push(version, cls, encodeVector(vec, state.profile.length), train.max_trains + 1);
      if (slot > 0 && readyToTrain(train, { ...counts, [cls]: slot })) state.maybeTrain();
    } catch (e) {
      outage(task, 'training vector not stored', e);
    }
  }
}

export const neuralModule = defineModule<NeuralConfig>({
  name: 'neural',
  config: NeuralConfig,
  symbols: NEURAL_SYMBOLS,
  setup(ctx) {
    // Registered first: an unconfigured module's endpoint still answers, saying why it refuses.
    let learner: NeuralLearner | undefined;
    ctx.endpoint('neural', 'learn', {
      enable: true,
      async handler(task, conn) {
        if (!learner) return conn.send_error(404, 'neural module is not configured');
        const r = await learner.learn(task.getContent());
        return r.status === 200 ? conn.send_ucl({ success: true }) : conn.send_error(r.status, r.error ?? 'error');
      },
    });
    let list: RuleState[] = [];
    ctx.endpoint('neural', 'status', {
      enable: false,
      async handler(_task, conn) {
        conn.send_ucl({ enabled: learner !== undefined, rules: await neuralStatus(list) });
      },
    });
    const rules = neuralRules(ctx.config);
    if (rules.length === 0) {
      ctx.log.info('neural: no rules configured; module disabled');
      ctx.disable('config');
      return;
    }
    const kv = kvOrDisable(ctx, 'neural');
    if (!kv) return;
    const table = (): ReturnType<typeof ctx.symbolTable> => ctx.symbolTable();
    const states = new Map(rules.map((r) => [r.name, new RuleState(r, ctx.config, kv, ctx.log, ctx.hostname, table)]));
    list = [...states.values()];
    const inserts: string[] = [];
    for (const r of rules) {
      for (const [name, def] of [[r.symbol_spam, NEURAL_SYMBOLS['NEURAL_SPAM']!], [r.symbol_ham, NEURAL_SYMBOLS['NEURAL_HAM']!]] as const) {
        if (!(name in NEURAL_SYMBOLS)) ctx.declareSymbol(name, def);
        inserts.push(name);
      }
    }
    ctx.symbol({
      name: 'NEURAL_CHECK',
      stage: 'postfilters',
      flags: ['coro', 'nostat'],
      inserts: [...new Set(inserts)],
      check: (task) => check(task, list),
    });
    const outage = storeOutageLog(ctx.log, 'neural');
    ctx.symbol({
      name: 'NEURAL_LEARN',
      stage: 'idempotent',
      flags: ['coro', 'nostat', 'explicit_disable', 'ignore_passthrough'],
      check: (task) => learn(task, list, ctx.config.allow_local, outage),
    });
    learner = neuralLearner(states, ctx.log);
  },
});
