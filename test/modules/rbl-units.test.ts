import { test } from 'node:test';
import assert from 'node:assert/strict';
import { luaPatternToRegExp, hashKey, reverseIp } from '../../src/modules/rbl/index.js';
import { compileRules } from '../../src/modules/rbl/compile.js';
import { hitsForAnswers, symbolsForAnswer } from '../../src/modules/rbl/answers.js';
import { RblConfig } from '../../src/modules/rbl/config.js';

const rules = (cfg: unknown = {}) => compileRules(RblConfig.parse(cfg));
const rule = (key: string, cfg: unknown = {}) => rules(cfg).find((r) => r.key === key)!;

test('Lua return-code patterns match as Rspamd anchors them', () => {
  const re = luaPatternToRegExp('127.0.%d+.2');
  assert.ok(re.test('127.0.15.2'));
  assert.ok(!re.test('127.0.15.22'));
  assert.ok(!re.test('127.0.x.2'));
  assert.ok(!re.test('1127.0.1.2'));
  assert.ok(luaPatternToRegExp('127.0.0.1-').test('127.0.0.'));
});

test('reversed names for IPv4, IPv4-mapped and IPv6 addresses', () => {
  assert.equal(reverseIp('192.0.2.10'), '10.2.0.192');
  assert.equal(reverseIp('::ffff:192.0.2.10'), '10.2.0.192');
  assert.equal(reverseIp('2001:db8::1'), '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2');
  assert.equal(reverseIp('not-an-ip'), undefined);
});

test('hashed e-mail keys equal what Rspamd 3.4 computes', () => {
  // Reference values printed by `rspamadm lua` (rspamd 3.4) with rspamd_cryptobox_hash.
  assert.equal(hashKey('spammer.bad-mail.example', 'blake2', 'base32', 32), '3sm3c1a517tbherrxrnkk5o74yhysa98');
  assert.equal(hashKey('spammer@bad-mail.example', 'sha1', 'hex'), '34321b71e33cb9b632e90b99e9a6575916cb1141');
  assert.equal(hashKey('a', 'md5', 'hex'), '0cc175b9c0f1b6a831c399e269772661');
  assert.equal(hashKey('a', 'sha256', 'base64', 8), 'ypeBEsob');
});

test('return codes: Spamhaus ZEN codes, DNSWL trust levels, unknown codes', () => {
  const zen = rule('spamhaus');
  assert.deepEqual(symbolsForAnswer(zen, '127.0.0.2'), ['SPAMHAUS_SBL']);
  assert.deepEqual(symbolsForAnswer(zen, '127.0.0.6'), ['SPAMHAUS_XBL']);
  assert.deepEqual(symbolsForAnswer(zen, '127.0.0.11'), ['SPAMHAUS_PBL']);
  assert.deepEqual(symbolsForAnswer(zen, '127.0.0.99'), []);
  const hits = hitsForAnswers(zen, '192.0.2.1', ['from', 'received'], ['127.0.0.2', '127.0.0.99']);
  assert.deepEqual(hits.map((h) => [h.symbol, h.option]), [
    ['RBL_SPAMHAUS_SBL', '192.0.2.1:from'],
    ['RECEIVED_SPAMHAUS_SBL', '192.0.2.1:received'],
    ['RBL_SPAMHAUS', '192.0.2.1:from:127.0.0.99'],
    ['RECEIVED_SPAMHAUS', '192.0.2.1:received:127.0.0.99'],
  ]);
  const dnswl = rule('dnswl');
  assert.deepEqual(symbolsForAnswer(dnswl, '127.0.15.3'), ['RCVD_IN_DNSWL_HI']);
  assert.deepEqual(symbolsForAnswer(dnswl, '127.0.5.0'), ['RCVD_IN_DNSWL_NONE']);
  assert.ok(dnswl.whiteSymbols.has('RCVD_IN_DNSWL_HI') && !dnswl.whiteSymbols.has('RCVD_IN_DNSWL_LOW'));
});

test('return bits: URIBL and SURBL masks, several symbols per answer', () => {
  assert.deepEqual(symbolsForAnswer(rule('URIBL_MULTI'), '127.0.0.14').sort(), ['URIBL_BLACK', 'URIBL_GREY', 'URIBL_RED']);
  assert.deepEqual(symbolsForAnswer(rule('URIBL_MULTI'), '127.0.0.2'), ['URIBL_BLACK']);
  assert.deepEqual(symbolsForAnswer(rule('SURBL_MULTI'), '127.0.0.136').sort(), ['CRACKED_SURBL', 'PH_SURBL_MULTI']);
  assert.deepEqual(symbolsForAnswer(rule('SURBL_MULTI'), '127.0.0.32'), []);
  // SURBL_MULTI ignores the module defaults, so unknown answers insert nothing.
  assert.deepEqual(hitsForAnswers(rule('SURBL_MULTI'), 'x.com', ['url'], ['127.0.0.32']), []);
});

test('config: lists switch off, merge field by field, new lists need a zone', () => {
  const keys = rules().map((r) => r.key);
  assert.ok(keys.includes('spamhaus') && keys.includes('DBL') && !keys.includes('SPAMHAUS_ZEN_URIBL'));
  assert.ok(!rules({ rbls: { spamhaus: { enabled: false } } }).some((r) => r.key === 'spamhaus'));
  const merged = rule('spamhaus', { rbls: { spamhaus: { checks: ['from'] } } });
  assert.deepEqual([...merged.checks], ['from']);
  assert.equal(merged.zone, 'zen.spamhaus.org');
  assert.ok(!rules({ default_enabled: false }).some((r) => r.key === 'spamhaus'));
  assert.ok(rules({ default_enabled: false }).some((r) => r.key === 'DBL'), 'ignore_defaults lists keep running');
  const bad = RblConfig.safeParse({ rbls: { mine: { checks: ['from'] } } });
  assert.equal(bad.success, false);
  // `selector` adds the selector check (compiled in setup; selector-uses.test.ts runs it).
  assert.equal(RblConfig.safeParse({ rbls: { spamhaus: { selector: 'ip' } } }).success, true);
  assert.ok(rule('spamhaus', { rbls: { spamhaus: { selector: 'ip' } } }).checks.has('selector'));
  assert.equal(RblConfig.safeParse({ rbls: { spamhaus: { selector: 42 } } }).success, false);
});
