// /checkv2 request headers → ScanMeta, on the header values real clients send (values taken
// from the fixture captures): envelope forms, flags with their quirks, settings syntaxes.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RequestHeaders } from '../../src/http/types.js';
import { parseV2Headers } from '../../src/protocol/parse-v2.js';
import { parseClientIp, parseEnvelopePath, splitAddressList } from '../../src/protocol/envelope.js';
import { parseSettingsValue } from '../../src/protocol/settings-parse.js';
import { FIXTURES } from './harness.js';

function headers(pairs: Array<[string, string]>): RequestHeaders {
  const h = new RequestHeaders();
  for (const [k, v] of pairs) h.add(k, v);
  return h;
}

/** Request headers of a recorded case, as our parser would see them. */
function fixtureHeaders(name: string): RequestHeaders {
  const raw = readFileSync(join(FIXTURES, name, 'request.bin'));
  const head = raw.subarray(0, raw.indexOf('\r\n\r\n')).toString('latin1').split('\r\n').slice(1);
  return headers(head.map((l) => {
    const c = l.indexOf(':');
    return [l.slice(0, c), l.slice(c + 1).replace(/^[ \t]+/, '')];
  }));
}

describe('v2 header parsing', () => {
  it('a04: bare From, comma-separated Rcpt with a quoted local part, IPv6', () => {
    const m = parseV2Headers(fixtureHeaders('a04-envelope-variants'));
    assert.equal(m.from, 'alice@example.com');
    assert.deepEqual(m.rcpt, ['bob@example.org', 'carol@example.net', 'dave x@example.net']);
    assert.equal(m.ip, '2001:db8::25');
    assert.equal(m.brokenEnvelope, false);
  });

  it('a05: empty From is the null sender, IPv4 with port', () => {
    const m = parseV2Headers(fixtureHeaders('a05-null-sender'));
    assert.equal(m.from, '');
    assert.equal(m.ip, '192.0.2.44');
  });

  it('a06: unparsable IP/From/Rcpt are dropped and flag the envelope', () => {
    const m = parseV2Headers(fixtureHeaders('a06-bad-envelope'));
    assert.equal(m.ip, undefined);
    assert.equal(m.from, undefined);
    assert.equal(m.brokenEnvelope, true);
  });

  it('a07: header names are case-insensitive', () => {
    const m = parseV2Headers(fixtureHeaders('a07-header-case'));
    assert.ok(m.ip);
    assert.ok(m.from);
    assert.ok(m.rcpt.length > 0);
  });

  it('a18: flags are case-sensitive, leading space skipped, trailing space kept', () => {
    const m = parseV2Headers(headers([['Flags', ' groups, GROUPS,profile ,ext_urls,,no_such']]));
    assert.deepEqual([...m.flags].sort(), ['ext_urls', 'groups']);
    assert.equal(m.urlFormat, 'extended');
  });

  it('h01 (Haraka): repeated Rcpt, TLS marks ssl, Queue-Id, bogus SPF header stored', () => {
    const h = fixtureHeaders('h01-haraka-default');
    const m = parseV2Headers(h);
    assert.ok(m.rcpt.length >= 1);
    assert.ok(m.queueId);
    assert.ok(m.tls?.cipher);
    assert.ok(m.flags.has('ssl'));
    assert.deepEqual(m.requestHeaders.get('spf'), ['[object Object]']);
  });

  it('m01 (milter proxy): bracketed addresses, ip:port, MTA-Name, milter,body_block', () => {
    const m = parseV2Headers(fixtureHeaders('m01-milter-proxy-to-worker'));
    assert.ok(m.ip && !m.ip.includes(':') || m.ip?.includes('::'));
    assert.ok(m.from && !m.from.startsWith('<'));
    assert.ok(m.flags.has('milter') && m.flags.has('body_block'));
    assert.ok(m.mtaName);
  });

  it('single-valued headers: walked ones take the last, looked-up ones the first', () => {
    const m = parseV2Headers(headers([['Helo', 'first'], ['Helo', 'last'], ['maxscore', '5'], ['maxscore', '9'], ['softscore', 'x']]));
    assert.equal(m.helo, 'last');
    assert.equal(m.maxScore, 5);
    assert.equal(m.softScore, undefined);
  });

  it('Pass, Log, URL-Format, Profile, Milter, Raw + Content-Type, Deliver-To brackets, Log-Tag cut', () => {
    const m = parseV2Headers(headers([
      ['Pass', 'ALL'], ['Log', 'no'], ['URL-Format', 'Extended'], ['Profile', 'yes'], ['Milter', 'yes'],
      ['Raw', 'yes'], ['Content-Type', 'text/html'], ['Deliver-To', ' <bob@example.org> '], ['Log-Tag', 'x'.repeat(40)],
      ['Settings-ID', 'fixture_headers'], ['User', 'alice'], ['MTA-Tag', 'edge'], ['Filename', 'a.eml'],
    ]));
    assert.equal(m.pass, 'all');
    assert.ok(m.flags.has('pass_all') && m.flags.has('no_log') && m.flags.has('ext_urls') && m.flags.has('profile') && m.flags.has('milter'));
    assert.equal(m.log, false);
    assert.equal(m.raw, true);
    assert.equal(m.contentType, 'text/html');
    assert.equal(m.deliverTo, 'bob@example.org');
    assert.equal(m.logTag?.length, 31);
    assert.equal(m.settingsId, 'fixture_headers');
    assert.equal(m.user, 'alice');
    assert.equal(m.mtaTag, 'edge');
    assert.equal(m.filename, 'a.eml');
  });

  it('Settings: JSON (a30), UCL (a32), legacy bare scores (a48); broken (a33) ignored', () => {
    assert.deepEqual(parseV2Headers(fixtureHeaders('a30-settings-json')).settings?.scores, { DATE_IN_PAST: 2.5 });
    assert.deepEqual(parseV2Headers(fixtureHeaders('a32-settings-ucl')).settings, { actions: { reject: 1 }, subject: '[UCL] %s' });
    assert.deepEqual(parseV2Headers(fixtureHeaders('a48-settings-scores-legacy')).settings, { DATE_IN_PAST: 7 });
    assert.equal(parseV2Headers(fixtureHeaders('a33-settings-bad')).settings, undefined);
  });
});

