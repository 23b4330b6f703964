import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineModule } from '../../src/plugin-api/index.js';
import type { PreResult } from '../../src/plugin-api/index.js';
import { gtubeModule } from '../../src/modules/gtube/index.js';
import { engineWith, fixtureMessage, fixtureRules, fixtureGroups, meta, sym } from './helpers.js';

const CRLF = fixtureMessage('crlf-simple.eml'); // 5.9 with fixtureRules: SPAM_FLAG 5, DATE_IN_PAST 1, MIME_GOOD -0.1

/** Inserts SCORE_N with weight n read from the X-Score request header; optional pre-results. */
function scorer(pre: PreResult[] = []) {
  return defineModule({
    name: 'scorer',
    symbols: { WEIGHTED: { score: 1, group: 'weighted' } },
    setup(ctx) {
      ctx.symbol({
        name: 'WEIGHTED',
        check: (t) => {
          const w = Number(t.getRequestHeader('x-score') ?? '0');
          if (w !== 0) t.insert('WEIGHTED', w);
          for (const p of pre) t.setPreResult(p);
        },
      });
    },
  });
}

function withScore(n: number, extra: Parameters<typeof meta>[0] = {}) {
  return meta({ requestHeaders: new Map([['x-score', [String(n)]]]), ...extra });
}

test('score picks the highest enabled threshold not above it; thresholds list highest first', async () => {
  const engine = await engineWith([scorer()]);
  const cases: Array<[number, string]> = [
    [0, 'no action'],
    [3.99, 'no action'],
    [4, 'greylist'],
    [6, 'add header'],
    [14.9, 'add header'],
    [15, 'reject'],
  ];
  for (const [score, action] of cases) {
    const r = await engine.scan(CRLF, withScore(score));
    assert.equal(r.action, action, `score ${score}`);
    assert.equal(r.requiredScore, 15);
  }
  const r = await engine.scan(CRLF, withScore(1));
  assert.deepEqual(r.thresholds, [['reject', 15], ['add header', 6], ['greylist', 4]]);
  assert.deepEqual(engine.actions().map((a) => [a.name, a.threshold]), [['greylist', 4], ['add header', 6], ['reject', 15]]);
});

test('rewrite subject, custom action with a milter attribute, soft reject only by pre-result', async () => {
  const engine = await engineWith([scorer(), fixtureRules], {
    actions: {
      reject: { threshold: 15 },
      'add header': { threshold: 6 },
      greylist: { threshold: 4 },
      'rewrite subject': { threshold: 8 },
      'soft reject': { threshold: 9 },
      my_quarantine: { threshold: 10, milter: 'quarantine' },
    },
    subjectTemplate: '[SPAM %d%%] %s',
  });
  const rs = await engine.scan(CRLF, withScore(3)); // 5.9 + 3 = 8.9
  assert.equal(rs.action, 'rewrite subject');
  assert.equal(rs.subject, '[SPAM 8.90%] fixture message with CRLF');
  const q = await engine.scan(CRLF, withScore(5)); // 10.9: soft reject (9) is never chosen by score
  assert.equal(q.action, 'my_quarantine');
  assert.equal(q.reject, 'quarantine');
  assert.equal(q.subject, undefined);
});

test('rewritten subject is RFC 2047 encoded when not ASCII; raw input has no subject', async () => {
  const engine = await engineWith([scorer()], { actions: { 'rewrite subject': { threshold: 1 }, reject: { threshold: 15 } } });
  const r = await engine.scan(fixtureMessage('utf.eml'), meta({ settings: { subject: 'Спам: %s' }, requestHeaders: new Map([['x-score', ['2']]]) }));
  assert.equal(r.action, 'rewrite subject');
  assert.match(r.subject!, /^=\?UTF-8\?B\?/);
  const decoded = r.subject!.split(' ').map((w) => Buffer.from(w.slice(10, -2), 'base64').toString('utf8')).join('');
  assert.equal(decoded, 'Спам: Hello');
  const raw = await engine.scan(CRLF, meta({ raw: true, requestHeaders: new Map([['x-score', ['2']]]) }));
  assert.equal(raw.subject, '*** SPAM *** ');
});

