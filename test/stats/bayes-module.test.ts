import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { autolearnDecision, verdictKind } from '../../src/modules/bayes/autolearn.js';
import type { Stores, Verdict } from '../../src/plugin-api/index.js';
import { MemoryBayesStore } from '../../src/rule-libs/bayes/index.js';
import { engineConfig, meta } from '../modules/helpers.js';
import { devMessages } from './corpus.js';

function storesWith(bayes: MemoryBayesStore): Stores {
  // Only the Bayes store is used by these scans; the others are never touched.
  return { bayes, close: async () => {} } as unknown as Stores;
}

test('without a store the module switches itself off and scans still answer', async () => {
  const engine = await createEngine(engineConfig(), builtinModules);
  assert.match(engine.disabledModules().get('bayes') ?? '', /^store/);
  const r = await engine.scan(devMessages('spam-1', 0, 1)[0]!, meta());
  assert.ok(!r.symbols.some((s) => s.name.startsWith('BAYES_')));
  assert.ok(engine.symbols().some((s) => s.name === 'BAYES_SPAM' && s.score === 5.1 && s.group === 'statistics'));
  assert.ok(engine.symbols().some((s) => s.name === 'BAYES_HAM' && s.score === -7 && s.group === 'statistics'));
});

test('a store that fails makes the scans answer without Bayes symbols, logged once, not per scan', async () => {
  const broken = new MemoryBayesStore();
  broken.getTokens = () => Promise.reject(Object.assign(new Error('connection refused'), { code: 'STORE_UNAVAILABLE' }));
  const warnings: string[] = [];
  const log = { debug() {}, info() {}, warn(msg: string) { warnings.push(msg); }, error(msg: string) { warnings.push(msg); } };
  const engine = await createEngine(engineConfig({ bayes: { min_learns: 0 } }), builtinModules, { stores: storesWith(broken), log });
  const msg = devMessages('spam-1', 0, 1)[0]!;
  for (let i = 0; i < 3; i++) {
    const r = await engine.scan(msg, meta());
    assert.ok(!r.symbols.some((s) => s.name.startsWith('BAYES_')));
  }
  assert.deepEqual(warnings.filter((w) => w.startsWith('bayes:')), ['bayes: store unavailable, check skipped']);
  assert.equal(engine.errorCounts().get('BAYES_SPAM'), undefined, 'a store outage is not a failed callback');
});

test('a Bayes callback failing for another reason than its store is still counted as an error', async () => {
  const broken = new MemoryBayesStore();
  broken.getTokens = () => Promise.reject(new TypeError('a bug'));
  const engine = await createEngine(engineConfig({ bayes: { min_learns: 0 } }), builtinModules, { stores: storesWith(broken), log: { debug() {}, info() {}, warn() {}, error() {} } });
  await engine.scan(devMessages('spam-1', 0, 1)[0]!, meta());
  assert.equal(engine.errorCounts().get('BAYES_SPAM'), 1);
});

test('until both classes have min_learns the store is not asked for token counts; then it is', async () => {
  const store = new MemoryBayesStore();
  let reads = 0;
  const getTokens = store.getTokens.bind(store);
  store.getTokens = (scope, tokens) => { reads++; return getTokens(scope, tokens); };
  const msg = devMessages('spam-1', 0, 1)[0]!;
  const empty = await createEngine(engineConfig(), builtinModules, { stores: storesWith(store) });
  const r = await empty.scan(msg, meta());
  assert.ok(!r.symbols.some((s) => s.name.startsWith('BAYES_')));
  assert.equal(reads, 0, 'an unlearned store cannot classify: no token read');
  const ready = await createEngine(engineConfig({ bayes: { min_learns: 0 } }), builtinModules, { stores: storesWith(store) });
  await ready.scan(msg, meta());
  assert.equal(reads, 1, 'with enough learns the tokens are read');
});

