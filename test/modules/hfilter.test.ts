import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer, Zone } from '../helpers/dns-server.js';
import { hfilterModule } from '../../src/modules/hfilter/index.js';
import { isFqdn, maxWeight, HOST_PATTERNS } from '../../src/modules/hfilter/patterns.js';
import { authEngine, message, meta, names, symbolMap } from './auth-helpers.js';
import type { AuthEngine } from './auth-helpers.js';
import { fixtureMessage, metaFromRecorded, recordedCase, testMessage } from './helpers.js';

const zone: Zone = {
  'mail.example.org': [{ type: 'A', data: '192.0.2.10' }],
  // Resolves on the Internet, as it did when capture a04 was recorded.
  'example.com': [{ type: 'A', data: '192.0.2.80' }],
  'example.org': [{ type: 'MX', data: { priority: 10, exchange: 'mail.example.org' } }],
  // A domain with an MX whose host has no address at all.
  'brokenmx.example.org': [{ type: 'MX', data: { priority: 10, exchange: 'nowhere.example.org' } }],
};

let dns: DnsTestServer;
let ae: AuthEngine;

before(async () => {
  dns = await startDnsServer({ zone });
  ae = await authEngine(dns.address, { taskTimeout: 3 }, [hfilterModule]);
});

after(async () => {
  await ae.net.close();
  await dns.close();
});

const HF = /^HFILTER_/;

async function hf(patch: Parameters<typeof meta>[0], msg = message('user@example.org')) {
  const r = await ae.engine.scan(msg, meta({ from: 'user@example.org', ...patch }));
  return { list: names(r, HF), map: symbolMap(r), r };
}

test('HELO classes: bad IP, bare IP, no dot, dynamic-looking names', async () => {
  const base = { ip: '192.0.2.10', hostname: 'mail.example.org' };
  assert.deepEqual((await hf({ ...base, helo: '[192.168.1.5]' })).list, ['HFILTER_HELO_BADIP']);
  assert.deepEqual((await hf({ ...base, helo: '[8.8.4.4]' })).list, ['HFILTER_HELO_BAREIP']);
  assert.deepEqual((await hf({ ...base, helo: 'DESKTOP-PC' })).list, ['HFILTER_HELO_5']);
  assert.deepEqual((await hf({ ...base, helo: 'host.lan' })).list, ['HFILTER_HELO_5']);
  assert.deepEqual((await hf({ ...base, helo: 'adsl-12-34.example.net' })).list, ['HFILTER_HELO_4']);
  // rspamc's own default HELO says nothing about the client.
  assert.deepEqual((await hf({ ...base, helo: 'rspamc.local' })).list, []);
});

test('HELO of a proper host that resolves to the client: nothing; that does not resolve: IP_A and NORES', async () => {
  const base = { ip: '192.0.2.10', hostname: 'mail.example.org' };
  assert.deepEqual((await hf({ ...base, helo: 'mail.example.org' })).list, []);
  const miss = await hf({ ...base, helo: 'ghost.example.org' });
  assert.deepEqual(miss.list, ['HFILTER_HELO_IP_A', 'HFILTER_HELO_NORES_A_OR_MX']);
  assert.deepEqual(miss.map['HFILTER_HELO_NORES_A_OR_MX'], ['ghost.example.org']);
  const badMx = await hf({ ...base, helo: 'brokenmx.example.org' });
  assert.deepEqual(badMx.list, ['HFILTER_HELO_IP_A', 'HFILTER_HELO_NORESOLVE_MX']);
});

test('a host whose lookups fail (SERVFAIL, time-out) is not judged: DNS trouble is no evidence against the message', async () => {
  const base = { ip: '192.0.2.10', hostname: 'mail.example.org' };
  dns.failing.add('broken.example.org');
  dns.withheld.add('silent.example.org');
  try {
    assert.deepEqual((await hf({ ...base, helo: 'broken.example.org' })).list, []);
    assert.deepEqual((await hf({ ...base, helo: 'silent.example.org' })).list, []);
    const nores = await ae.engine.scan(message('user@broken.example.org'), meta({ ...base, from: 'user@broken.example.org' }));
    assert.deepEqual(names(nores, HF), []);
  } finally {
    dns.failing.delete('broken.example.org');
    dns.withheld.delete('silent.example.org');
  }
});

