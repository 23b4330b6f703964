// parseReceived on Received lines taken from real messages (Rspamd's test messages).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessage } from '../../src/message/parse-message.js';
import { parseReceived } from '../../src/message/parse-received.js';
import { rspamdMessage } from './fixtures.js';

function hops(name: string) {
  return parseMessage(rspamdMessage(name)).headers.get('received').map((h) => parseReceived(h.value));
}

test('Postfix with TLS comment and IPv6 literal (received1.eml)', () => {
  const [top] = hops('received1.eml');
  assert.equal(top!.fromHelo, 'server.chat-met-vreemden.nl');
  assert.equal(top!.fromIp, '2a01:7c8:aab6:26d:5054:ff:fed1:1da2');
  assert.equal(top!.fromHostname, undefined, '`unknown` is not a host name');
  assert.equal(top!.by, 'mx1.freebsd.org');
  assert.equal(top!.protocol, 'ESMTPS');
  assert.equal(top!.tls, true);
  assert.equal(top!.authenticated, false);
  assert.equal(top!.id, 'CF0171862');
  assert.equal(top!.for, 'test@example.com');
  assert.equal(top!.timestamp?.toISOString(), '2015-07-06T09:01:20.000Z');
});

test('Exim: helo= in the comment, esmtpa / esmtp / esmtpsa', () => {
  const exim = hops('received1.eml')[1]!;
  assert.equal(exim.fromHelo, 'User');
  assert.equal(exim.fromHostname, 'ca-18-193-131.service.infuturo.it');
  assert.equal(exim.fromIp, '151.18.193.131');
  assert.equal(exim.protocol, 'ESMTPA');
  assert.equal(exim.authenticated, true);
  assert.equal(exim.tls, false);
  assert.equal(exim.id, '1ZC1sl-0006b4-TU');
  // received3/4: two junk lines, the Postfix hop, then the Exim hop with another protocol.
  const r3 = hops('received3.eml');
  assert.deepEqual(r3.slice(0, 2).map((h) => h.unparsed), [true, true]);
  assert.equal(r3[3]!.protocol, 'ESMTP');
  assert.equal(r3[3]!.authenticated, false);
  const sa = hops('received4.eml')[3]!;
  assert.equal(sa.protocol, 'ESMTPSA');
  assert.deepEqual([sa.tls, sa.authenticated], [true, true]);
});

test('Postfix rdns [ip] form and bracketed IPv6 loopback (ham.eml)', () => {
  const chain = hops('ham.eml');
  const loop = chain.find((h) => h.fromIp === '::1')!;
  assert.equal(loop.fromHelo, 'ietfa.amsl.com');
  assert.equal(loop.fromHostname, 'localhost');
  const amavis = chain.find((h) => h.fromIp === '4.31.198.44')!;
  assert.equal(amavis.fromHelo, 'mail.ietf.org');
  assert.equal(amavis.by, 'localhost');
  assert.equal(amavis.id, 'k8UsBTUjeiTe');
  assert.equal(amavis.for, 'cfrg@ietfa.amsl.com');
});

test('LMTP without from-comment, empty IP brackets, odd comments', () => {
  const [lmtp, postfix] = hops('bad_message.eml');
  assert.equal(lmtp!.fromHelo, 'mx.mezonplus.ru');
  assert.equal(lmtp!.fromIp, undefined);
  assert.equal(lmtp!.protocol, 'LMTP');
  assert.equal(postfix!.fromHostname, 'mail.esumare.ru');
  assert.equal(postfix!.fromIp, '89.163.231.166');
  const empty = hops('rcvd7.eml')[1]!;
  assert.equal(empty.fromIp, undefined);
  assert.equal(empty.fromHostname, 'forward106p.mail.test.net');
  const verified = hops('yand_forward.eml')[0]!;
  assert.equal(verified.fromIp, '0.0.0.0');
  assert.equal(verified.for, 'test@test.ru');
});

test('IP forms: parentheses, IPv4-mapped IPv6, by-only and garbage', () => {
  const paren = parseReceived('from unknown (HELO mail.example.com) (198.51.100.7) by mx.example.net with SMTP; 1 Jan 2020 00:00:00 +0000');
  assert.equal(paren.fromIp, '198.51.100.7');
  assert.equal(paren.fromHelo, 'mail.example.com');
  const mapped = parseReceived('from a.example (a.example [IPv6:::ffff:192.0.2.9]) by b.example with ESMTP id 1');
  assert.equal(mapped.fromIp, '192.0.2.9');
  const byOnly = parseReceived('by 2002:a17:90a:1:0:0:0:1 with SMTP id x; Tue, 1 Oct 2019 10:00:00 -0700 (PDT)');
  assert.equal(byOnly.fromHelo, undefined);
  assert.equal(byOnly.protocol, 'SMTP');
  assert.equal(byOnly.unparsed, false);
  const junk = parseReceived('apparently');
  assert.equal(junk.unparsed, true);
  assert.equal(junk.timestamp, undefined);
});

