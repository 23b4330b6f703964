// Envelope paths (scan-protocol.md §3.1 forms, values from the a03–a06 protocol captures)
// and header address lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAddressList, parseEnvelopeAddress } from '../../src/message/addresses.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { rspamdMessage } from './fixtures.js';

test('envelope: with and without angle brackets, surrounding spaces', () => {
  for (const v of ['<alice@example.com>', 'alice@example.com', '  <alice@example.com>  ', ' alice@Example.COM ']) {
    const a = parseEnvelopeAddress(v);
    assert.equal(a?.address, 'alice@example.com', v);
    assert.equal(a?.local, 'alice');
    assert.equal(a?.domain, 'example.com');
  }
});

test('envelope: null sender and empty value', () => {
  for (const v of ['<>', '', '  ', '< >']) {
    const a = parseEnvelopeAddress(v);
    assert.ok(a, JSON.stringify(v));
    assert.equal(a.address, '');
  }
});

test('envelope: source route, quoted local part, address literal, trailing dot', () => {
  assert.equal(parseEnvelopeAddress('<@a.example,@b.example:u@d.example>')?.address, 'u@d.example');
  const q = parseEnvelopeAddress('"dave x"@example.net')!;
  assert.equal(q.local, 'dave x');
  assert.equal(q.address, 'dave x@example.net');
  assert.equal(parseEnvelopeAddress('<"a\\"b"@example.net>')?.local, 'a"b');
  assert.equal(parseEnvelopeAddress('user@[192.0.2.1]')?.domain, '[192.0.2.1]');
  assert.equal(parseEnvelopeAddress('<bob@example.org.>')?.address, 'bob@example.org');
});

test('envelope: invalid forms are undefined', () => {
  for (const v of ['no-at-sign', 'also bad', '<alice@example.com', 'alice@', '@example.com', 'a b@example.com', '<@route-without-colon>', 'x@exa mple.com', 'a..b@example.com']) {
    assert.equal(parseEnvelopeAddress(v), undefined, v);
  }
});

test('header lists: display names, groups, encoded words, invalid entries', () => {
  const list = parseAddressList('"Foo, Bar" <foo@Example.COM>, plain@example.org, team: a@example.net, b@example.net;');
  assert.deepEqual(list.map((a) => a.address), ['foo@example.com', 'plain@example.org', 'a@example.net', 'b@example.net']);
  assert.equal(list[0]!.name, 'Foo, Bar');
  assert.equal(parseAddressList('=?utf-8?B?0JLQsNGB0Y8=?= <v@example.com>')[0]!.name, 'Вася');
  const bad = parseAddressList('undisclosed-recipients');
  assert.equal(bad.length, 1);
  assert.equal(bad[0]!.invalid, true);
  assert.deepEqual(parseAddressList(''), []);
});

test('message address headers from real messages', () => {
  const m = parseMessage(rspamdMessage('replyto.eml'));
  assert.equal(m.from[0]!.address, 'xxx@abrakadabra.com');
  assert.equal(m.replyTo[0]!.address, 'user@emailbl.com');
  // `CC:` with 20 bracketed addresses, some without a space after the comma.
  const mult = parseMessage(rspamdMessage('freemailcc.eml'));
  assert.equal(mult.cc.length, 20);
  assert.equal(mult.cc[3]!.address, 'testp3@test3.com');
  assert.equal(mult.cc[19]!.address, 'test19@test.com');
});
