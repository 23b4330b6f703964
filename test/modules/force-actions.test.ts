// force_actions (Rspamd's force_actions.lua `rules`) on real fixture messages with the built-in
// modules: a rule forces its action when its expression holds (hit) and not otherwise (miss);
// honor_action / require_action read the action decided so far; `least` only raises the action;
// `limit` compares the expression's value; `message` fills smtp_message through selectors;
// `subject` sets the rewrite template; expressions may name composites.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import type { ScanMeta, ScanResult } from '../../src/plugin-api/index.js';
import { ForceActionsConfig } from '../../src/modules/force-actions/config.js';
import { engineConfig, fixtureMessage, meta, names, symbol } from './helpers.js';

// ham.eml scores ~6.9 (add header) with HFILTER_HOSTNAME_UNKNOWN, HFILTER_FROMHOST_NORES_A_OR_MX,
// DATE_IN_PAST, FAKE_REPLY, MAILLIST, HAS_LIST_UNSUB; spam_message.eml ~20 (reject) with
// BODY_ADVANCE_FEE and MISSING_TO; subject1.eml ~11 (add header), no Date, no From.
const ham = fixtureMessage('ham.eml');
const spam = fixtureMessage('spam_message.eml');
const noHeaders = fixtureMessage('subject1.eml');

// `Pass: all`: spam_message.eml passes the reject score before the body rules run, and the early
// exit for obvious spam would then leave out BODY_ADVANCE_FEE, which the rules below read.
const envelope = (over: Partial<ScanMeta> = {}): ScanMeta => meta({ ip: '8.8.8.8', from: 'alice@example.org', rcpt: ['bob@example.net'], pass: 'all', ...over });
/** Settings that move every threshold out of reach, so the score alone decides `no action`. */
const calm = (m: ScanMeta = envelope()): ScanMeta => ({ ...m, settings: { actions: { reject: 500, 'add header': 400, greylist: 300 } } });

async function scanWith(rules: Record<string, unknown>, message: Buffer, m: ScanMeta = envelope(), extra: Partial<ReturnType<typeof engineConfig>> = {}): Promise<ScanResult> {
  const cfg = { ...engineConfig({ force_actions: { rules } }), ...extra };
  const engine = await createEngine(cfg, builtinModules);
  return engine.scan(message, m);
}

