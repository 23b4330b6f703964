// The rbl module against a real DNS server on loopback answering from the zone data below:
// a hit and a miss for each check type, return codes and bits, whitelists and exclusions, and
// an answer withheld (the scan still ends within its deadline; the list's _FAIL symbol shows it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer, Zone } from '../helpers/dns-server.js';
import { rblModule } from '../../src/modules/rbl/index.js';
import { dkimModule } from '../../src/modules/dkim/index.js';
import { hashKey } from '../../src/modules/rbl/hash.js';
import type { ScanMeta, ScanResult } from '../../src/plugin-api/index.js';
import { authEngine, message, meta, rsaKey, sign, symbolMap } from './auth-helpers.js';
import type { AuthEngine } from './auth-helpers.js';
import { createEngine } from '../../src/engine/index.js';
import { createNetServices } from '../../src/net/index.js';
import { baseConfig } from '../engine/helpers.js';

const A = (data: string) => [{ type: 'A' as const, data }];
const key = rsaKey();

const zone: Zone = {
  // Sender and Received IPs in Spamhaus ZEN, DNSWL, Mailspike, blocklist.de.
  '10.2.0.192.zen.spamhaus.org': A('127.0.0.2'),
  '11.2.0.192.zen.spamhaus.org': A('127.0.0.4'),
  '13.2.0.192.zen.spamhaus.org': A('127.0.0.99'),
  '20.2.0.192.zen.spamhaus.org': A('127.0.0.6'),
  '20.2.0.192.bl.blocklist.de': A('127.0.0.2'),
  '1.0.0.10.zen.spamhaus.org': A('127.0.0.2'),
  '30.2.0.192.zen.spamhaus.org': A('127.0.0.2'),
  '30.2.0.192.list.dnswl.org': A('127.0.15.3'),
  '31.2.0.192.zen.spamhaus.org': A('127.0.0.2'),
  '31.2.0.192.list.dnswl.org': A('127.0.15.1'),
  '32.2.0.192.rep.mailspike.net': A('127.0.0.11'),
  '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.zen.spamhaus.org': A('127.0.0.10'),
  '10.2.0.192.bl.mylist.example': A('127.0.0.2'),
  // HELO and rDNS names in SURBL and the DBL.
  'helo.bad.example.multi.surbl.org': A('127.0.0.8'),
  'rdns.bad.example.dbl.spamhaus.org': A('127.0.1.2'),
  // URL domains: URIBL bits, SURBL bits, DBL codes; google.com is listed but whitelisted.
  'spam-domain.com.multi.uribl.com': A('127.0.0.14'),
  'malware-site.net.multi.surbl.org': A('127.0.0.24'),
  'phish-site.org.dbl.spamhaus.org': A('127.0.1.4'),
  'google.com.multi.uribl.com': A('127.0.0.2'),
  // An IDN domain is listed in its ASCII form (bücher-spam.example).
  'xn--bcher-spam-9db.example.multi.uribl.com': A('127.0.0.2'),
  '5.113.0.203.multi.uribl.com': A('127.0.0.2'),
  // E-mail lists: hashed addresses as Rspamd sends them.
  [`${hashKey('spammer@bad-mail.com', 'sha1', 'hex')}.ebl.msbl.org`]: A('127.0.0.2'),
  [`${hashKey('spammer.bad-mail.com', 'blake2', 'base32', 32)}.email.rspamd.com`]: A('127.0.0.2'),
  [`${hashKey('phish@reply-bad.com', 'sha1', 'hex')}.ebl.msbl.org`]: A('127.0.1.2'),
  // DKIM signing domains in DNSWL's DWL.
  'dwl-listed.com.dwl.dnswl.org': A('127.0.5.2'),
  'sel._domainkey.dwl-listed.com': [{ type: 'TXT', data: key.record }],
  'sel._domainkey.other-signer.com': [{ type: 'TXT', data: key.record }],
};

let dns: DnsTestServer;
let ae: AuthEngine;

before(async () => {
  dns = await startDnsServer({ zone });
  ae = await authEngine(dns.address, { taskTimeout: 3 }, [dkimModule, rblModule]);
});

after(async () => {
  await ae.net.close();
  await dns.close();
});

const body = (text: string) => message('alice@sender.example', '', `${text}\r\n`);
const scan = (msg: Buffer, m: Partial<ScanMeta>, e = ae.engine) => e.scan(msg, meta(m));
const rbl = (r: ScanResult) => Object.fromEntries(Object.entries(symbolMap(r)).filter(([n]) => !/^R_DKIM|^DKIM_/.test(n)));
const queried = (name: string) => dns.queries.filter((q) => q.name === name).length;

