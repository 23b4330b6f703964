import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer, Zone } from '../helpers/dns-server.js';
import { parseDmarcRecord } from '../../src/modules/dmarc/record.js';
import { authEngine, message, meta, names, rsaKey, sign, symbolMap } from './auth-helpers.js';
import type { AuthEngine, TestKey } from './auth-helpers.js';

let dns: DnsTestServer;
let ae: AuthEngine;
let key: TestKey;

const txt = (data: string) => [{ type: 'TXT' as const, data }];
// Every domain lets 192.0.2.0/24 send (SPF pass) and signs with selector `sel`.
const DOMAINS = ['none.org', 'quar.org', 'rej.org', 'sub.org', 'pct0.org', 'pct100.org', 'strict.org', 'bad.org', 'nodmarc.org', 'slow.org'];

before(async () => {
  key = rsaKey();
  const zone: Zone = {};
  for (const d of DOMAINS) {
    zone[d] = txt('v=spf1 ip4:192.0.2.0/24 -all');
    zone[`sel._domainkey.${d}`] = txt(key.record);
  }
  zone['mail.sub.org'] = txt('v=spf1 ip4:192.0.2.0/24 -all');
  zone['sel._domainkey.mail.strict.org'] = txt(key.record);
  Object.assign(zone, {
    '_dmarc.none.org': txt('v=DMARC1; p=none'),
    '_dmarc.quar.org': txt('v=DMARC1; p=quarantine'),
    '_dmarc.rej.org': txt('v=DMARC1; p=reject; rua=mailto:d@rej.org'),
    '_dmarc.sub.org': txt('v=DMARC1; p=none; sp=reject'),
    '_dmarc.pct0.org': txt('v=DMARC1; p=reject; pct=0'),
    '_dmarc.pct100.org': txt('v=DMARC1; p=reject; pct=100'),
    '_dmarc.strict.org': txt('v=DMARC1; p=reject; adkim=s; aspf=s'),
    '_dmarc.bad.org': txt('v=DMARC1; p=bogus'),
    '_dmarc.slow.org': txt('v=DMARC1; p=reject'),
  });
  dns = await startDnsServer({ zone });
  dns.withheld.add('_dmarc.slow.org');
  ae = await authEngine(dns.address, { taskTimeout: 2 });
});

after(async () => {
  await ae.net.close();
  await dns.close();
});

/** From `fromDomain`; SPF checked for `mailFrom` at `ip`; DKIM-signed by `dkimDomain` if given. */
async function dmarc(fromDomain: string, opts: { mailFrom?: string; ip?: string; dkim?: string } = {}) {
  let msg = message(`user@${fromDomain}`);
  if (opts.dkim) msg = await sign(msg, opts.dkim, 'sel', key);
  const r = await ae.engine.scan(msg, meta({ ip: opts.ip ?? '192.0.2.10', from: `bounce@${opts.mailFrom ?? fromDomain}`, helo: 'mta.example.net' }));
  return { names: names(r, /^DMARC_/), map: symbolMap(r), r };
}

test('DMARC pass through aligned SPF or aligned DKIM', async () => {
  assert.deepEqual((await dmarc('rej.org')).names, ['DMARC_POLICY_ALLOW']);
  const viaDkim = await dmarc('rej.org', { ip: '203.0.113.5', dkim: 'rej.org' });
  // SPF failed but DKIM aligned: allowed, with failures noted.
  assert.deepEqual(viaDkim.names, ['DMARC_POLICY_ALLOW_WITH_FAILURES']);
  assert.deepEqual(viaDkim.map.DMARC_POLICY_ALLOW_WITH_FAILURES, ['rej.org', 'reject']);
});

test('DMARC failure by policy: none, quarantine, reject', async () => {
  const off = { ip: '203.0.113.5' };
  const none = await dmarc('none.org', off);
  assert.deepEqual(none.names, ['DMARC_POLICY_SOFTFAIL']);
  assert.deepEqual(none.map.DMARC_POLICY_SOFTFAIL, ['none.org', 'none']);
  assert.deepEqual((await dmarc('quar.org', off)).names, ['DMARC_POLICY_QUARANTINE']);
  const rej = await dmarc('rej.org', off);
  assert.deepEqual(rej.names, ['DMARC_POLICY_REJECT']);
  assert.equal(rej.r.symbols.find((s) => s.name === 'DMARC_POLICY_REJECT')?.score, 2);
  // SPF passes for an unaligned MAIL FROM domain, DKIM signs for another domain: still a failure.
  assert.deepEqual((await dmarc('rej.org', { mailFrom: 'quar.org', dkim: 'none.org' })).names, ['DMARC_POLICY_REJECT']);
});

