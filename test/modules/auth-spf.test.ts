import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer, Zone } from '../helpers/dns-server.js';
import { spfModule } from '../../src/modules/spf/index.js';
import { authEngine, message, meta, names, symbolMap } from './auth-helpers.js';
import type { AuthEngine } from './auth-helpers.js';

const txt = (data: string) => [{ type: 'TXT' as const, data }];

const zone: Zone = {
  'pass.example.org': txt('v=spf1 ip4:192.0.2.0/24 -all'),
  'fail.example.org': txt('v=spf1 ip4:198.51.100.1 -all'),
  'soft.example.org': txt('v=spf1 ip4:198.51.100.1 ~all'),
  'neutral.example.org': txt('v=spf1 ?all'),
  'include.example.org': txt('v=spf1 include:pass.example.org -all'),
  'mx.example.org': [...txt('v=spf1 mx -all'), { type: 'MX', data: { priority: 10, exchange: 'mail.mx.example.org' } }],
  'mail.mx.example.org': [{ type: 'A', data: '192.0.2.25' }],
  'loop.example.org': txt('v=spf1 include:loop2.example.org -all'),
  'loop2.example.org': txt('v=spf1 include:loop.example.org -all'),
  'syntax.example.org': txt('v=spf1 ip4:not-an-ip -all'),
  'norecord.example.org': [{ type: 'A', data: '192.0.2.1' }],
  'slow.example.org': txt('v=spf1 -all'),
  'helo.example.org': txt('v=spf1 ip4:192.0.2.0/24 -all'),
};
// Eleven chained includes: one more than the ten DNS-querying mechanisms RFC 7208 allows.
for (let i = 0; i < 11; i++) zone[`c${i}.example.org`] = txt(`v=spf1 include:c${i + 1}.example.org -all`);
zone['c11.example.org'] = txt('v=spf1 ip4:192.0.2.0/24 -all');

let dns: DnsTestServer;
let ae: AuthEngine;

before(async () => {
  dns = await startDnsServer({ zone });
  dns.withheld.add('slow.example.org');
  ae = await authEngine(dns.address, { taskTimeout: 2 }, [spfModule]);
});

after(async () => {
  await ae.net.close();
  await dns.close();
});

async function spfFor(domain: string, ip = '192.0.2.10', extra: Parameters<typeof meta>[0] = {}) {
  const r = await ae.engine.scan(message(`user@${domain}`), meta({ ip, from: `user@${domain}`, helo: 'mta.example.net', ...extra }));
  return { r, spf: names(r, /^R_SPF_/), map: symbolMap(r) };
}

test('SPF pass, fail, softfail, neutral, none', async () => {
  assert.deepEqual((await spfFor('pass.example.org')).spf, ['R_SPF_ALLOW']);
  assert.deepEqual((await spfFor('fail.example.org')).spf, ['R_SPF_FAIL']);
  assert.deepEqual((await spfFor('soft.example.org')).spf, ['R_SPF_SOFTFAIL']);
  assert.deepEqual((await spfFor('neutral.example.org')).spf, ['R_SPF_NEUTRAL']);
  assert.deepEqual((await spfFor('norecord.example.org')).spf, ['R_SPF_NA']);
  const p = await spfFor('pass.example.org');
  assert.deepEqual(p.map.R_SPF_ALLOW, ['pass.example.org']);
  assert.equal(p.r.symbols.find((s) => s.name === 'R_SPF_ALLOW')?.score, -0.2);
  assert.equal((await spfFor('fail.example.org')).r.symbols.find((s) => s.name === 'R_SPF_FAIL')?.score, 1);
});

test('SPF include and mx mechanisms resolve through our resolver', async () => {
  assert.deepEqual((await spfFor('include.example.org')).spf, ['R_SPF_ALLOW']);
  assert.deepEqual((await spfFor('mx.example.org', '192.0.2.25')).spf, ['R_SPF_ALLOW']);
  assert.deepEqual((await spfFor('mx.example.org', '192.0.2.26')).spf, ['R_SPF_FAIL']);
  assert.ok(dns.queries.some((q) => q.name === 'mail.mx.example.org' && q.type === 'A'));
});

test('SPF permerror: include loop, too many lookups, bad syntax', async () => {
  assert.deepEqual((await spfFor('loop.example.org')).spf, ['R_SPF_PERMFAIL']);
  const before = dns.queries.length;
  assert.deepEqual((await spfFor('c0.example.org')).spf, ['R_SPF_PERMFAIL']);
  const chain = dns.queries.slice(before).filter((q) => /^c\d+\.example\.org$/.test(q.name));
  assert.ok(chain.length <= 11, `stopped at the lookup limit, asked ${chain.length}`);
  assert.deepEqual((await spfFor('syntax.example.org')).spf, ['R_SPF_PERMFAIL']);
});

test('SPF temperror when the DNS answer is withheld', async () => {
  const t0 = Date.now();
  assert.deepEqual((await spfFor('slow.example.org')).spf, ['R_SPF_DNSFAIL']);
  assert.ok(Date.now() - t0 < 2000);
});

test('SPF: null sender checked against HELO; local and authenticated senders skipped', async () => {
  const r = await ae.engine.scan(message('x@helo.example.org'), meta({ ip: '192.0.2.10', from: '<>', helo: 'helo.example.org' }));
  assert.deepEqual(names(r, /^R_SPF_/), ['R_SPF_ALLOW']);
  assert.deepEqual((await spfFor('fail.example.org', '10.0.0.1')).spf, []);
  assert.deepEqual((await spfFor('fail.example.org', '192.0.2.10', { user: 'alice' })).spf, []);
});