describe('force_actions', () => {
  test('baseline: the fixtures score as the rules below assume', async () => {
    const engine = await createEngine(engineConfig(), builtinModules);
    const h = await engine.scan(ham, envelope());
    assert.equal(h.action, 'add header');
    for (const s of ['HFILTER_HOSTNAME_UNKNOWN', 'HFILTER_FROMHOST_NORES_A_OR_MX', 'DATE_IN_PAST', 'MAILLIST', 'HAS_LIST_UNSUB']) assert.ok(names(h).has(s), s);
    const s = await engine.scan(spam, envelope());
    assert.equal(s.action, 'reject');
    assert.ok(names(s).has('BODY_ADVANCE_FEE') && names(s).has('MISSING_TO'));
    assert.ok(!names(s).has('MAILLIST'));
  });

  test('hit and miss: a mailing-list whitelist forces no action on the list mail only', async () => {
    const rules = { LIST_OK: { expression: 'MAILLIST & HAS_LIST_UNSUB', action: 'no action' } };
    const hit = await scanWith(rules, ham);
    assert.equal(hit.action, 'no action');
    assert.equal(hit.passthroughModule, 'force_actions');
    assert.deepEqual(symbol(hit, 'FORCE_ACTION_LIST_OK')?.options, ['no action']);
    assert.equal(symbol(hit, 'FORCE_ACTION_LIST_OK')?.score, 0);
    assert.equal(hit.messages['smtp_message'], undefined, 'no message configured, none sent');
    const miss = await scanWith(rules, spam);
    assert.equal(miss.action, 'reject');
    assert.ok(!names(miss).has('FORCE_ACTION_LIST_OK'));
    assert.equal(miss.passthroughModule, undefined);
  });

  test('message: ${selector} placeholders are filled from the task', async () => {
    const rules = { FEE: { expression: 'BODY_ADVANCE_FEE & MISSING_TO', action: 'reject', message: 'Refused mail from ${from("smtp"):addr} to ${rcpts("smtp"):addr}' } };
    const r = await scanWith(rules, spam, envelope({ rcpt: ['bob@example.net', 'carol@example.net'] }));
    assert.equal(r.action, 'reject');
    assert.equal(r.messages['smtp_message'], 'Refused mail from alice@example.org to bob@example.net,carol@example.net');
    assert.ok(names(r).has('FORCE_ACTION_FEE'));
  });

  test('honor_action: the rule leaves an action it honours alone', async () => {
    const rules = { PAST: { expression: 'DATE_IN_PAST', action: 'reject', honor_action: ['add header', 'rewrite_subject'] } };
    const honoured = await scanWith(rules, ham);
    assert.equal(honoured.action, 'add header');
    assert.ok(!names(honoured).has('FORCE_ACTION_PAST'));
    // The same message when the score decides `no action`: not honoured, so forced.
    const forced = await scanWith(rules, ham, calm());
    assert.equal(forced.action, 'reject');
    assert.ok(names(forced).has('FORCE_ACTION_PAST'));
  });

  test('require_action: the rule acts only on an action it requires', async () => {
    const rules = { DEFER_SUSPECT: { expression: 'HFILTER_HOSTNAME_UNKNOWN', action: 'soft reject', require_action: 'add header', message: 'Try later' } };
    const acted = await scanWith(rules, ham);
    assert.equal(acted.action, 'soft reject');
    assert.equal(acted.messages['smtp_message'], 'Try later');
    const idle = await scanWith(rules, ham, calm());
    assert.equal(idle.action, 'no action');
    assert.ok(!names(idle).has('FORCE_ACTION_DEFER_SUSPECT'));
  });

  test('least: raises the action to at least its own, never lowers it', async () => {
    const rules = { AT_LEAST_HEADER: { expression: 'DATE_IN_PAST | MISSING_TO', action: 'add header', least: true } };
    const raised = await scanWith(rules, ham, { ...envelope(), settings: { actions: { reject: 15, 'add header': 6, greylist: 4 }, scores: { HFILTER_HOSTNAME_UNKNOWN: 0, HFILTER_FROMHOST_NORES_A_OR_MX: 0 } } });
    assert.equal(raised.action, 'add header');
    assert.ok(raised.score >= 6, `the score is raised to the action's threshold: ${raised.score}`);
    assert.ok(names(raised).has('FORCE_ACTION_AT_LEAST_HEADER'));
    assert.equal(raised.passthroughModule, undefined, 'a least result is no passthrough');
    const kept = await scanWith(rules, spam);
    assert.equal(kept.action, 'reject', 'the score chose reject: least does not lower it');
  });

  test('least with subject: rewrite subject with the rule\'s template, reject stays reject', async () => {
    const rules = { TAG: { expression: 'DATE_IN_PAST', action: 'rewrite subject', least: true, subject: '[list?] %s' } };
    const r = await scanWith(rules, ham);
    assert.equal(r.action, 'rewrite subject');
    assert.match(r.subject ?? '', /^\[list\?\] /);
    const s = await scanWith(rules, spam);
    assert.equal(s.action, 'reject');
  });

  test('limit: the expression holds only above it', async () => {
    // 2.5 + 1.5 = 4 for ham.eml
    const expression = 'HFILTER_HOSTNAME_UNKNOWN + HFILTER_FROMHOST_NORES_A_OR_MX';
    const over = await scanWith({ HF: { expression, action: 'reject', limit: 3.5 } }, ham);
    assert.equal(over.action, 'reject');
    const under = await scanWith({ HF: { expression, action: 'reject', limit: 4.5 } }, ham);
    assert.equal(under.action, 'add header');
  });

  test('an expression may name a composite and a group', async () => {
    const composites = [{ name: 'HFILTER_BOTH', expression: 'HFILTER_HOSTNAME_UNKNOWN & HFILTER_FROMHOST_NORES_A_OR_MX', score: 0.5, policy: 'leave' as const }];
    const viaComposite = await scanWith({ BOTH: { expression: 'HFILTER_BOTH', action: 'reject' } }, ham, envelope(), { composites });
    assert.ok(names(viaComposite).has('HFILTER_BOTH'));
    assert.equal(viaComposite.action, 'reject');
    const viaGroup = await scanWith({ G: { expression: 'g:hfilter & !MISSING_TO', action: 'reject' } }, ham);
    assert.equal(viaGroup.action, 'reject');
    assert.equal((await scanWith({ G: { expression: 'g:hfilter & !MISSING_TO', action: 'reject' } }, spam, calm())).action, 'no action');
  });

  test('several rules: the first forced action wins and later rules see it through honor_action', async () => {
    const rules = {
      FIRST: { expression: 'DATE_IN_PAST', action: 'reject', message: 'first' },
      SECOND: { expression: 'DATE_IN_PAST', action: 'no action', honor_action: ['reject'] },
    };
    const r = await scanWith(rules, ham);
    assert.equal(r.action, 'reject');
    assert.equal(r.messages['smtp_message'], 'first');
    assert.ok(!names(r).has('FORCE_ACTION_SECOND'));
  });

  test('a rule forcing a custom action configured with milter = quarantine', async () => {
    const actions = { reject: { threshold: 15 }, 'add header': { threshold: 6 }, greylist: { threshold: 4 }, quarantine: { threshold: null, milter: 'quarantine' } };
    const r = await scanWith({ Q: { expression: 'BODY_ADVANCE_FEE', action: 'quarantine', message: 'held for review' } }, spam, envelope(), { actions });
    assert.equal(r.action, 'quarantine');
    assert.equal(r.reject, 'quarantine');
    assert.equal(r.messages['smtp_message'], 'held for review');
    assert.equal((await scanWith({ Q: { expression: 'BODY_ADVANCE_FEE', action: 'quarantine' } }, noHeaders, envelope(), { actions })).action, 'add header');
  });

  test('no rules: the module is off; a bad expression is a config error', async () => {
    const engine = await createEngine(engineConfig(), builtinModules);
    assert.equal(engine.disabledModules().get('force_actions'), 'config');
    const bad = ForceActionsConfig.safeParse({ rules: { X: { expression: 'A & (B', action: 'reject' } } });
    assert.equal(bad.success, false);
    assert.match(JSON.stringify(bad.error?.issues), /symbol expression/);
    assert.equal(ForceActionsConfig.safeParse({ rules: { 'bad name': { expression: 'A', action: 'reject' } } }).success, false);
  });
});
