// Milter envelope instructions in the scan result's `milter` object (issue 20, item 5): made by a
// module through the typed task.milter, by a configured settings rule and by a request's
// Settings header (`apply.milter`), merged across producers, and refused when a milter could
// not send them. Also the general pre-result hook's `processAll` and task.setSubject.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defineModule } from '../../src/plugin-api/index.js';
import type { Task } from '../../src/plugin-api/index.js';
import { renderV2 } from '../../src/protocol/render-v2.js';
import { engineWith, fixtureMessage, fixtureRules, meta, recordingLogger, symbolNames, type LogLine } from './helpers.js';

const ham = fixtureMessage('ham.eml');
const spam = fixtureMessage('spam_message.eml');

/** A module that routes by envelope sender, through the typed API only. */
const router = defineModule({
  name: 'router',
  symbols: { ROUTED: { score: 0, group: 'router' } },
  setup(ctx) {
    ctx.symbol({
      name: 'ROUTED',
      check(task: Task) {
        const from = task.envelopeFrom?.address;
        if (from === 'redirect@example.org') {
          task.milter.changeFrom('bounces@example.org');
          task.milter.addRcpt('archive@example.com');
          task.milter.addRcpt('<audit@example.com>');
          task.milter.addRcpt('archive@example.com'); // once only
          task.milter.delRcpt('bob@example.net');
          task.insert('ROUTED');
        } else if (from === 'hold@example.org') {
          task.milter.quarantine({ module: 'router', reason: 'held by router' });
        } else if (from === 'drop@example.org') {
          task.milter.discard({ module: 'router' });
        } else if (from === 'flag@example.org') {
          task.milter.spamHeader({ 'X-Router': 'flagged' });
          task.milter.spamHeader({ 'X-Router-Reason': 'test' });
          task.milter.noAction();
        } else if (from === 'hostile@example.org') {
          task.milter.changeFrom('a@b>\r\nRCPT TO:<x@y');
          task.milter.addRcpt('two words@example.com');
          task.milter.addRcpt('');
          task.milter.spamHeader({ 'Bad:Name': 'x', Fine: 'line\r\nbreak' });
        }
      },
    });
  },
});

/** Forces the action from a prefilter; `processAll` lets the filters run anyway. */
const forcer = defineModule({
  name: 'forcer',
  setup(ctx) {
    ctx.symbol({
      name: 'FORCER',
      stage: 'prefilters',
      check(task: Task) {
        const all = task.getRequestHeader('x-process-all') === 'yes';
        task.setPreResult({ action: 'rewrite subject', module: 'forcer', ...(all ? { processAll: true } : {}) });
        task.setSubject('[forced %d] %s');
      },
    });
  },
});

