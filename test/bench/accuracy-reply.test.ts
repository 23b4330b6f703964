// What the accuracy bench reads from a server's replies (bench/accuracy-reply.ts), on replies the
// reference Rspamd 3.4 gave (test/bench/fixtures: /checkv2 for spam-1/00017 with no envelope, and
// the controller's /actions, both recorded from /work/shared/tools/reference-rspamd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ScanResultBody } from '../../src/client/types.js';
import { actionDisagreements, addHeaderThreshold, commonSymbols, parseLearnReply, refusalKind, scanOutcomeOf } from '../../bench/accuracy-reply.js';
import type { CorpusMessage } from '../../bench/corpus.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(fileURLToPath(new URL(`fixtures/${name}`, import.meta.url)), 'utf8'));
const reply = fixture('rspamd-3.4-checkv2-spam-1-00017.json') as ScanResultBody;
const actions = fixture('rspamd-3.4-actions.json') as Array<{ action: string; value: number | null }>;
const msg: CorpusMessage = { name: 'spam-1/00017', group: 'spam-1', bytes: Buffer.alloc(0) };

test('scanOutcomeOf: score, action, required_score and every symbol of a Rspamd reply', () => {
  const o = scanOutcomeOf(msg, reply);
  assert.equal(o.score, reply.score);
  assert.equal(o.action, reply.action);
  assert.equal(o.requiredScore, reply.required_score);
  assert.deepEqual(Object.keys(o.symbols).sort(), Object.keys(reply.symbols!).sort());
  // Rspamd's score is the sum of its symbols' scores: nothing was lost or misread.
  const sum = Object.values(o.symbols).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - o.score) < 1e-9, `symbols sum to ${sum}, score ${o.score}`);
  assert.equal(o.bayesProb, undefined, 'an untrained Rspamd adds no Bayes symbol');
});

test('scanOutcomeOf: the Bayes option ("97.50%") becomes a spam probability, BAYES_HAM below one half', () => {
  const spam = scanOutcomeOf(msg, { ...reply, symbols: { ...reply.symbols, BAYES_SPAM: { name: 'BAYES_SPAM', score: 5, options: ['97.50%'] } } });
  const ham = scanOutcomeOf(msg, { ...reply, symbols: { ...reply.symbols, BAYES_HAM: { name: 'BAYES_HAM', score: -3, options: ['97.50%'] } } });
  assert.ok(spam.bayesProb! > 0.98 && spam.bayesProb! < 1);
  assert.ok(ham.bayesProb! < 0.02 && ham.bayesProb! > 0);
});

test('scanOutcomeOf: a reply without a score (a skipped message) fails the run instead of scoring 0', () => {
  assert.throws(() => scanOutcomeOf(msg, { is_skipped: true }), /without a score \(skipped\)/);
});

test('addHeaderThreshold: read from /actions, not the reply\'s required_score (the reject threshold)', () => {
  const t = addHeaderThreshold(actions);
  assert.equal(t, actions.find((a) => a.action === 'add header')!.value);
  assert.notEqual(t, reply.required_score);
  assert.ok(t < reply.required_score!);
  assert.throws(() => addHeaderThreshold(actions.filter((a) => a.action !== 'add header')), /no threshold/);
  assert.throws(() => addHeaderThreshold(actions.map((a) => (a.action === 'add header' ? { ...a, value: null } : a))), /no threshold/);
  assert.throws(() => addHeaderThreshold({ error: 'forbidden' }), /expected an array/);
});

test('actionDisagreements: the reply\'s action against score ≥ threshold', () => {
  const o = scanOutcomeOf(msg, reply);
  const t = addHeaderThreshold(actions);
  assert.deepEqual(actionDisagreements([o], t), [], 'Rspamd added the header above its own threshold');
  // The same reply measured against a threshold above its score: the action no longer matches.
  assert.deepEqual(actionDisagreements([o], o.score + 1), [o]);
  assert.deepEqual(actionDisagreements([{ ...o, action: 'no action' }], t), [{ ...o, action: 'no action' }]);
});

test('commonSymbols: symbols in at least the share of the scans, zero-scored ones included', () => {
  const full = scanOutcomeOf(msg, reply);
  const few = scanOutcomeOf(msg, { ...reply, symbols: { ARC_NA: reply.symbols!['ARC_NA']!, MIME_GOOD: reply.symbols!['MIME_GOOD']! } });
  const both = commonSymbols([full, few, full], 1);
  assert.deepEqual(both.map((c) => c.name), ['ARC_NA', 'MIME_GOOD']);
  assert.deepEqual(both.find((c) => c.name === 'ARC_NA')!.scores, [0]);
  assert.equal(commonSymbols([full, few, full], 0.6).length, Object.keys(reply.symbols!).length);
  assert.deepEqual(commonSymbols([], 1), []);
});

test('refusalKind: Rspamd\'s and mailsift\'s refusals counted by kind, message ids left out', () => {
  // Rspamd 3.4's reply to a second /learnspam of the same message (status 208).
  assert.equal(refusalKind(208, '<0103c1042001882DD_IT7@dd_it7> has been already learned as spam, ignore it'), '208 already learned');
  assert.equal(refusalKind(204, '<a@b> contains less tokens than required for bayes classifier: 5 < 11'), '204 too few tokens');
  assert.equal(refusalKind(208, 'all learn conditions denied learning spam in bayes: already in class spam; probability 99.87%'), '208 learn conditions denied (already in class spam)');
  assert.equal(refusalKind(400, '<x1@y> unknown thing 12 and <x2@y> 13'), refusalKind(400, '<x9@z> unknown thing 7 and <x8@z> 2'));
});

test('parseLearnReply: Rspamd 3.4\'s 204 with a JSON body (which node\'s HTTP client rejects), counted as a refusal', () => {
  // The status line and first headers as Rspamd 3.4 sent them in a bench run; the body is its JSON error.
  const text = 'all learn conditions denied learning ham in default classifier';
  const body = JSON.stringify({ error: text });
  const raw = Buffer.from(`HTTP/1.1 204 ${text}\r\nConnection: close\r\nServer: rspamd/3.4\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\n\r\n${body}`, 'latin1');
  const r = parseLearnReply(raw);
  assert.deepEqual(r, { status: 204, text });
  assert.equal(refusalKind(r.status, r.text), '204 learn conditions denied');
});

test('parseLearnReply: success, a reason phrase without a body, a chunked body, and what is not HTTP', () => {
  assert.equal(parseLearnReply(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n{"success":true}')).status, 200);
  const reason = '<id@x> learn conditions denied learning spam in bayes: already in class spam; probability 99.87%';
  assert.deepEqual(parseLearnReply(Buffer.from(`HTTP/1.1 204 ${reason}\r\nConnection: close\r\n\r\n`)), { status: 204, text: reason });
  const json = '{"error":"<a@b> has been already learned as spam, ignore it"}';
  const chunked = `HTTP/1.1 208 Already Reported\r\nTransfer-Encoding: chunked\r\n\r\n${(20).toString(16)}\r\n${json.slice(0, 20)}\r\n${(json.length - 20).toString(16)}\r\n${json.slice(20)}\r\n0\r\n\r\n`;
  assert.deepEqual(parseLearnReply(Buffer.from(chunked)), { status: 208, text: JSON.parse(json).error });
  assert.throws(() => parseLearnReply(Buffer.from('SSH-2.0-OpenSSH\r\n')), /not an HTTP reply/);
  assert.throws(() => parseLearnReply(Buffer.alloc(0)), /not an HTTP reply/);
});
