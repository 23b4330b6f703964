// mx_check through the real engine: MX and A records from the loopback DNS test server, a real
// TCP listener standing in for the MX's SMTP port, and the verdicts cached in the real SQLite and
// Redis key-value stores.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { createNetServices } from '../../src/net/index.js';
import { mxCheckModule } from '../../src/modules/mx-check/index.js';
import type { ScanResult } from '../../src/plugin-api/index.js';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer, Zone, ZoneRecord } from '../helpers/dns-server.js';
import { engineConfig, fixtureMessage, meta } from './helpers.js';
import { BACKENDS, type PolicyStores } from './policy-stores.js';

const A = (ip: string): ZoneRecord[] => [{ type: 'A', data: ip }];
const MX = (...hosts: Array<[number, string]>): ZoneRecord[] => hosts.map(([priority, exchange]) => ({ type: 'MX', data: { priority, exchange } }));

// 127.0.0.1 listens on the test port (a working MX); 127.0.0.2 doesn't (connection refused).
const zone: Zone = {
  'good.example': MX([10, 'mx1.good.example'], [20, 'mx2.good.example']),
  'mx1.good.example': A('127.0.0.2'),
  'mx2.good.example': A('127.0.0.1'),
  'dead.example': MX([10, 'mx.dead.example']),
  'mx.dead.example': A('127.0.0.2'),
  'nomx.example': A('127.0.0.1'),
  'nullmx.example': MX([0, '.']),
  'dangling.example': MX([10, 'gone.dangling.example']),
};

const msg = fixtureMessage('lf-simple.eml');

function mx(r: ScanResult): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of r.symbols) if (s.name.startsWith('MX_')) out[s.name] = s.options ?? [];
  return out;
}

let dns: DnsTestServer;
let smtp: net.Server;
let port: number;
let accepted = 0;

before(async () => {
  dns = await startDnsServer({ zone });
  dns.withheld.add('slow.example');
  smtp = net.createServer((s) => {
    accepted++;
    // The check hangs up without a word, as Rspamd's does: a reset is expected.
    s.on('error', () => undefined);
    s.end('220 mx ESMTP\r\n');
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  port = (smtp.address() as AddressInfo).port;
});
after(async () => {
  await dns.close();
  await new Promise((resolve) => smtp.close(resolve));
});

it('is off unless enabled', async () => {
  const e = await createEngine(engineConfig(), [mxCheckModule]);
  const r = await e.scan(msg, meta({ from: 'a@dead.example', ip: '192.0.2.1' }));
  assert.deepEqual(mx(r), {});
});

for (const [backend, open] of BACKENDS) {
  describe(`mx_check on ${backend}`, () => {
    let st: PolicyStores;
    let engine: Engine;
    before(async () => {
      st = await open('mxcheck');
      const cfg = engineConfig({ mx_check: { enabled: true, port, timeout: 0.5, exclude_domains: ['white.example'] } });
      engine = await createEngine(cfg, [mxCheckModule], { stores: st.stores, net: createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 1 } }) });
    });
    after(async () => st.cleanup());

    const scan = (from: string, patch: Record<string, string> = {}) => engine.scan(msg, meta({ from, ip: '192.0.2.1', ...patch }));
    const asked = (name: string) => dns.queries.filter((q) => q.name === name).length;

    it('a domain one of whose MX hosts answers: MX_GOOD naming it; the second scan reads the cache', async () => {
      const before = accepted;
      assert.deepEqual(mx(await scan('alice@good.example')), { MX_GOOD: ['mx2.good.example'] });
      assert.ok(accepted > before, 'the MX was really connected to');
      const queries = asked('good.example');
      assert.deepEqual(mx(await scan('bob@good.example')), { MX_GOOD: ['cached: mx2.good.example'] });
      assert.equal(asked('good.example'), queries, 'no second lookup');
    });

    it('MX hosts that refuse connections: MX_INVALID, cached', async () => {
      assert.deepEqual(mx(await scan('x@dead.example')), { MX_INVALID: [] });
      assert.deepEqual(mx(await scan('y@dead.example')), { MX_INVALID: ['cached'] });
    });

    it('no MX record: MX_MISSING, and the domain itself is tried (working here)', async () => {
      const r = mx(await scan('x@nomx.example'));
      assert.deepEqual(Object.keys(r).sort(), ['MX_GOOD', 'MX_MISSING']);
      assert.deepEqual(r['MX_GOOD'], ['nomx.example']);
      assert.deepEqual(mx(await scan('y@nomx.example')), { MX_MISSING: ['cached'], MX_GOOD: ['cached: nomx.example'] });
    });

    it('a domain that does not exist, a null MX, an MX host without address: invalid', async () => {
      const r = mx(await scan('x@nxdomain.example'));
      assert.deepEqual(Object.keys(r).sort(), ['MX_INVALID', 'MX_MISSING']);
      assert.deepEqual(mx(await scan('x@nullmx.example')), { MX_INVALID: ['null MX'] });
      assert.deepEqual(mx(await scan('x@dangling.example')), { MX_INVALID: [] });
    });

    it('a DNS time-out is no verdict and is not cached; excluded, authenticated and local senders are skipped', async () => {
      assert.deepEqual(mx(await scan('x@slow.example')), {});
      assert.deepEqual(mx(await scan('x@slow.example')), {});
      assert.ok(asked('slow.example') >= 2, 'asked again: nothing was cached');
      assert.deepEqual(mx(await scan('x@white.example')), { MX_WHITE: ['white.example'] });
      assert.deepEqual(mx(await scan('x@dead.example', { user: 'x' })), {});
      assert.deepEqual(mx(await scan('x@dead.example', { ip: '10.0.0.1' })), {});
      // Without an envelope sender the HELO's registrable domain is checked.
      assert.deepEqual(mx(await engine.scan(msg, meta({ ip: '192.0.2.1', helo: 'host7.mail.good.example' }))), { MX_GOOD: ['cached: mx2.good.example'] });
    });
  });
}

it('a store that fails is no cache: the check runs over the network', async () => {
  const st = await BACKENDS[0]![1]('mxcheck');
  const engine = await createEngine(engineConfig({ mx_check: { enabled: true, port, timeout: 0.5 } }), [mxCheckModule], {
    stores: st.stores,
    net: createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 1 } }),
  });
  const scan = () => engine.scan(msg, meta({ from: 'a@good.example', ip: '192.0.2.1' }));
  assert.deepEqual(mx(await scan()), { MX_GOOD: ['mx2.good.example'] });
  assert.deepEqual(mx(await scan()), { MX_GOOD: ['cached: mx2.good.example'] });
  await st.cleanup(); // closes the SQLite store under the engine: reads and writes now fail
  assert.deepEqual(mx(await scan()), { MX_GOOD: ['mx2.good.example'] });
});