test('client host name: unknown or absent, dynamic-looking, or fine', async () => {
  assert.deepEqual((await hf({ ip: '192.0.2.10' })).list, ['HFILTER_HOSTNAME_UNKNOWN']);
  assert.deepEqual((await hf({ ip: '192.0.2.10', hostname: 'unknown' })).list, ['HFILTER_HOSTNAME_UNKNOWN']);
  assert.deepEqual((await hf({ ip: '192.0.2.10', hostname: 'dhcp-77-12.pool.example.net' })).list, ['HFILTER_HOSTNAME_5']);
  assert.deepEqual((await hf({ ip: '192.0.2.10', hostname: 'mail.example.org' })).list, []);
  // The HELO weight wins over a lower host-name weight.
  assert.deepEqual((await hf({ ip: '192.0.2.10', hostname: 'host-5.example.net', helo: 'PC' })).list, ['HFILTER_HELO_5']);
});

test('sender domain: not FQDN, unresolvable, bounce to many recipients', async () => {
  const base = { ip: '192.0.2.10', hostname: 'mail.example.org' };
  const local = await ae.engine.scan(message('user@localhost'), meta({ ...base, from: 'user@localhost' }));
  assert.deepEqual(names(local, HF), ['HFILTER_FROMHOST_NOT_FQDN']);
  const nores = await ae.engine.scan(message('user@nxdomain.example.org'), meta({ ...base, from: 'user@nxdomain.example.org' }));
  assert.deepEqual(names(nores, HF), ['HFILTER_FROMHOST_NORES_A_OR_MX']);
  const bounce = await ae.engine.scan(message('mailer@example.org'), meta({ ...base, helo: 'mail.example.org', rcpt: ['a@example.net', 'b@example.net'] }));
  assert.deepEqual(names(bounce, HF), ['HFILTER_FROM_BOUNCE', 'HFILTER_RCPT_BOUNCEMOREONE']);
});

test('authenticated and local senders are not judged; check_authed turns that off', async () => {
  assert.deepEqual((await hf({ ip: '192.0.2.10', helo: 'PC', user: 'alice' })).list, []);
  assert.deepEqual((await hf({ ip: '10.1.2.3', helo: 'PC' })).list, []);
  const strict = await authEngine(dns.address, { modules: { hfilter: { check_authed: true, check_local: true } } }, [hfilterModule]);
  try {
    const r = await strict.engine.scan(message('user@example.org'), meta({ ip: '10.1.2.3', helo: 'PC', user: 'alice', hostname: 'mail.example.org', from: 'user@example.org' }));
    assert.deepEqual(names(r, HF), ['HFILTER_HELO_5']);
  } finally {
    await strict.net.close();
  }
});

test('link-only bodies: HFILTER_URL_ONLY scaled by the link share, URL_ONELINE on one line', async () => {
  const meta0 = { ip: '192.0.2.10', hostname: 'mail.example.org' };
  const one = await hf(meta0, testMessage('url8.eml'));
  assert.deepEqual(one.list, ['HFILTER_URL_ONELINE', 'HFILTER_URL_ONLY']);
  assert.ok(Math.abs((one.r.symbols.find((s) => s.name === 'HFILTER_URL_ONLY')?.score ?? 0) - 2.2) < 1e-9);
  const prose = await hf(meta0, fixtureMessage('ham.eml'));
  assert.ok(!prose.list.includes('HFILTER_URL_ONLY'));
});

test('Rspamd 3.4 capture a04: bracketed IPv6 HELO literal is HELO_5, no Hostname is UNKNOWN', async () => {
  const c = recordedCase('a04-envelope-variants');
  const r = await ae.engine.scan(c.message, metaFromRecorded(c));
  const want = Object.keys(c.symbols).filter((n) => HF.test(n)).sort();
  assert.deepEqual(want, ['HFILTER_HELO_5', 'HFILTER_HOSTNAME_UNKNOWN']);
  assert.deepEqual(names(r, HF), want);
});

test('pattern helpers', () => {
  assert.equal(isFqdn('mail.example.org'), true);
  assert.equal(isFqdn('-bad.example.org'), false);
  assert.equal(isFqdn('localhost'), false);
  assert.equal(maxWeight('ppp-1-2-3-4.dyn.example.net', HOST_PATTERNS), 5);
  assert.equal(maxWeight('mx1.example.net', HOST_PATTERNS), 0);
  assert.equal(maxWeight('customer-12.example.net', HOST_PATTERNS), 1);
});