test('a store with too few learns is asked for its learn counts once a second, not on every scan', async () => {
  const store = new MemoryBayesStore();
  let reads = 0;
  const learns = store.learns.bind(store);
  store.learns = (scope) => { reads++; return learns(scope); };
  let totals = 0;
  const readTotals = store.totals.bind(store);
  store.totals = (scope) => { totals++; return readTotals(scope); };
  const engine = await createEngine(engineConfig({ bayes: { min_learns: 1 } }), builtinModules, { stores: storesWith(store) });
  const [spam, ham] = [devMessages('spam-1', 0, 1)[0]!, devMessages('easy-ham-1', 0, 1)[0]!];
  for (let i = 0; i < 5; i++) await engine.scan(spam, meta());
  assert.equal(reads, 1, 'five scans within a second: one read of the learn counts');
  const scope = { classifier: 'bayes', user: '' };
  await store.learn(scope, 'a', [1n, 2n, 3n], 'spam');
  await store.learn(scope, 'b', [4n, 5n, 6n], 'ham');
  // After the second the store is asked again (and now has the learns to classify with).
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const read0 = reads;
  await engine.scan(ham, meta());
  assert.ok(reads > read0, 'the learn counts are read again after a second');
  assert.equal(totals, 0, 'scans never ask for the full totals (token and user counts)');
});

test('autolearn by score thresholds learns once, then the learn cache refuses', async () => {
  const store = new MemoryBayesStore();
  const engine = await createEngine(engineConfig({ bayes: { autolearn: [-20, -10] } }), builtinModules, { stores: storesWith(store) });
  const [msg] = devMessages('spam-1', 3, 1);
  await engine.scan(msg!, meta());
  const t = await store.totals({ classifier: 'bayes', user: '' });
  assert.equal(t.learnsSpam, 1);
  assert.equal(t.learnsHam, 0);
  await engine.scan(msg!, meta());
  assert.equal((await store.totals({ classifier: 'bayes', user: '' })).learnsSpam, 1);
});

test('per-user statistics follow Deliver-To', async () => {
  const store = new MemoryBayesStore();
  const engine = await createEngine(engineConfig({ bayes: { autolearn: [-20, -10], per_user: true } }), builtinModules, { stores: storesWith(store) });
  await engine.scan(devMessages('spam-1', 5, 1)[0]!, meta({ deliverTo: 'Bob@Example.org', rcpt: ['other@example.org'] }));
  assert.equal((await store.totals({ classifier: 'bayes', user: 'bob@example.org' })).learnsSpam, 1);
  assert.equal((await store.totals({ classifier: 'bayes', user: '' })).learnsSpam, 0);
});

function verdict(patch: Partial<Verdict>): Verdict {
  return { score: 0, requiredScore: 15, action: 'no action', symbols: [], ...patch };
}
const sym = (score: number) => ({ name: `S${score}`, score, metricScore: score, options: [] }) as unknown as Verdict['symbols'][number];

test('the verdict-based autolearn rule', () => {
  const rule = { spam_threshold: 6, junk_threshold: 4, ham_threshold: -0.5, check_balance: true, min_balance: 0.9, learn_verdict: false };
  assert.equal(verdictKind(verdict({ action: 'reject', score: 16, symbols: [sym(10), sym(6)] })), 'spam');
  assert.equal(verdictKind(verdict({ action: 'add header', score: 7, symbols: [sym(3), sym(2), sym(2)] })), 'junk');
  assert.equal(verdictKind(verdict({ action: 'no action', score: -1 })), 'ham');
  assert.equal(verdictKind(verdict({ action: 'greylist', score: 4.5 })), 'uncertain');
  assert.equal(autolearnDecision(rule, verdict({ action: 'reject', score: 16, symbols: [sym(10), sym(6)] })), 'spam');
  assert.equal(autolearnDecision(rule, verdict({ action: 'add header', score: 7, symbols: [sym(3), sym(2), sym(2)] })), 'spam');
  assert.equal(autolearnDecision(rule, verdict({ action: 'no action', score: -1 })), 'ham');
  assert.equal(autolearnDecision(rule, verdict({ action: 'no action', score: 0.2 })), undefined);
  assert.equal(autolearnDecision(rule, verdict({ action: 'reject', score: 16, symbols: [sym(10), sym(6)], preResult: { action: 'reject', module: 'x' } })), undefined);
  assert.equal(autolearnDecision(true, verdict({ score: 16 })), 'spam');
  assert.equal(autolearnDecision(true, verdict({ score: -0.1 })), 'ham');
  assert.equal(autolearnDecision(false, verdict({ score: 100 })), undefined);
  assert.equal(autolearnDecision([10, -1], verdict({ score: 10 })), 'spam');
});