test('from: sender IP hits and misses, return codes, unknown codes, IPv6', async () => {
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.10' })), { RBL_SPAMHAUS_SBL: ['192.0.2.10:from'] });
  const xbl = await scan(body('hi'), { ip: '192.0.2.11' });
  assert.deepEqual(rbl(xbl), { RBL_SPAMHAUS_XBL: ['192.0.2.11:from'] });
  assert.equal(xbl.symbols.find((s) => s.name === 'RBL_SPAMHAUS_XBL')?.score, 4);
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.13' })), { RBL_SPAMHAUS: ['192.0.2.13:from:127.0.0.99'] });
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.99' })), {});
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '2001:db8::1' })), { RBL_SPAMHAUS_PBL: ['2001:db8::1:from'] });
  assert.ok(queried('99.2.0.192.bl.spameatingmonkey.net') > 0, 'the miss was asked');
});

test('received: listed hops hit with the RECEIVED_ prefix; private hops are not asked', async () => {
  const rcvd = 'Received: from a.example ([192.0.2.20]) by mx.example with ESMTP id 1; Sun, 22 Nov 2026 03:00:00 +0000\r\n'
    + 'Received: from b.example ([10.0.0.1]) by a.example with ESMTP id 2; Sun, 22 Nov 2026 02:59:00 +0000\r\n';
  const r = await scan(message('alice@sender.example', rcvd), { ip: '192.0.2.99' });
  assert.deepEqual(rbl(r), { RECEIVED_SPAMHAUS_XBL: ['192.0.2.20:received'], RECEIVED_BLOCKLISTDE: ['192.0.2.20:received'] });
  assert.equal(queried('1.0.0.10.zen.spamhaus.org'), 0);
  const miss = 'Received: from c.example ([192.0.2.21]) by mx.example with ESMTP id 3; Sun, 22 Nov 2026 03:00:00 +0000\r\n';
  assert.deepEqual(rbl(await scan(message('alice@sender.example', miss), { ip: '192.0.2.99' })), {});
});

test('one query for an address found as sender and in Received, with both labels', async () => {
  const rcvd = 'Received: from x.example ([192.0.2.10]) by mx.example with ESMTP id 9; Sun, 22 Nov 2026 03:00:00 +0000\r\n';
  const before = queried('10.2.0.192.zen.spamhaus.org');
  ae.net.resolver.clearCache();
  const r = await scan(message('alice@sender.example', rcvd), { ip: '192.0.2.10' });
  assert.deepEqual(rbl(r), { RBL_SPAMHAUS_SBL: ['192.0.2.10:from'], RECEIVED_SPAMHAUS_SBL: ['192.0.2.10:received'] });
  assert.equal(queried('10.2.0.192.zen.spamhaus.org') - before, 1);
});

test('helo and rdns: names looked up as given', async () => {
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.99', helo: 'helo.bad.example' })), { PH_SURBL_MULTI: ['helo.bad.example:helo'] });
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.99', helo: 'helo.good.example' })), {});
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.99', hostname: 'rdns.bad.example' })), { DBL_SPAM: ['rdns.bad.example:rdns'] });
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.99', hostname: 'rdns.good.example' })), {});
  assert.equal(queried('unknown.dbl.spamhaus.org'), 0);
  await scan(body('hi'), { ip: '192.0.2.99', hostname: 'unknown' });
  assert.equal(queried('unknown.dbl.spamhaus.org'), 0);
});

test('urls: registrable domains, bit masks, codes, numeric hosts, whitelist', async () => {
  const r = await scan(body('see http://www.spam-domain.com/a and https://x.y.malware-site.net/b and http://phish-site.org/ http://203.0.113.5/ http://google.com/ http://clean-site.org/'), { ip: '192.0.2.99' });
  assert.deepEqual(rbl(r), {
    URIBL_BLACK: ['spam-domain.com:url', '5.113.0.203:url'],
    URIBL_GREY: ['spam-domain.com:url'],
    URIBL_RED: ['spam-domain.com:url'],
    MW_SURBL_MULTI: ['malware-site.net:url'],
    PH_SURBL_MULTI: ['malware-site.net:url'],
    DBL_PHISH: ['phish-site.org:url'],
  });
  assert.equal(queried('google.com.multi.uribl.com'), 0, 'whitelisted domain not asked');
  assert.equal(queried('5.113.0.203.dbl.spamhaus.org'), 0, 'the DBL takes no IP addresses (no_ip)');
  assert.ok(queried('clean-site.org.multi.uribl.com') > 0);
});

