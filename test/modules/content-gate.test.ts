import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gate, gatedTest } from '../../src/modules/content-heuristics/gate.js';
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
  // Text inside groups, classes and escapes is not required as written.
  assert.equal(gate(/\b(?:debt|loan|mortgage)/i).anyOf, undefined);
  assert.equal(gate(/\bfoo\b|\b(?:bar|baz)/i).anyOf, undefined);
  assert.equal(gate(/[abcdef]{3}\d{4}/).anyOf, undefined);
  // Upper case in a case-sensitive pattern is still a necessary condition on the lower-cased text.
  assert.deepEqual(gate(/^\s*ATTN\b/m).anyOf, ['attn']);
});

test('gatedTest agrees with the regexp itself on every phrase rule over real messages', () => {
  const rules = [...SALES_PHRASES, ...ADVANCE_FEE_THEMES, ...STOCK_TOUT_THEMES].map(gate);
  const texts = [...devMessages('spam-1', 0, 150), ...devMessages('hard-ham-1', 0, 100)]
    .map((b) => parseMessage(b).textParts.map((p) => p.text).join('\n'))
    .concat(["DON'T DELETE this: Risk-Free, MILLIONS OF DOLLARS, Satisfaction Guaranteed", 'dont delete', '']);
  let matches = 0;
  for (const text of texts) {
    const lower = text.toLowerCase();
    for (const g of rules) {
      const want = g.re.test(text);
      if (want) matches++;
      assert.equal(gatedTest(g, text, lower), want, `${g.re} on ${text.slice(0, 60)}`);
    }
  }
  assert.ok(matches > 200, `the texts exercise the rules: ${matches} matches`);
});
