import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureMessage, meta, metaFromRecorded, names, recordedCase, scanner, symbol, testMessage } from './helpers.js';

test('a connecting IP that differs from the top hop adds a counted hop, as in Rspamd 3.4', async () => {
  // a10 and a38 carry the same message; only a10 sends `IP:`.
  const s = await scanner();
  const withIp = recordedCase('a10-flags-groups');
  const without = recordedCase('a38-settings-rewrite-subject');
  const r1 = await s.scan(withIp.message, metaFromRecorded(withIp));
  const r2 = await s.scan(without.message, metaFromRecorded(without));
  assert.deepEqual(symbol(r1, 'RCVD_COUNT_THREE')?.options, ['3']);
  assert.ok(names(r1).has('RCVD_NO_TLS_LAST'));
  assert.deepEqual(symbol(r2, 'RCVD_COUNT_TWO')?.options, ['2']);
  assert.ok(names(r2).has('RCVD_TLS_LAST'));
  for (const r of [r1, r2]) {
    assert.ok(names(r).has('RCVD_VIA_SMTP_AUTH'));
    assert.ok(names(r).has('RCVD_HELO_USER'));
  }
});

test('HELO "user" from the MTA is RCVD_HELO_USER', async () => {
  const s = await scanner();
  const msg = fixtureMessage('crlf-simple.eml');
  assert.ok(names(await s.scan(msg, meta({ helo: 'User' }))).has('RCVD_HELO_USER'));
  assert.ok(!names(await s.scan(msg, meta({ helo: 'mail.example.org' }))).has('RCVD_HELO_USER'));
});

test('single hop: ONCE_RECEIVED, strict for dynamic-looking client names, not for local or authenticated senders', async () => {
  const s = await scanner();
  const msg = fixtureMessage('crlf-simple.eml');
  assert.ok(names(await s.scan(msg, meta({ ip: '203.0.113.5' }))).has('ONCE_RECEIVED'));
  const hop = 'Received: from client (host-5.dynamic.example.net [203.0.113.5])\r\n\tby mx.example.org with SMTP id 2; Tue, 01 Aug 2023 10:00:01 +0000\r\n';
  const oneHop = Buffer.concat([Buffer.from(hop), msg]);
  const strict = await s.scan(oneHop, meta({ ip: '203.0.113.5', hostname: 'host-5.dynamic.example.net' }));
  assert.deepEqual(symbol(strict, 'ONCE_RECEIVED_STRICT')?.options, ['dynamic']);
  assert.ok(!names(await s.scan(msg, meta({ ip: '127.0.0.1' }))).has('ONCE_RECEIVED'));
  assert.ok(!names(await s.scan(msg, meta({ ip: '203.0.113.5', user: 'alice' }))).has('ONCE_RECEIVED'));
});

test('long relay chains count into the right bucket', async () => {
  const r = await (await scanner()).scan(testMessage('rcvd7.eml'), meta());
  const count = r.symbols.find((x) => x.name.startsWith('RCVD_COUNT_'));
  assert.ok(count, 'a count symbol');
  const n = Number(count.options?.[0]);
  const expected = n >= 12 ? 'TWELVE' : n >= 7 ? 'SEVEN' : n >= 5 ? 'FIVE' : n >= 3 ? 'THREE' : n === 2 ? 'TWO' : n === 1 ? 'ONE' : 'ZERO';
  assert.equal(count.name, `RCVD_COUNT_${expected}`);
  assert.ok(n >= 7, `rcvd7.eml has seven hops, got ${n}`);
});

test('Received "for" the To address is PREVIOUSLY_DELIVERED', async () => {
  const msg = fixtureMessage('crlf-simple.eml').toString('latin1');
  const withFor = `Received: from mx.example.net (mx.example.net [198.51.100.7])\r\n\tby mail.example.org with ESMTPS id 1\r\n\tfor <bob@example.org>; Tue, 01 Aug 2023 10:00:01 +0000\r\n${msg}`;
  const r = await (await scanner()).scan(Buffer.from(withFor, 'latin1'), meta());
  assert.deepEqual(symbol(r, 'PREVIOUSLY_DELIVERED')?.options, ['bob@example.org']);
  assert.ok(names(r).has('RCVD_TLS_ALL'));
  assert.deepEqual(symbol(r, 'RCVD_COUNT_ONE')?.options, ['1']);
});

test('the "for <addr>" clause is found by a scan: same answers as the lazy regexp, linear on a header of thousands of clauses', async () => {
  const { forAddress } = await import('../../src/modules/received/check.js');
  const re = /\sfor\s<(.*?)>/;
  for (const v of [' for <a@b>', 'x for <a@b> for <c@d>', ' for <a\u2028b> for <c@d>', ' for <a', ' for\t<> x', 'for <a@b>', ' for <a\nb>', ' for < for <x>']) {
    assert.equal(forAddress(v), re.exec(v)?.[1], JSON.stringify(v));
  }
  // 10 000 unclosed clauses cost the regexp about a second per header.
  const msg = fixtureMessage('crlf-simple.eml').toString('latin1');
  const hostile = `${`Received: from a by b${' for <'.repeat(10_000)}\r\n`.repeat(8)}${msg}`;
  const cpu = process.cpuUsage();
  const r = await (await scanner()).scan(Buffer.from(hostile, 'latin1'), meta());
  const used = process.cpuUsage(cpu);
  assert.ok(!names(r).has('PREVIOUSLY_DELIVERED'));
  assert.ok(used.user + used.system < 2_000_000, `${used.user + used.system} µs of CPU`);
});
