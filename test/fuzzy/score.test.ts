// The 3.4 score formula (fuzzy.md §5): tanh-normalised hits, sqrt(prob) for texts, the image
// curve, cross multipliers, skip_unknown, error symbols, single-weight semantics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FuzzyHash } from '../../src/rule-libs/fuzzy/message-hashes.js';
import { compileRule } from '../../src/rule-libs/fuzzy/rule.js';
import { FuzzyCheckConfig } from '../../src/rule-libs/fuzzy/rule-config.js';
import { interpretReplies, normalizeHits, strongestBySymbol } from '../../src/rule-libs/fuzzy/score.js';
import type { FuzzyReply } from '../../src/rule-libs/fuzzy/wire.js';

const cfg = FuzzyCheckConfig.parse({
  rules: { r: { servers: '127.0.0.1', hits_limit: 20, skip_unknown: true, fuzzy_map: { FUZZY_DENIED: { flag: 1, hits_limit: 20 }, FUZZY_PROB: { flag: 2, hits_limit: 10 } } } },
});
const rule = compileRule('r', cfg.rules['r']!, cfg);
const facts = { hasTextPart: true, hasLongText: true };

function hash(type: FuzzyHash['type'], byte: number, size = 1000): FuzzyHash {
  return { type, digest: Buffer.alloc(64, byte), partId: '1', size };
}
function reply(value: number, flag: number, prob: number, digest?: Buffer): FuzzyReply {
  return { value, flag, tag: 1, prob, ...(digest ? { digest } : {}) };
}

test('worked examples of the spec: exact spam match and a 0.75 shingle match (3.4 curve)', () => {
  const a = interpretReplies(rule, [{ hash: hash('txt', 1), reply: reply(40, 1, 1, Buffer.alloc(64, 1)) }], facts);
  assert.ok(Math.abs(a.results[0]!.weight - Math.tanh(Math.E * 2)) < 1e-9);
  assert.ok(a.results[0]!.weight > 0.99);
  assert.equal(a.results[0]!.option, `1:${'01'.repeat(5)}:1.00:txt`);
  const b = interpretReplies(rule, [{ hash: hash('txt', 2), reply: reply(10, 2, 0.75, Buffer.alloc(64, 9)) }], facts);
  assert.equal(b.results[0]!.symbol, 'FUZZY_PROB');
  assert.ok(Math.abs(b.results[0]!.weight - 0.991 * Math.sqrt(0.75)) < 0.002, String(b.results[0]!.weight));
  assert.equal(b.results[0]!.option, `2:${'09'.repeat(5)}:0.75:txt`, 'the stored digest is named');
  assert.equal(normalizeHits(5, 0), 0);
});

test('not found, unknown flags with skip_unknown, and error codes', () => {
  const r = interpretReplies(rule, [
    { hash: hash('txt', 1), reply: reply(0, 0, 0) },
    { hash: hash('txt', 2), reply: reply(5, 77, 1) },
    { hash: hash('txt', 3), reply: reply(403, 0, 0) },
    { hash: hash('txt', 4), reply: reply(503, 0, 0) },
    { hash: hash('txt', 5), reply: reply(401, 0, 0) },
  ], facts);
  assert.deepEqual(r.results, []);
  assert.deepEqual(r.errors.sort(), ['FUZZY_FORBIDDEN', 'FUZZY_RATELIMITED']);
});

test('images: small ones discounted by prob^8 curve, and by the text context', () => {
  const img = interpretReplies(rule, [{ hash: hash('img', 1, 1000), reply: reply(40, 1, 0.9) }], facts);
  const n = Math.tanh(Math.E * 2) * ((0.9 - 0.5) * 2) ** 8 * 0.25;
  assert.ok(Math.abs(img.results[0]!.weight - n) < 1e-9);
  const big = interpretReplies(rule, [{ hash: hash('img', 1, 100_000), reply: reply(40, 1, 0.9) }], { hasTextPart: false, hasLongText: false });
  assert.ok(Math.abs(big.results[0]!.weight - Math.tanh(Math.E * 2)) < 1e-9, 'large image, no text: undiscounted');
  const both = interpretReplies(rule, [
    { hash: hash('img', 1, 100_000), reply: reply(40, 1, 1) },
    { hash: hash('txt', 2), reply: reply(10, 2, 1) },
  ], facts);
  assert.ok(Math.abs(both.results[1]!.weight - Math.tanh(Math.E) * 1.1) < 1e-9, 'text boosted by an image match');
});

test('single semantics: the strongest weight per symbol, every option kept', () => {
  const r = interpretReplies(rule, [
    { hash: hash('txt', 1), reply: reply(2, 1, 1) },
    { hash: hash('bin', 2), reply: reply(40, 1, 1) },
  ], facts);
  const s = strongestBySymbol(r.results).get('FUZZY_DENIED')!;
  assert.equal(s.options.length, 2);
  assert.equal(s.weight, Math.max(...r.results.map((x) => x.weight)));
});
