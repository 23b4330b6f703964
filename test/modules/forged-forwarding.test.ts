// Envelope against headers (FORGED_SENDER, FORGED_RECIPIENTS), forwarding detection (group
// `forwarding`), the composites that neutralise both for lists and forwarders, and RDNS_NONE:
// the whole built-in module set on a loopback DNS server answering from zone data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { reverseName } from '../../src/modules/received/check.js';
import type { ScanMeta, ScanResult } from '../../src/plugin-api/index.js';
import { engineConfig, meta, names, symbol } from './helpers.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let dns: DnsTestServer;
const nets: NetServices[] = [];
let engine: Engine;

async function makeEngine(servers: string[], modules: Record<string, Record<string, unknown>> = {}): Promise<Engine> {
  const net = createNetServices({ dns: { servers, timeout: 0.3, retransmits: 0 } });
  nets.push(net);
  return createEngine(engineConfig(modules), builtinModules, { net, log: quiet });
}

before(async () => {
  dns = await startDnsServer({
    zone: {
      // The forwarder's SPF allows only its own relay.
      'fwd.example.net': [{ type: 'TXT', data: 'v=spf1 ip4:198.51.100.1 -all' }],
      '7.100.51.198.in-addr.arpa': [{ type: 'PTR', data: 'mail.example.com' }],
      // Clients the MTA names no host for: a residential pool, Yandex's forwarder.
      '30.113.0.203.in-addr.arpa': [{ type: 'PTR', data: 'pool-203-0-113-30.dyn.example.net' }],
      '31.113.0.203.in-addr.arpa': [{ type: 'PTR', data: 'forward101a.mail.yandex.net' }],
      // DBL lists the pool's name, which its `rdns` check looks up.
      'pool-203-0-113-30.dyn.example.net.dbl.spamhaus.org': [{ type: 'A', data: '127.0.1.2' }],
    },
  });
  engine = await makeEngine([dns.address]);
});

after(async () => {
  for (const n of nets) await n.close();
  await dns.close();
});

const LIST = [
  'X-Mailman-Version: 2.0.13',
  'Precedence: bulk',
  'List-Id: Developers <devel.lists.example.org>',
  'List-Post: <mailto:devel@lists.example.org>',
  'List-Subscribe: <http://lists.example.org/mailman/listinfo/devel>',
  'List-Unsubscribe: <http://lists.example.org/mailman/listinfo/devel>',
  'List-Archive: <http://lists.example.org/pipermail/devel/>',
];