// Issue 17, item 1: every character `\s` matches ends a word, so each must also be skipped
// between words; before the fix these pushed empty words forever (a worker spun to ~5 GB).
const SEPARATORS: Array<[string, string]> = [
  ['VT', '\u000b'], ['FF', '\u000c'], ['NBSP', '\u00a0'], ['U+1680', '\u1680'],
  ...Array.from({ length: 11 }, (_, i): [string, string] => [`U+${(0x2000 + i).toString(16).toUpperCase()}`, String.fromCharCode(0x2000 + i)]),
  ['U+2028', '\u2028'], ['U+2029', '\u2029'], ['U+202F', '\u202f'], ['U+205F', '\u205f'], ['U+3000', '\u3000'], ['U+FEFF', '\ufeff'],
];

test('every blank a word stops at separates words (no endless loop on NBSP, VT, U+2028, …)', () => {
  for (const [label, c] of SEPARATORS) {
    const hop = parseReceived(`from mail.example.com${c}(mail.example.com [192.0.2.1]) by mx.example.net${c}with ESMTP; Thu, 1 Jan 2026 00:00:00 +0000`);
    assert.equal(hop.fromHelo, 'mail.example.com', label);
    assert.equal(hop.fromIp, '192.0.2.1', label);
    assert.equal(hop.by, 'mx.example.net', label);
    assert.equal(hop.protocol, 'ESMTP', label);
    assert.equal(hop.timestamp?.toISOString(), '2026-01-01T00:00:00.000Z', label);
    // Only the blank, runs of it, and the blank before a comment or bracket.
    assert.equal(parseReceived(c.repeat(50)).unparsed, true, label);
    // A bracketed word keeps its blanks (the brackets are then dropped from the HELO).
    assert.equal(parseReceived(`from${c}${c}(x)${c}[${c}]${c}`).fromHelo, c, label);
  }
});

test('the issue reproducer, parsed through the whole message', () => {
  const raw = Buffer.from('Received: from mail.example.com\xc2\xa0(mail.example.com [192.0.2.1]) by mx.example.net; Thu, 1 Jan 2026 00:00:00 +0000\r\nFrom: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n', 'latin1');
  const [hop] = parseMessage(raw).headers.get('received').map((h) => parseReceived(h.value));
  assert.equal(hop!.fromHelo, 'mail.example.com');
  assert.equal(hop!.fromIp, '192.0.2.1');
  assert.equal(hop!.by, 'mx.example.net');
});

test('tokens and characters past the caps are not read, and the hop says so', async () => {
  const { MAX_RECEIVED_CHARS, MAX_RECEIVED_TOKENS } = await import('../../src/message/limits.js');
  const manyWords = parseReceived(`from a.example by b.example ${'x '.repeat(MAX_RECEIVED_TOKENS)}`);
  assert.equal(manyWords.truncated, true);
  assert.equal(manyWords.fromHelo, 'a.example');
  assert.equal(manyWords.by, 'b.example');
  const long = parseReceived(`from a.example (${'c'.repeat(MAX_RECEIVED_CHARS)}) by b.example`);
  assert.equal(long.truncated, true);
  assert.equal(long.by, undefined, 'the by clause lies past the characters read');
  assert.equal(parseReceived('from a.example by b.example').truncated, undefined);
});

test('a trailing zone comment after the date is dropped by a scan, not a backtracking regexp', async () => {
  const { parseMailDate, stripTrailingComment } = await import('../../src/message/mail-date.js');
  assert.equal(parseReceived('from a by b; Tue, 1 Oct 2019 10:00:00 -0700 (PDT)').timestamp?.toISOString(), '2019-10-01T17:00:00.000Z');
  // What /\s*\([^)]*\)\s*$/ removed, case by case.
  const re = /\s*\([^)]*\)\s*$/;
  for (const s of ['x (a (b)', 'x (a) (b) ', 'x (a)b)', '()', 'a\u00a0(b)\u3000', 'x (a', 'a ((b)', 'a)(b)', 'a (b) c', '']) {
    assert.equal(stripTrailingComment(s), s.replace(re, ''), JSON.stringify(s));
  }
  // 64 KiB of blanks between two letters cost the regexp ~9 s; the scan does it at once.
  const cpu = process.cpuUsage();
  assert.equal(parseMailDate(`a${' '.repeat(65_536)}x`), undefined);
  assert.equal(stripTrailingComment(`a${' '.repeat(65_536)}x`).length, 65_538);
  assert.equal(stripTrailingComment(`${'('.repeat(65_536)})x`).length, 65_538);
  const used = process.cpuUsage(cpu);
  assert.ok(used.user + used.system < 500_000, `${used.user + used.system} µs`);
});

test('sendmail with an ident answer: `(user@rdns [ip])` gives the reverse name without the user', () => {
  // As in the SpamAssassin corpus (easy-ham-1/00013): the ident user is not part of the host name.
  const hop = parseReceived('from lugh.tuatha.org (root@lugh.tuatha.org [194.125.145.45]) by lugh.tuatha.org (8.9.3/8.9.3) with ESMTP id RAA19567; Thu, 22 Aug 2002 17:02:43 +0100');
  assert.equal(hop.fromHelo, 'lugh.tuatha.org');
  assert.equal(hop.fromHostname, 'lugh.tuatha.org');
  assert.equal(hop.fromIp, '194.125.145.45');
  const anonymous = parseReceived('from mx.example.org (@mx.example.org [192.0.2.7]) by relay.example.net');
  assert.equal(anonymous.fromHostname, 'mx.example.org');
});
