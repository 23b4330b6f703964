import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gate, gatedTest } from '../../src/modules/content-heuristics/gate.js';
import { LiteralScanner } from '../../src/modules/content-heuristics/literal-scan.js';
import { ADVANCE_FEE_THEMES, SALES_PHRASES, STOCK_TOUT_THEMES } from '../../src/modules/content-heuristics/phrases.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { devMessages } from '../stats/corpus.js';

test('gate: the literal every match must contain, per top-level branch; none when a branch has none', () => {
  assert.deepEqual(gate(/\bno obligation\b/i).anyOf, ['no obligation']);
  // An optional character ends the run before it; the longest required run is kept.
  assert.deepEqual(gate(/\bdon'?t delete\b/i).anyOf, ['t delete']);
  assert.deepEqual(gate(/\bmillions? (?:of )?dollars\b/i).anyOf, ['million']);
  // Repetition with + keeps the character but not the run across it.
  assert.deepEqual(gate(/abx+yzwq/).anyOf, ['yzwq']);
  assert.deepEqual(gate(/\bthe late (?:father)\b|\bmy late (?:husband)\b/i).anyOf, ['the late ', 'my late ']);
  // A required group whose every alternative has a literal gates on all of them.
  assert.deepEqual(gate(/\b(?:debt|loan|mortgage)/i).anyOf, ['debt', 'loan', 'mortgage']);
  assert.deepEqual(gate(/\bfoo\b|\b(?:bar|baz)/i).anyOf, ['foo', 'bar', 'baz']);
  assert.deepEqual(gate(/\b(?:crude oil|contract (?:sum|payment)|over-?invoic)/i).anyOf, ['crude oil', 'contract ', 'invoic']);
  // The set whose shortest literal is longest wins: `beneficiar` beats the plain run `the`.
  assert.deepEqual(gate(/the (?:beneficiary|beneficiaries)\b/i).anyOf, ['beneficiary', 'beneficiaries']);
  // Optional groups, look-arounds, classes and escapes require nothing; one such branch ungates all.
  assert.equal(gate(/\b(?:debt|loan)?\d+/i).anyOf, undefined);
  assert.equal(gate(/(?=debt)\w+/i).anyOf, undefined);
  assert.equal(gate(/\b(?:debt|\d+)/i).anyOf, undefined);
  assert.equal(gate(/[abcdef]{3}\d{4}/).anyOf, undefined);
  // Unicode case folding matches non-ASCII letters to ASCII ones: not gated.
  assert.equal(gate(/\bkey\b/iu).anyOf, undefined);
  assert.deepEqual(gate(/\bkey\b/u).anyOf, ['key']);
  // Upper case in a case-sensitive pattern is still a necessary condition on the lower-cased text.
  assert.deepEqual(gate(/^\s*ATTN\b/m).anyOf, ['attn']);
});

test('gatedTest agrees with the regexp itself on every phrase rule over real messages', () => {
  const rules = [...SALES_PHRASES, ...ADVANCE_FEE_THEMES, ...STOCK_TOUT_THEMES].map(gate);
  const texts = [...devMessages('spam-1', 0, 150), ...devMessages('hard-ham-1', 0, 100)]
    .map((b) => parseMessage(b).textParts.map((p) => p.text).join('\n'))
    .concat(["DON'T DELETE this: Risk-Free, MILLIONS OF DOLLARS, Satisfaction Guaranteed", 'dont delete', '']);
  const scanner = new LiteralScanner(rules.flatMap((g) => g.anyOf ?? []));
  assert.ok(rules.filter((g) => !g.anyOf).length <= 3, 'nearly every phrase rule is gated');
  let matches = 0;
  for (const text of texts) {
    const found = scanner.scan(text);
    for (const g of rules) {
      const want = g.re.test(text);
      if (want) matches++;
      assert.equal(gatedTest(g, text, found), want, `${g.re} on ${text.slice(0, 60)}`);
    }
  }
  assert.ok(matches > 200, `the texts exercise the rules: ${matches} matches`);
});

test('LiteralScanner finds exactly the literals a text contains, overlapping and nested ones too', () => {
  const literals = ['he', 'she', 'his', 'hers', 'usher', 'no obligation', "don't", '100%', 'x-y'];
  const scanner = new LiteralScanner(literals);
  const texts = ['ushers', 'this is his', 'no obligationhe', "don't stop 100% x-y", 'shhe', 'h', '', 'no obligatio', 'ünïcödé she'];
  for (const t of texts) {
    assert.deepEqual([...scanner.scan(t)].sort(), literals.filter((l) => t.includes(l)).sort(), t);
  }
  // ASCII letters match in either case; other characters only as written.
  assert.deepEqual([...scanner.scan('USHER, No Obligation')].sort(), ['he', 'no obligation', 'she', 'usher']);
  assert.deepEqual([...scanner.scan('\u212Aey \u0130s')], []);
  assert.throws(() => new LiteralScanner(['café']), /not lower-case ASCII/);
  assert.throws(() => new LiteralScanner(['Usher']), /not lower-case ASCII/);
});