function message(opts: { from?: string; to?: string; cc?: string; extra?: string[] } = {}): Buffer {
  const head = [
    'Received: from mail.example.com (mail.example.com [198.51.100.7]) by mx.example.org (Postfix) with ESMTP id 1A2B3C; Tue, 01 Aug 2023 10:00:01 +0000',
    `From: Alice <${opts.from ?? 'alice@example.com'}>`,
    `To: ${opts.to ?? 'bob@example.org'}`,
    ...(opts.cc ? [`Cc: ${opts.cc}`] : []),
    'Subject: quarterly figures',
    'Date: Tue, 01 Aug 2023 10:00:00 +0000',
    'Message-ID: <20230801100000.1@example.com>',
    ...(opts.extra ?? []),
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\nThe figures are in the shared folder as discussed.\r\n`);
}

/** An envelope whose client has a PTR name, so nothing DNS-related interferes. */
function env(patch: Partial<ScanMeta>): ScanMeta {
  return meta({ ip: '198.51.100.7', hostname: 'mail.example.com', helo: 'mail.example.com', ...patch });
}

const has = (r: ScanResult, s: string): boolean => names(r).has(s);

test('FORGED_RECIPIENTS: an envelope recipient and a To address with no counterpart on the other side', async () => {
  const r = await engine.scan(message(), env({ from: 'alice@example.com', rcpt: ['carol@other.example'] }));
  const fr = symbol(r, 'FORGED_RECIPIENTS');
  assert.ok(fr, 'FORGED_RECIPIENTS');
  assert.equal(fr.score, 2.0);
  assert.deepEqual(fr.options, ['m:bob@example.org', 's:carol@other.example']);
  assert.ok(!has(r, 'FORGED_RECIPIENTS_MAILLIST') && !has(r, 'FORGED_RECIPIENTS_FORWARDING'));
});

test('FORGED_RECIPIENTS misses: same address in any case, an alias of the same domain, a Bcc to oneself, Delivered-To', async () => {
  const cases: Array<[Buffer, Partial<ScanMeta>]> = [
    [message(), { from: 'alice@example.com', rcpt: ['Bob@Example.ORG'] }],
    [message(), { from: 'alice@example.com', rcpt: ['robert@example.org'] }],
    [message(), { from: 'alice@example.com', rcpt: ['bob@example.org', 'alice@example.com'] }],
    [message({ cc: 'dave@third.example' }), { from: 'alice@example.com', rcpt: ['bob@example.org', 'dave@third.example'] }],
    [message({ to: 'team@lists.example', extra: ['Delivered-To: team@lists.example'] }), { from: 'alice@example.com', rcpt: ['bob@example.org'] }],
  ];
  for (const [msg, m] of cases) {
    const r = await engine.scan(msg, env(m));
    assert.ok(!has(r, 'FORGED_RECIPIENTS'), JSON.stringify(m.rcpt));
  }
});

test('FORGED_SENDER: MAIL FROM is not the From address; equal in another case is not forged', async () => {
  const r = await engine.scan(message(), env({ from: 'bounces+123@mailer.example.com', rcpt: ['bob@example.org'] }));
  const fs = symbol(r, 'FORGED_SENDER');
  assert.ok(fs);
  assert.equal(fs.score, 0.3);
  assert.deepEqual(fs.options, ['alice@example.com', 'bounces+123@mailer.example.com']);
  const same = await engine.scan(message(), env({ from: 'ALICE@example.com', rcpt: ['bob@example.org'] }));
  assert.ok(!has(same, 'FORGED_SENDER'));
  // The null sender (a bounce) has no address to compare.
  const bounce = await engine.scan(message(), env({ from: '', rcpt: ['bob@example.org'] }));
  assert.ok(!has(bounce, 'FORGED_SENDER'));
});

test('no envelope, no FORGED_*: nothing to compare the headers with (as Rspamd)', async () => {
  const none = await engine.scan(message(), env({}));
  const fromOnly = await engine.scan(message(), env({ from: 'someone@else.example' }));
  for (const r of [none, fromOnly]) {
    for (const s of ['FORGED_SENDER', 'FORGED_RECIPIENTS', 'FORWARDED', 'FWD_SRS', 'FWD_GOOGLE']) assert.ok(!has(r, s), s);
  }
});

test('a mailing-list copy: FORGED_*_MAILLIST hide FORGED_RECIPIENTS and FORGED_SENDER and take their weight', async () => {
  const msg = message({ to: 'devel@lists.example.org', extra: LIST });
  const m = env({ from: 'devel-bounces@lists.example.org', rcpt: ['bob@example.org'] });
  const r = await engine.scan(msg, m);
  assert.ok(has(r, 'MAILLIST'));
  assert.ok(has(r, 'FORGED_RECIPIENTS_MAILLIST') && has(r, 'FORGED_SENDER_MAILLIST'));
  assert.ok(!has(r, 'FORGED_RECIPIENTS') && !has(r, 'FORGED_SENDER'), 'removed by the composites');
  // The same message without the list headers keeps both, and scores 2.3 more.
  const plain = await engine.scan(message({ to: 'devel@lists.example.org' }), m);
  assert.ok(has(plain, 'FORGED_RECIPIENTS') && has(plain, 'FORGED_SENDER'));
  const weight = (x: ScanResult, s: string): number => symbol(x, s)?.score ?? 0;
  assert.ok(Math.abs(plain.score - weight(plain, 'FORGED_RECIPIENTS') - weight(plain, 'FORGED_SENDER') - (r.score - weight(r, 'MAILLIST'))) < 0.01);
});

test('FORWARDED: the first Received `for` names someone else; FORGED_RECIPIENTS_FORWARDING keeps the symbol at weight 0', async () => {
  const fwdHop = 'Received: from mail.example.com (mail.example.com [198.51.100.7]) by mx.example.com (Postfix) with ESMTP id 9F8E for <alice+work@example.com>; Tue, 01 Aug 2023 10:00:01 +0000';
  const msg = message({ to: 'alice@example.com', extra: [] });
  const withHop = Buffer.concat([Buffer.from(`${fwdHop}\r\n`), msg]);
  const r = await engine.scan(withHop, env({ from: 'alice@example.com', rcpt: ['alice@home.example'] }));
  assert.deepEqual(symbol(r, 'FORWARDED')?.options, ['alice@example.com']);
  assert.equal(symbol(r, 'FORWARDED')?.score, 0);
  assert.ok(has(r, 'FORGED_RECIPIENTS_FORWARDING'));
  assert.equal(symbol(r, 'FORGED_RECIPIENTS')?.score, 0, 'remove_weight: visible, no weight');
  // Delivered to the address the hop names: not forwarded.
  const direct = await engine.scan(withHop, env({ from: 'alice@example.com', rcpt: ['alice@example.com'] }));
  assert.ok(!has(direct, 'FORWARDED'));
  // More than one envelope recipient: forwarders deliver to one.
  const many = await engine.scan(withHop, env({ from: 'alice@example.com', rcpt: ['a@home.example', 'b@home.example'] }));
  assert.ok(!has(many, 'FORWARDED'));
});

test('FWD_SRS and FWD_GOOGLE from the rewritten MAIL FROM; FORGED_SENDER_FORWARDING and SPF_FAIL_FORWARDING take the weight', async () => {
  // SRS from a forwarder whose SPF does not cover the connecting IP, over TLS (a plain-text last
  // hop would also match VIOLATED_DIRECT_SPF, whose `leave` policy keeps R_SPF_FAIL's weight).
  const tlsHop = Buffer.from('Received: from relay.example.net (relay.example.net [203.0.113.9]) by mx.example.com (Postfix) with ESMTPS id 77; Tue, 01 Aug 2023 10:00:02 +0000\r\n');
  const srs = await engine.scan(Buffer.concat([tlsHop, message({ to: 'alice@example.com' })]), meta({ ip: '203.0.113.9', hostname: 'relay.example.net', helo: 'relay.example.net', from: 'SRS0=HhH1=TT=example.com=alice@fwd.example.net', rcpt: ['alice@example.com'] }));
  assert.ok(has(srs, 'FWD_SRS'));
  assert.ok(has(srs, 'FORGED_SENDER_FORWARDING'));
  assert.equal(symbol(srs, 'FORGED_SENDER')?.score, 0);
  assert.ok(has(srs, 'R_SPF_FAIL'), 'SPF of fwd.example.net fails for 203.0.113.9');
  assert.ok(has(srs, 'SPF_FAIL_FORWARDING'));
  assert.equal(symbol(srs, 'R_SPF_FAIL')?.score, 0);
  // Not addressed to the recipient the SRS address names.
  const other = await engine.scan(message(), env({ from: 'SRS0=HhH1=TT=example.com=alice@fwd.example.net', rcpt: ['bob@example.org'] }));
  assert.ok(!has(other, 'FWD_SRS'));

  const g = await engine.scan(message({ to: 'alice@gmail.example' }), env({ from: 'alice+caf_=al=home.example@gmail.example', rcpt: ['al@home.example'] }));
  assert.deepEqual(symbol(g, 'FWD_GOOGLE')?.options, ['alice@gmail.example']);
  assert.ok(has(g, 'FORGED_RECIPIENTS_FORWARDING') && has(g, 'FORGED_SENDER_FORWARDING'));
});

test('FWD_YANDEX / FWD_MAILRU: the provider relay (by client name) and its forward header', async () => {
  const m = { from: 'alice@example.com', rcpt: ['bob@example.org'] };
  const y = await engine.scan(message({ extra: ['X-Yandex-Forward: 1a2b3c'] }), env({ ...m, hostname: 'forward5.mail.yandex.net' }));
  assert.ok(has(y, 'FWD_YANDEX'));
  const notYandex = await engine.scan(message({ extra: ['X-Yandex-Forward: 1a2b3c'] }), env(m));
  assert.ok(!has(notYandex, 'FWD_YANDEX'));
  const ru = await engine.scan(message({ extra: ['X-MailRu-Forward: 1'] }), env({ ...m, hostname: 'fwd3.mail.ru' }));
  assert.ok(has(ru, 'FWD_MAILRU'));
});

test('RDNS_NONE: a client IP with no name from the MTA (absent, `unknown` or `[ip]`) and no PTR; not with a name, a PTR or no IP', async () => {
  const msg = message();
  const m = { from: 'alice@example.com', rcpt: ['bob@example.org'] };
  const absent = await engine.scan(msg, meta({ ...m, ip: '203.0.113.9' }));
  const unknown = await engine.scan(msg, meta({ ...m, ip: '203.0.113.9', hostname: 'unknown' }));
  const bracketed = await engine.scan(msg, meta({ ...m, ip: '203.0.113.9', hostname: '[203.0.113.9]' }));
  for (const r of [absent, unknown, bracketed]) {
    assert.equal(symbol(r, 'RDNS_NONE')?.score, 1.0);
    assert.ok(!has(r, 'RDNS_DNSFAIL'), 'NXDOMAIN is an answer, not a failure');
  }
  assert.ok(!has(await engine.scan(msg, meta({ ...m, ip: '203.0.113.9', hostname: 'mx.example.net' })), 'RDNS_NONE'));
  assert.ok(!has(await engine.scan(msg, meta({ ...m, ip: '198.51.100.7' })), 'RDNS_NONE'), 'the PTR resolves');
  assert.ok(!has(await engine.scan(msg, meta(m)), 'RDNS_NONE'), 'no IP');
  assert.ok(!has(await engine.scan(msg, meta({ ...m, ip: '203.0.113.9', user: 'alice' })), 'RDNS_NONE'), 'authenticated');
  assert.ok(dns.queries.some((q) => q.name === '9.113.0.203.in-addr.arpa' && q.type === 'PTR'));
});

test('RDNS_DNSFAIL beside RDNS_NONE when the PTR lookup fails', async () => {
  dns.failing.add('10.113.0.203.in-addr.arpa');
  const r = await engine.scan(message(), meta({ ip: '203.0.113.10' }));
  assert.ok(has(r, 'RDNS_DNSFAIL') && has(r, 'RDNS_NONE'));
});

test('a PTR name once_received resolves is the client name for the rules after it: hfilter, DBL by rdns, FWD_YANDEX; one lookup', async () => {
  const m = { from: 'alice@example.com', rcpt: ['bob@example.org'], helo: 'mail.example.com' };
  const ptrQueries = (name: string): number => dns.queries.filter((q) => q.name === name && q.type === 'PTR').length;
  const before = ptrQueries('30.113.0.203.in-addr.arpa');
  const pool = await engine.scan(message(), meta({ ...m, ip: '203.0.113.30' }));
  assert.ok(!has(pool, 'RDNS_NONE'));
  assert.ok(!has(pool, 'HFILTER_HOSTNAME_UNKNOWN'), 'the name is known now');
  assert.deepEqual(symbol(pool, 'HFILTER_HOSTNAME_5')?.options, ['pool-203-0-113-30.dyn.example.net'], 'a dynamic-looking name');
  assert.deepEqual(symbol(pool, 'DBL_SPAM')?.options, ['pool-203-0-113-30.dyn.example.net:rdns']);
  assert.equal(ptrQueries('30.113.0.203.in-addr.arpa') - before, 1, 'asked once, by once_received');
  // The same client named by the MTA: no PTR lookup, the MTA's name is judged.
  const named = await engine.scan(message(), meta({ ...m, ip: '203.0.113.30', hostname: 'mail.example.com' }));
  assert.equal(ptrQueries('30.113.0.203.in-addr.arpa') - before, 1);
  assert.ok(!has(named, 'HFILTER_HOSTNAME_5') && !has(named, 'DBL_SPAM'));
  // No PTR: the name stays unknown.
  const none = await engine.scan(message(), meta({ ...m, ip: '203.0.113.9' }));
  assert.ok(has(none, 'HFILTER_HOSTNAME_UNKNOWN') && has(none, 'RDNS_NONE'));
  // Yandex's forwarder, known only by its PTR.
  const y = await engine.scan(message({ extra: ['X-Yandex-Forward: 1a2b3c'] }), meta({ ...m, ip: '203.0.113.31' }));
  assert.ok(has(y, 'FWD_YANDEX'));
  // A multimap `hostname` rule reads it too.
  const rules = { CLIENT_POOL: { type: 'hostname', map: ['pool-203-0-113-30.dyn.example.net'], score: 1 } };
  const withMap = await makeEngine([dns.address], { multimap: { rules } });
  assert.ok(has(await withMap.scan(message(), meta({ ...m, ip: '203.0.113.30' })), 'CLIENT_POOL'));
  assert.ok(!has(await withMap.scan(message(), meta({ ...m, ip: '203.0.113.9' })), 'CLIENT_POOL'));
});

test('ONCE_RECEIVED counts the hop Rspamd 3.4 adds for a client the top Received does not name', async () => {
  const hop = (ip: string): Buffer => Buffer.from(`Received: from mail.example.com (unknown [${ip}]) by mx.example.org (Postfix) with ESMTP id 1A2B3C; Tue, 01 Aug 2023 10:00:01 +0000\r\n`);
  const m = { from: 'alice@example.com', rcpt: ['bob@example.org'] };
  // message() with its one Received line replaced by `hop`.
  const body = message().toString('latin1').replace(/^Received:[^\n]*\n/, '');
  const withHop = (ip: string): Buffer => Buffer.concat([hop(ip), Buffer.from(body, 'latin1')]);
  const same = await engine.scan(withHop('203.0.113.9'), meta({ ...m, ip: '203.0.113.9' }));
  assert.ok(has(same, 'ONCE_RECEIVED') && has(same, 'RDNS_NONE'));
  const other = await engine.scan(withHop('203.0.113.99'), meta({ ...m, ip: '203.0.113.9' }));
  assert.ok(!has(other, 'ONCE_RECEIVED'), 'two hops with the client');
  assert.ok(has(other, 'RDNS_NONE'));
});

test('ENVFROM_PRVS: a BATV-tagged MAIL FROM for the From address; FORGED_SENDER_VERP_SRS drops FORGED_SENDER', async () => {
  const rcpt = ['bob@example.org'];
  for (const from of ['prvs=1234abcdef=alice@example.com', 'prvs=alice=1234abcdef@example.com', 'msprvs1=18123abcd=alice@example.com']) {
    const r = await engine.scan(message(), env({ from, rcpt }));
    assert.equal(symbol(r, 'FORGED_SENDER_VERP_SRS')?.score, 0, from);
    // The default policy removes both atoms.
    assert.ok(!has(r, 'FORGED_SENDER') && !has(r, 'ENVFROM_PRVS'), from);
  }
  // Tags come off first, as Rspamd's EMAIL_PLUS_ALIASES prefilter takes them off.
  const tagged = await engine.scan(message({ from: 'alice+news@example.com' }), env({ from: 'prvs=1234abcdef=alice+news@example.com', rcpt }));
  assert.ok(has(tagged, 'FORGED_SENDER_VERP_SRS'));
  // Another user behind the tag, and Barracuda's form (which Rspamd 3.4's captures never match).
  for (const from of ['prvs=1234abcdef=mallory@example.com', 'btv1==1234abcdef==alice@example.com']) {
    const r = await engine.scan(message(), env({ from, rcpt }));
    assert.equal(symbol(r, 'FORGED_SENDER')?.score, 0.3, from);
    assert.ok(!has(r, 'ENVFROM_PRVS') && !has(r, 'FORGED_SENDER_VERP_SRS'), from);
  }
});

test('ENVFROM_VERP: the one recipient written user=domain in MAIL FROM; not for several recipients, SRS or Google forwarding', async () => {
  const list = message({ from: 'news@lists.example.com' });
  const verp = await engine.scan(list, env({ from: 'list-bounces-bob=example.org@lists.example.com', rcpt: ['bob@example.org'] }));
  assert.ok(has(verp, 'FORGED_SENDER_VERP_SRS') && !has(verp, 'FORGED_SENDER') && !has(verp, 'ENVFROM_VERP'));
  // The recipient's own tag comes off before it is looked for.
  assert.ok(has(await engine.scan(list, env({ from: 'list-bounces-bob=example.org@lists.example.com', rcpt: ['bob+lists@example.org'] })), 'FORGED_SENDER_VERP_SRS'));
  const misses: Array<[string, string[]]> = [
    ['list-bounces-bob=example.org@lists.example.com', ['bob@example.org', 'carol@example.org']],
    // Rspamd reads the sender without its plus tag: `list-bounces`.
    ['list-bounces+bob=example.org@lists.example.com', ['bob@example.org']],
    ['srs0=bob=example.org@fwd.example.net', ['bob@example.org']],
    ['alice+caf_=bob=example.org@gmail.com', ['bob@example.org']],
  ];
  for (const [from, rcpt] of misses) {
    const r = await engine.scan(list, env({ from, rcpt }));
    assert.ok(!has(r, 'ENVFROM_VERP') && !has(r, 'FORGED_SENDER_VERP_SRS'), from);
  }
});

test('reverse names of IPv4 and IPv6 addresses', () => {
  assert.equal(reverseName('192.0.2.1'), '1.2.0.192.in-addr.arpa');
  assert.equal(reverseName('2001:db8::1'), `1.${'0.'.repeat(23)}8.b.d.0.1.0.0.2.ip6.arpa`);
  assert.equal(reverseName('not-an-ip'), undefined);
});

test('thousands of recipients on both sides: compared up to the cap (99 each, as Rspamd), answered at once', async () => {
  const to = Array.from({ length: 3000 }, (_, i) => `u${i}@to.example`).join(', ');
  // The 100th envelope recipient shares the To domain: past the cap it is never compared, so the
  // header side stays unmatched. Compared, it would excuse every To address (same domain).
  const rcpt = [...Array.from({ length: 99 }, (_, i) => `r${i}@rcpt.example`), 'u5000@to.example', ...Array.from({ length: 900 }, (_, i) => `x${i}@x.example`)];
  const t0 = Date.now();
  const r = await engine.scan(message({ to }), env({ from: 'alice@example.com', rcpt }));
  assert.ok(Date.now() - t0 < 5000);
  const opts = symbol(r, 'FORGED_RECIPIENTS')?.options ?? [];
  assert.ok(opts.includes('m:u0@to.example') && opts.includes('m:u98@to.example'));
  assert.ok(!opts.includes('m:u99@to.example'));
  const within = await engine.scan(message({ to }), env({ from: 'alice@example.com', rcpt: ['u5000@to.example', ...rcpt.slice(0, 98)] }));
  assert.ok(!has(within, 'FORGED_RECIPIENTS'));
});