test('pre-results: soft reject decides, priority orders, least only raises the floor', async () => {
  const soft = await engineWith([scorer([{ action: 'soft reject', message: 'Try again later', module: 'greylist' }])]);
  const r = await soft.scan(CRLF, withScore(20));
  assert.equal(r.action, 'soft reject');
  assert.equal(r.messages.smtp_message, 'Try again later');
  assert.equal(r.passthroughModule, 'greylist');

  const prio = await engineWith([
    scorer([
      { action: 'add header', module: 'low', priority: 0 },
      { action: 'reject', module: 'critical', priority: 3, message: 'no' },
    ]),
  ]);
  const p = await prio.scan(CRLF, withScore(1));
  assert.equal(p.action, 'reject');
  assert.equal(p.score, 15, 'score defaults to the action threshold');
  assert.equal(p.passthroughModule, 'critical');

  const least = await engineWith([scorer([{ action: 'add header', module: 'floor', least: true }])]);
  const low = await least.scan(CRLF, withScore(1));
  assert.equal(low.action, 'add header');
  assert.equal(low.score, 6, 'score raised to the least threshold');
  const high = await least.scan(CRLF, withScore(16));
  assert.equal(high.action, 'reject');
  assert.equal(high.score, 16);
  assert.equal(high.passthroughModule, undefined);

  const leastSoft = await engineWith([scorer([{ action: 'soft reject', module: 'rl', least: true }])]);
  assert.equal((await leastSoft.scan(CRLF, withScore(7))).action, 'soft reject');
  assert.equal((await leastSoft.scan(CRLF, withScore(20))).action, 'reject');
});

test('a pre-result for an action disabled by settings is refused', async () => {
  const engine = await engineWith([scorer([{ action: 'reject', module: 'x' }])]);
  const r = await engine.scan(CRLF, withScore(1, { settings: { actions: { reject: null } } }));
  assert.equal(r.action, 'no action');
  assert.equal(r.passthroughModule, undefined);
});

test('GTUBE: reject via critical pre-result at the reject threshold, skipped, message', async () => {
  const engine = await engineWith([gtubeModule, fixtureRules]);
  const r = await engine.scan(fixtureMessage('gtube.eml'), meta());
  assert.equal(r.action, 'reject');
  assert.equal(r.score, 15);
  assert.equal(r.isSkipped, true);
  assert.deepEqual(r.symbols.map((s) => [s.name, s.score]), [['GTUBE', 0]]);
  assert.equal(r.messages.smtp_message, 'Gtube pattern');
  assert.equal(r.messageId, 'GTUBE1.1010101@example.net');
});

test('group max_score caps positive contributions; min_score caps negative ones', async () => {
  const mod = defineModule({
    name: 'capped',
    symbols: {
      H1: { score: 5, group: 'hdr' },
      H2: { score: 5, group: 'hdr' },
      H3: { score: 1, group: 'hdr' },
      G1: { score: -3, group: 'good' },
      G2: { score: -3, group: 'good' },
    },
    setup(ctx) {
      ctx.symbol({ name: 'ALL', inserts: ['H1', 'H2', 'H3', 'G1', 'G2'], check: (t) => { for (const s of ['H1', 'H2', 'H3', 'G1', 'G2']) t.insert(s); } });
    },
  });
  const engine = await engineWith([mod], { groups: { hdr: { maxScore: 8 }, good: { minScore: -4 } } });
  const r = await engine.scan(CRLF, meta({ flagList: ['groups'] }));
  assert.deepEqual(r.symbols.map((s) => [s.name, s.score, s.metricScore]), [
    ['H1', 5, 5],
    ['H2', 3, 5],
    ['H3', 0, 1],
    ['G1', -3, -3],
    ['G2', -1, -3],
  ]);
  assert.equal(r.score, 4);
  assert.deepEqual(r.groups.map((g) => [g.name, g.score]), [['hdr', 8], ['good', -4]]);
});

test('options are de-duplicated in order; repeated insertions keep the strongest; unknown symbols score 0', async () => {
  const mod = defineModule({
    name: 'opts',
    symbols: { MANY: { score: 2 }, ACC: { score: 1, oneShot: false } },
    setup(ctx) {
      ctx.symbol({
        name: 'OPTS',
        inserts: ['MANY', 'ACC', 'NOT_CONFIGURED'],
        check: (t) => {
          t.insert('MANY', 0.5, ['b', 'a']);
          t.insert('MANY', 1, ['a', 'c']);
          t.insert('MANY', 0.2, 'd');
          t.insert('ACC', 1);
          t.insert('ACC', 2);
          t.insert('NOT_CONFIGURED', 5, 'x'.repeat(5000));
          t.insert('NOT_CONFIGURED', 5, 'y');
        },
      });
    },
  });
  const engine = await engineWith([mod]);
  const r = await engine.scan(CRLF, meta());
  assert.deepEqual(sym(r, 'MANY')?.options, ['b', 'a', 'c', 'd']);
  assert.equal(sym(r, 'MANY')?.score, 2);
  assert.equal(sym(r, 'ACC')?.score, 3);
  assert.equal(sym(r, 'NOT_CONFIGURED')?.score, 0);
  assert.deepEqual(sym(r, 'NOT_CONFIGURED')?.options, ['...']);
  assert.equal(r.score, 5);
});