test('DMARC subdomain takes sp from the organisational record; relaxed alignment accepts the parent', async () => {
  const subFail = await dmarc('news.sub.org', { ip: '203.0.113.5' });
  assert.deepEqual(subFail.names, ['DMARC_POLICY_REJECT']);
  assert.deepEqual(subFail.map.DMARC_POLICY_REJECT, ['sub.org', 'reject']);
  assert.ok(dns.queries.some((q) => q.name === '_dmarc.news.sub.org'), 'asked the From domain first');
  // MAIL FROM mail.sub.org passes SPF and is relaxed-aligned with news.sub.org.
  assert.deepEqual((await dmarc('news.sub.org', { mailFrom: 'mail.sub.org' })).names, ['DMARC_POLICY_ALLOW']);
});

test('DMARC strict alignment needs identical domains', async () => {
  assert.deepEqual((await dmarc('strict.org', { ip: '203.0.113.5', dkim: 'mail.strict.org' })).names, ['DMARC_POLICY_REJECT']);
  assert.deepEqual((await dmarc('strict.org', { ip: '203.0.113.5', dkim: 'strict.org' })).names, ['DMARC_POLICY_ALLOW_WITH_FAILURES']);
});

test('DMARC pct: 0 samples every failure out, 100 applies the policy', async () => {
  for (let i = 0; i < 5; i++) {
    const r = await dmarc('pct0.org', { ip: '203.0.113.5' });
    assert.deepEqual(r.names, ['DMARC_POLICY_SOFTFAIL']);
    assert.deepEqual(r.map.DMARC_POLICY_SOFTFAIL, ['pct0.org', 'sampled_out']);
    assert.deepEqual((await dmarc('pct100.org', { ip: '203.0.113.5' })).names, ['DMARC_POLICY_REJECT']);
  }
});

test('DMARC no record, bad policy, DNS failure', async () => {
  assert.deepEqual((await dmarc('nodmarc.org')).names, ['DMARC_NA']);
  assert.deepEqual((await dmarc('bad.org')).names, ['DMARC_BAD_POLICY']);
  assert.deepEqual((await dmarc('slow.org')).names, ['DMARC_DNSFAIL']);
});

test('DMARC record grammar', () => {
  const r = parseDmarcRecord('v=DMARC1; p=Quarantine; sp=reject; pct=25; adkim=s');
  assert.ok(r.ok);
  assert.deepEqual(r.ok && { p: r.record.p, sp: r.record.sp, pct: r.record.pct, adkim: r.record.adkim, aspf: r.record.aspf }, { p: 'quarantine', sp: 'reject', pct: 25, adkim: 's', aspf: 'r' });
  assert.equal(parseDmarcRecord('v=DMARC1; p=none; pct=101').ok, false);
  assert.equal(parseDmarcRecord('v=DMARC1; rua=mailto:x@y').ok, false);
});

test('DMARC asks for the policy (own and organisational domain at once) while SPF is still waiting for its answer', async () => {
  dns.withheld.add('spfwait.org');
  const asked = (name: string) => dns.queries.some((q) => q.name === name);
  const scanning = dmarc('news.spfwait.org', { mailFrom: 'spfwait.org' });
  for (let i = 0; i < 100 && !asked('spfwait.org'); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(asked('spfwait.org'), 'SPF asked for its record');
  // Well inside the resolver's 0.3 s time-out: SPF's lookup is still unanswered.
  await new Promise((r) => setTimeout(r, 150));
  assert.ok(asked('_dmarc.news.spfwait.org'), 'own policy asked before SPF finished');
  assert.ok(asked('_dmarc.spfwait.org'), 'organisational policy asked with it');
  const { names: got } = await scanning;
  assert.deepEqual(got, ['DMARC_NA']);
});
