import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyTokens, combine, DEFAULT_CLASSIFY_PARAMS, invChiSquare, verdictOf } from '../../src/rule-libs/bayes/index.js';
import type { TokenList } from '../../src/rule-libs/bayes/index.js';

function tokens(n: number, meta = 0, window = 1): TokenList {
  return {
    length: n + meta,
    hi: new Uint32Array(n + meta),
    lo: new Uint32Array(n + meta),
    window: new Uint8Array(n + meta).fill(window),
    meta: Uint8Array.from({ length: n + meta }, (_, i) => (i >= n ? 1 : 0)),
    textCount: n,
    badUnicode: false,
  };
}

test('inverse chi-square: the Poisson tail Rspamd uses', () => {
  // n = 1: e^x; n = 2: e^x (1 - x).
  assert.ok(Math.abs(invChiSquare(-2, 1) - Math.exp(-2)) < 1e-12);
  assert.ok(Math.abs(invChiSquare(-2, 2) - Math.exp(-2) * 3) < 1e-12);
  assert.equal(invChiSquare(-0.001, 50), 1);
});

test('combination is symmetric and falls back to the logistic form on underflow', () => {
  assert.ok(Math.abs(combine(-10, -10, 10) - 0.5) < 1e-12);
  const p = combine(-2, -20, 10);
  assert.ok(Math.abs(p + combine(-20, -2, 10) - 1) < 1e-12);
  assert.ok(p > 0.9);
  const far = combine(-1000, -10, 500);
  assert.ok(far < 0.01 && far >= 0);
});

test('symbol weight: Rspamd\'s ((q − 0.5)·2)^8 for spam, log-odds for ham by default, the option text', () => {
  const rspamd = { spam: 'rspamd', ham: 'rspamd', fullOdds: 3, power: 8 } as const;
  const v = verdictOf(0.99, rspamd)!;
  assert.equal(v.symbol, 'spam');
  assert.equal(v.option, '98.00%');
  assert.ok(Math.abs(v.weight - 0.98 ** 8) < 1e-12);
  assert.ok(Math.abs(5.1 * v.weight - 4.34) < 0.01);
  assert.ok(Math.abs(verdictOf(0.01, rspamd)!.weight - 0.98 ** 8) < 1e-12);
  // The default: a spam verdict by Rspamd's power 8, a ham verdict by its log-odds (99 : 1 is
  // two thirds of the way to 1000 : 1; beyond that the full score).
  assert.ok(Math.abs(verdictOf(0.99)!.weight - 0.98 ** 8) < 1e-12);
  assert.ok(Math.abs(verdictOf(0.95)!.weight - 0.9 ** 8) < 1e-12);
  const h = verdictOf(0.01)!;
  assert.equal(h.symbol, 'ham');
  assert.equal(h.option, '98.00%');
  assert.ok(Math.abs(h.weight - Math.log10(99) / 3) < 1e-12, String(h.weight));
  assert.ok(Math.abs(verdictOf(0.2)!.weight - Math.log10(4) / 3) < 1e-12);
  assert.equal(verdictOf(0.0005)!.weight, 1);
  assert.equal(verdictOf(0)!.weight, 1);
  assert.equal(verdictOf(1)!.weight, 1);
  // Log-odds on both sides is symmetric.
  const lo = { spam: 'log_odds', ham: 'log_odds', fullOdds: 3, power: 16 } as const;
  assert.ok(Math.abs(verdictOf(0.1, lo)!.weight - verdictOf(0.9, lo)!.weight) < 1e-12);
  assert.equal(verdictOf(0.54), undefined);
  assert.equal(verdictOf(0.46), undefined);
});

test('counts → probability: min learns, min token hits, weak tokens and metatokens', () => {
  const t = tokens(20);
  const spam = new Array(20).fill(30);
  const ham = new Array(20).fill(1);
  assert.equal(classifyTokens(t, spam, ham, 199, 500), undefined, 'fewer than 200 spam learns');
  const c = classifyTokens(t, spam, ham, 300, 300)!;
  assert.ok(c.prob > 0.99 && c.used === 20 && c.usedText === 20);
  // Tokens seen once in total count by default, shrunk towards 0.5 (Robinson), and are ignored
  // with Rspamd's min_token_hits = 2.
  const once = classifyTokens(t, new Array(20).fill(1), new Array(20).fill(0), 300, 300)!;
  assert.ok(once.prob > 0.95 && once.prob < c.prob && once.used === 20, JSON.stringify(once));
  assert.equal(classifyTokens(t, new Array(20).fill(1), new Array(20).fill(0), 300, 300, { ...DEFAULT_CLASSIFY_PARAMS, minTokenHits: 2 }), undefined);
  // Balanced tokens (probability 0.5 ± 0.05) carry nothing.
  assert.ok(Math.abs(classifyTokens(t, new Array(20).fill(10), new Array(20).fill(10), 300, 300)!.prob - 0.5) < 1e-12);
  // Metatokens are skipped when they are at least as many as the words.
  const tm = tokens(5, 5);
  const r = classifyTokens(tm, new Array(10).fill(50), new Array(10).fill(0), 300, 300)!;
  assert.equal(r.used, 5);
  // The feature weight enters Robinson's shrinkage towards 0.5 (statistics.md §4.1 step 4): with
  // few hits an adjacent pair (weight 3125) is shrunk a little more than a distance-4 pair (weight 1).
  const near = classifyTokens(tokens(20, 0, 1), new Array(20).fill(3), new Array(20).fill(1), 300, 300)!;
  const farPairs = classifyTokens(tokens(20, 0, 4), new Array(20).fill(3), new Array(20).fill(1), 300, 300)!;
  assert.ok(near.prob < farPairs.prob && near.prob > 0.9, `${near.prob} vs ${farPairs.prob}`);
});