describe('milter instructions in the result', () => {
  test('a module: change_from, add_rcpt (merged, once each), del_rcpt, bracketed; rendered in the /checkv2 object', async () => {
    const engine = await engineWith([fixtureRules, router]);
    const r = await engine.scan(ham, meta({ from: 'redirect@example.org', rcpt: ['bob@example.net'] }));
    assert.deepEqual({ change_from: r.milter?.change_from, add_rcpt: r.milter?.add_rcpt, del_rcpt: r.milter?.del_rcpt }, {
      change_from: '<bounces@example.org>',
      add_rcpt: ['<archive@example.com>', '<audit@example.com>'],
      del_rcpt: ['<bob@example.net>'],
    });
    // fixtureRules' idempotent symbol asks to remove X-Spam: the producers merge into one block.
    assert.deepEqual(r.milter?.remove_headers, { 'X-Spam': 0 });
    const wire = JSON.parse(JSON.stringify(renderV2(r, { flags: new Set(), extendedUrls: false }))) as Record<string, unknown>;
    assert.deepEqual(wire['milter'], { change_from: '<bounces@example.org>', add_rcpt: ['<archive@example.com>', '<audit@example.com>'], del_rcpt: ['<bob@example.net>'], remove_headers: { 'X-Spam': 0 } });
    const other = await engine.scan(ham, meta({ from: 'alice@example.org', rcpt: ['bob@example.net'] }));
    assert.equal(other.milter?.change_from, undefined);
    assert.equal(other.milter?.add_rcpt, undefined);
  });

  test('quarantine() and discard() force reject and say how to carry it out', async () => {
    const engine = await engineWith([fixtureRules, router]);
    const q = await engine.scan(ham, meta({ from: 'hold@example.org', rcpt: ['bob@example.net'] }));
    assert.equal(q.action, 'reject');
    assert.equal(q.milter?.reject, 'quarantine');
    assert.equal(q.messages['smtp_message'], 'held by router');
    assert.equal(q.passthroughModule, 'router');
    const d = await engine.scan(ham, meta({ from: 'drop@example.org', rcpt: ['bob@example.net'] }));
    assert.equal(d.action, 'reject');
    assert.equal(d.milter?.reject, 'discard');
    assert.equal(d.messages['smtp_message'], undefined);
  });

  test('spam_header objects merge; no_action', async () => {
    const engine = await engineWith([fixtureRules, router]);
    const r = await engine.scan(ham, meta({ from: 'flag@example.org', rcpt: ['bob@example.net'] }));
    assert.deepEqual(r.milter?.spam_header, { 'X-Router': 'flagged', 'X-Router-Reason': 'test' });
    assert.equal(r.milter?.no_action, true);
  });

  test('values a milter cannot send are refused with a log line, never put in the reply', async () => {
    const lines: LogLine[] = [];
    const engine = await engineWith([fixtureRules, router], {}, recordingLogger(lines));
    const r = await engine.scan(ham, meta({ from: 'hostile@example.org', rcpt: ['bob@example.net'] }));
    assert.equal(r.milter?.change_from, undefined);
    assert.equal(r.milter?.add_rcpt, undefined);
    assert.equal(r.milter?.spam_header, undefined);
    assert.equal(lines.filter((l) => l.level === 'warn' && /^milter .*refused/.test(l.msg)).length, 5, JSON.stringify(lines));
  });

  test('a configured settings rule: apply.milter, with add_headers beside it', async () => {
    const engine = await engineWith([fixtureRules], {
      settings: [
        {
          id: 'outbound-archive',
          apply: { add_headers: { 'X-Archived': 'yes' }, milter: { add_rcpt: ['archive@example.com'], change_from: '<>', reject: 'quarantine', spam_header: 'Archived' } },
          conditions: { from: ['archive-me@example.org'] },
        },
      ],
    });
    const r = await engine.scan(ham, meta({ from: 'archive-me@example.org', rcpt: ['bob@example.net'] }));
    assert.deepEqual(r.milter?.add_rcpt, ['<archive@example.com>']);
    assert.equal(r.milter?.change_from, '<>');
    assert.equal(r.milter?.reject, 'quarantine');
    assert.equal(r.milter?.spam_header, 'Archived');
    assert.deepEqual(r.milter?.add_headers, { 'X-Archived': 'yes' });
    const other = await engine.scan(ham, meta({ from: 'alice@example.org', rcpt: ['bob@example.net'] }));
    assert.equal(other.milter?.add_rcpt, undefined);
  });

  test('a request Settings header: apply.milter checked as hostile input', async () => {
    const engine = await engineWith([fixtureRules]);
    const settings = { milter: { del_rcpt: ['bob@example.net', 'x\0y@example.net'], change_from: 'new@example.org', no_action: 'yes', bogus: 1 } };
    const r = await engine.scan(spam, meta({ from: 'a@example.org', rcpt: ['bob@example.net'], settings }));
    assert.deepEqual(r.milter?.del_rcpt, ['<bob@example.net>']);
    assert.equal(r.milter?.change_from, '<new@example.org>');
    assert.equal(r.milter?.no_action, undefined);
    assert.equal(Object.hasOwn(r.milter ?? {}, 'bogus'), false);
  });
});

describe('forcing an action from a module', () => {
  test('a pre-result stops the remaining symbols; with processAll they run and the action is still forced', async () => {
    const engine = await engineWith([fixtureRules, forcer]);
    const stopped = await engine.scan(spam, meta());
    assert.equal(stopped.action, 'rewrite subject');
    assert.ok(!symbolNames(stopped).includes('MISSING_TO'), 'filters skipped after the pre-result');
    assert.match(stopped.subject ?? '', /^\[forced -?\d+\.\d\d\] /);
    const all = await engine.scan(spam, meta({ requestHeaders: new Map([['x-process-all', ['yes']]]) }));
    assert.equal(all.action, 'rewrite subject');
    assert.ok(symbolNames(all).includes('MISSING_TO'), 'filters ran under processAll');
    assert.equal(all.passthroughModule, 'forcer');
  });
});