describe('envelope values', () => {
  it('client IPs in every form MTAs write', () => {
    assert.equal(parseClientIp('203.0.113.5'), '203.0.113.5');
    assert.equal(parseClientIp('192.0.2.44:2525'), '192.0.2.44');
    assert.equal(parseClientIp('[2001:db8::1]:25'), '2001:db8::1');
    assert.equal(parseClientIp('[2001:db8::1]'), '2001:db8::1');
    assert.equal(parseClientIp('::ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(parseClientIp('IPv6:2001:db8::2'), '2001:db8::2');
    assert.equal(parseClientIp('/var/run/mta.sock'), '/var/run/mta.sock');
    for (const bad of ['not-an-ip', '300.1.1.1', '1.2.3', '[2001:db8::1', '1.2.3.4:port', '']) assert.equal(parseClientIp(bad), undefined, bad);
  });

  it('RFC 5321 paths', () => {
    assert.equal(parseEnvelopePath('<alice@example.com>'), 'alice@example.com');
    assert.equal(parseEnvelopePath(' alice@example.com '), 'alice@example.com');
    assert.equal(parseEnvelopePath('<>'), '');
    assert.equal(parseEnvelopePath(''), '');
    assert.equal(parseEnvelopePath('<@relay.example,@b.example:user@example.org>'), 'user@example.org');
    assert.equal(parseEnvelopePath('"dave x"@example.net'), 'dave x@example.net');
    assert.equal(parseEnvelopePath('user@[192.0.2.1]'), 'user@[192.0.2.1]');
    assert.equal(parseEnvelopePath('user@example.com.'), 'user@example.com');
    for (const bad of ['bareword', '<unterminated@example.com', 'a b@example.com', '@example.com']) assert.equal(parseEnvelopePath(bad), undefined, bad);
  });

  it('splits recipient lists on commas outside quotes', () => {
    assert.deepEqual(splitAddressList('a@b.c, "x, y"@d.e,<f@g.h>'), ['a@b.c', '"x, y"@d.e', '<f@g.h>']);
    assert.deepEqual(splitAddressList('"q\\"," @x.y'), ['"q\\"," @x.y']);
  });

  it('settings parser: nested UCL, comments, arrays, booleans', () => {
    assert.deepEqual(parseSettingsValue('symbols_enabled [A, "B"]; whitelist = yes # comment\n groups_disabled = ["x"]'), {
      symbols_enabled: ['A', 'B'], whitelist: true, groups_disabled: ['x'],
    });
    assert.equal(parseSettingsValue('{"a": '), undefined);
    assert.equal(parseSettingsValue('[1,2]'), undefined);
  });
});

describe('envelope recipient cap', () => {
  it('keeps MAX_ENVELOPE_RCPT recipients of a v2 Rcpt list and a v3 metadata list, with one log line', async () => {
    const { MAX_ENVELOPE_RCPT } = await import('../../src/message/limits.js');
    const { metaFromMetadata } = await import('../../src/protocol/parse-v3.js');
    const { emptyMeta } = await import('../../src/core/scan-types.js');
    const warned: string[] = [];
    const log = { warn: (msg: string) => void warned.push(msg) };
    const list = Array.from({ length: MAX_ENVELOPE_RCPT + 500 }, (_, i) => `u${i}@example.org`);
    const v2 = parseV2Headers(headers([['Rcpt', list.slice(0, 900).join(',')], ['Rcpt', list.slice(900).join(',')]]), log);
    assert.equal(v2.rcpt.length, MAX_ENVELOPE_RCPT);
    assert.equal(v2.rcpt.at(-1), `u${MAX_ENVELOPE_RCPT - 1}@example.org`);
    assert.deepEqual(warned, ['recipients past the cap dropped']);
    const v3 = metaFromMetadata({ rcpt: Array.from({ length: 50_000 }, (_, i) => `v${i}@example.org`) }, emptyMeta(), log);
    assert.equal(v3.rcpt.length, MAX_ENVELOPE_RCPT);
    assert.equal(warned.length, 2);
  });
});
