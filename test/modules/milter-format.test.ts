import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preResult, spamdBar, spamdResult, spamLevel, spamStatus } from '../../src/modules/milter-headers/format.js';
import type { Verdict } from '../../src/plugin-api/index.js';

const verdict = (patch: Partial<Verdict>): Verdict => ({
  score: 0,
  requiredScore: 15,
  action: 'no action',
  symbols: [],
  ...patch,
});

test('X-Spamd-Bar: plus per point, minus per negative point, slash in between', () => {
  assert.equal(spamdBar(8.4), '++++++++');
  assert.equal(spamdBar(-2.5), '--');
  assert.equal(spamdBar(0.99), '/');
  assert.equal(spamdBar(-0.99), '/');
  assert.equal(spamdBar(3, 'P', 'N', 'Z'), 'PPP');
});

test('X-Spam-Level only from one point up', () => {
  assert.equal(spamLevel(0.9), undefined);
  assert.equal(spamLevel(2.1), '**');
});

test('X-Spam-Status says Yes unless the action is no action or greylist', () => {
  assert.equal(spamStatus(verdict({ score: 5.9, action: 'greylist' })), 'No, score=5.90');
  assert.equal(spamStatus(verdict({ score: 8.4, action: 'add header' })), 'Yes, score=8.40');
  assert.equal(spamStatus(verdict({ score: -1, action: 'no action' })), 'No, score=-1.00');
});

test('X-Spamd-Result sorts by |score| or by name and folds one symbol per line', () => {
  const v = verdict({
    score: 16,
    action: 'reject',
    symbols: [
      { name: 'B_SYM', score: -3, metricScore: -3, groups: [] },
      { name: 'A_SYM', score: 1, metricScore: 1, groups: [], options: ['x', 'y'] },
      { name: 'C_SYM', score: 18, metricScore: 18, groups: [] },
    ],
  });
  assert.equal(spamdResult(v, '\n'), 'default: True [16.00 / 15.00];\n\tC_SYM(18.00)[];\n\tB_SYM(-3.00)[];\n\tA_SYM(1.00)[x,y]');
  assert.equal(spamdResult(v, '\r\n', 'name').split(';\r\n\t').slice(1).map((l) => l.split('(')[0]).join(','), 'A_SYM,B_SYM,C_SYM');
});

test('X-Rspamd-Pre-Result names action, module and message', () => {
  assert.equal(preResult(verdict({})), undefined);
  assert.equal(
    preResult(verdict({ preResult: { action: 'reject', module: 'GTUBE', message: 'Gtube pattern' } })),
    'action=reject; module=GTUBE; Gtube pattern',
  );
});