test('urls: an IDN domain is looked up in its ASCII (punycode) form, never as raw UTF-8', async () => {
  const r = await scan(body('visit http://www.bücher-spam.example/angebot today'), { ip: '192.0.2.99' });
  assert.deepEqual(rbl(r).URIBL_BLACK, ['bücher-spam.example:url']);
  assert.ok(queried('xn--bcher-spam-9db.example.dbl.spamhaus.org') > 0);
  assert.equal(dns.queries.filter((q) => /[^\x00-\x7f]/.test(q.name)).length, 0, 'no query carried a non-ASCII name');
});

test('emails and replyto: hashed address lists, grey code, domain-only lists', async () => {
  const r = await scan(body('write to spammer+tag@Bad-Mail.com now'), { ip: '192.0.2.99' });
  assert.deepEqual(rbl(r), { MSBL_EBL: ['spammer@bad-mail.com:email'], RSPAMD_EMAILBL: ['spammer.bad-mail.com:email'] });
  assert.ok(queried('bad-mail.com.multi.uribl.com') > 0, 'URL lists take the domain only');
  assert.deepEqual(rbl(await scan(body('write to someone@bad-mail.com'), { ip: '192.0.2.99' })), {});
  const rt = await scan(message('alice@sender.example', 'Reply-To: <phish@reply-bad.com>\r\n'), { ip: '192.0.2.99' });
  assert.deepEqual(rbl(rt), { MSBL_EBL_GREY: ['phish@reply-bad.com:replyto'] });
});

test('dkim: valid signatures by listed domains; forged ones are ignored', async () => {
  const listed = await sign(message('a@dwl-listed.com'), 'dwl-listed.com', 'sel', key);
  const r = await scan(listed, { ip: '192.0.2.99' });
  assert.deepEqual(rbl(r), { DWL_DNSWL_MED: ['dwl-listed.com:dkim'] });
  assert.equal(r.symbols.find((s) => s.name === 'DWL_DNSWL_MED')?.score, -2);
  const other = await sign(message('a@other-signer.com'), 'other-signer.com', 'sel', key);
  assert.deepEqual(rbl(await scan(other, { ip: '192.0.2.99' })), {});
  const forged = Buffer.from(listed.toString().replace('this is a test message', 'this is a changed message'));
  assert.deepEqual(rbl(await scan(forged, { ip: '192.0.2.99' })), {});
});

test('whitelist lists: DNSWL high trust suppresses blocklists, low trust does not', async () => {
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.30' })), { RCVD_IN_DNSWL_HI: ['192.0.2.30:from'] });
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.31' })), { RCVD_IN_DNSWL_LOW: ['192.0.2.31:from'], RBL_SPAMHAUS_SBL: ['192.0.2.31:from'] });
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.32' })), { RBL_MAILSPIKE_VERYBAD: ['192.0.2.32:from'] });
});

test('exclusions: authenticated users, private senders, local_exclude_ip_map, rule whitelist', async () => {
  const emailMsg = body('write to spammer@bad-mail.com');
  const authed = await scan(emailMsg, { ip: '192.0.2.10', user: 'alice' });
  // IP lists skip authenticated senders; e-mail lists (exclude_users: false) still run.
  assert.deepEqual(rbl(authed), { MSBL_EBL: ['spammer@bad-mail.com:email'], RSPAMD_EMAILBL: ['spammer.bad-mail.com:email'] });
  assert.deepEqual(rbl(await scan(body('hi'), { ip: '10.0.0.1' })), {});
  const custom = await authEngine(dns.address, { taskTimeout: 3, modules: { rbl: {
    local_exclude_ip_map: ['192.0.2.8/30'],
    rbls: { dnswl: { whitelist: ['192.0.2.30'] }, senderscore: { enabled: false } },
  } } }, [rblModule]);
  try {
    assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.10' }, custom.engine)), {});
    const n = queried('30.2.0.192.list.dnswl.org');
    assert.deepEqual(rbl(await scan(body('hi'), { ip: '192.0.2.30' }, custom.engine)), { RBL_SPAMHAUS_SBL: ['192.0.2.30:from'] });
    assert.equal(queried('30.2.0.192.list.dnswl.org'), n, 'whitelisted address not asked');
  } finally {
    await custom.net.close();
  }
});

test('lists switch off and on in config; a new list gets its own symbol', async () => {
  const custom = await authEngine(dns.address, { taskTimeout: 3, modules: { rbl: {
    rbls: { spamhaus: { enabled: false }, mylist: { rbl: 'bl.mylist.example', checks: ['from'] } },
  } } }, [rblModule]);
  try {
    const r = await scan(body('hi'), { ip: '192.0.2.10' }, custom.engine);
    assert.deepEqual(rbl(r), { MYLIST: ['192.0.2.10:from'] });
  } finally {
    await custom.net.close();
  }
});

test('a withheld answer: the scan ends within its deadline and the list reports _FAIL', async () => {
  dns.withheld.add('12.2.0.192.zen.spamhaus.org');
  const t0 = Date.now();
  const r = await scan(body('hi'), { ip: '192.0.2.12' });
  const took = Date.now() - t0;
  assert.ok(took < 3000, `scan took ${took} ms`);
  assert.deepEqual(rbl(r), { SPAMHAUS_FAIL: ['192.0.2.12:query timed out'] });
  assert.equal(r.symbols.find((s) => s.name === 'SPAMHAUS_FAIL')?.score, 0);
  // The module's own deadline ends the wait when the resolver would wait longer.
  const net = createNetServices({ dns: { servers: [dns.address], timeout: 3, retransmits: 0 } });
  const slow = { net, engine: await createEngine(baseConfig({ taskTimeout: 5, modules: { rbl: { timeout: 0.3 } } }), [rblModule], { net }) };
  try {
    slow.net.resolver.clearCache();
    const t1 = Date.now();
    const r2 = await scan(body('hi'), { ip: '192.0.2.12' }, slow.engine);
    assert.ok(Date.now() - t1 < 1000, 'ended by the rbl deadline, not the resolver time-out (3 s)');
    assert.deepEqual(rbl(r2), { SPAMHAUS_FAIL: ['192.0.2.12:query timed out'] });
  } finally {
    await slow.net.close();
  }
});

/** Starts a scan whose sender-IP lookup gets no answer, and reports whether `urlName` was asked while that lookup was still pending. */
async function urlAskedWhileIpPending(engine: AuthEngine['engine'], ip: string, urlDomain: string, urlName: string): Promise<boolean> {
  const ipName = `${ip.split('.').reverse().join('.')}.zen.spamhaus.org`;
  dns.withheld.add(ipName);
  const scanning = scan(body(`see http://${urlDomain}/x`), { ip }, engine);
  for (let i = 0; i < 100 && queried(ipName) === 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(queried(ipName) > 0, 'the sender IP was looked up');
  // Well inside the resolver's 0.3 s time-out: the IP lookup is still unanswered.
  await new Promise((r) => setTimeout(r, 150));
  const asked = queried(urlName) > 0;
  await scanning;
  return asked;
}

test('URL lists do not wait for the IP whitelists unless a whitelist list shares one of their checks', async () => {
  // Default lists: dnswl and mailspike vouch only for IPs (from, received), so the URL lists go
  // out with the IP lists instead of a DNS round trip after them.
  assert.equal(await urlAskedWhileIpPending(ae.engine, '192.0.2.40', 'wave-one.example', 'wave-one.example.multi.uribl.com'), true);
  // A whitelist list that also checks URLs can vouch for a URL domain: then the late lists wait.
  const custom = await authEngine(dns.address, { taskTimeout: 3, modules: { rbl: {
    rbls: { urlwl: { rbl: 'wl.example', checks: ['from', 'urls'], is_whitelist: true } },
  } } }, [dkimModule, rblModule]);
  try {
    assert.equal(await urlAskedWhileIpPending(custom.engine, '192.0.2.41', 'wave-two.example', 'wave-two.example.multi.uribl.com'), false);
    assert.ok(queried('wave-two.example.multi.uribl.com') > 0, 'asked once the whitelist answers were in');
  } finally {
    await custom.net.close();
  }
});

test('no IP given: the top Received hop stands in for the sender, as in Rspamd', async () => {
  const hop = (from: string, id: number) => `Received: from h${id}.example ([${from}]) by mx.example with ESMTP id ${id}; Sun, 22 Nov 2026 03:00:00 +0000\r\n`;
  // Handed over by a local relay: the IP lists are not asked about any hop.
  ae.net.resolver.clearCache();
  const asked = queried('20.2.0.192.zen.spamhaus.org');
  const local = await scan(message('alice@sender.example', hop('127.0.0.1', 1) + hop('192.0.2.20', 2)), {});
  assert.deepEqual(rbl(local), {});
  assert.equal(queried('20.2.0.192.zen.spamhaus.org'), asked);
  // A public top hop is checked as the sender and every public hop as received.
  const r = await scan(message('alice@sender.example', hop('192.0.2.10', 3) + hop('192.0.2.20', 4)), {});
  assert.deepEqual(rbl(r), {
    RBL_SPAMHAUS_SBL: ['192.0.2.10:from'],
    RECEIVED_SPAMHAUS_SBL: ['192.0.2.10:received'],
    RECEIVED_SPAMHAUS_XBL: ['192.0.2.20:received'],
    RECEIVED_BLOCKLISTDE: ['192.0.2.20:received'],
  });
});
