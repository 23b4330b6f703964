// Rspamd's default composites loaded by the composites module, firing on real messages scanned by
// the whole module set with a loopback DNS server answering from zone data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { parseExpression } from '../../src/rule-libs/expression/composite-expr.js';
import { DEFAULT_COMPOSITES } from '../../src/modules/composites/defaults.js';
import { engineConfig, meta, names, recordedCase, symbol } from './helpers.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let dns: DnsTestServer;
const nets: NetServices[] = [];

async function engine(modules: Record<string, Record<string, unknown>> = {}): Promise<Engine> {
  const net = createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 0 } });
  nets.push(net);
  return createEngine(engineConfig(modules), builtinModules, { net, log: quiet });
}

before(async () => {
  dns = await startDnsServer({ zone: { 'spf-fail.example.org': [{ type: 'TXT', data: 'v=spf1 ip4:198.51.100.1 -all' }] } });
});

after(async () => {
  for (const n of nets) await n.close();
  await dns.close();
});

/** The message of a recorded Rspamd exchange, its From rewritten to a domain of our zone. */
function messageFrom(domain: string): Buffer {
  const text = recordedCase('a10-flags-groups').message.toString('latin1');
  return Buffer.from(text.replace(/^From:.*$/m, `From: Sender <user@${domain}>`), 'latin1');
}

test('every default composite expression parses', () => {
  for (const [name, def] of Object.entries(DEFAULT_COMPOSITES)) assert.doesNotThrow(() => parseExpression(def.expression), name);
});

test('AUTH_NA: no SPF, DKIM, DMARC or ARC result at all', async () => {
  const r = await (await engine()).scan(messageFrom('nothing.example.org'), meta({ ip: '192.0.2.10', from: 'user@nothing.example.org' }));
  for (const n of ['R_SPF_NA', 'R_DKIM_NA', 'DMARC_NA', 'ARC_NA']) assert.ok(names(r).has(n), n);
  assert.equal(symbol(r, 'AUTH_NA')?.score, 1);
  assert.ok(!names(r).has('AUTH_NA_OR_FAIL'), 'the two are exclusive');
});

test('VIOLATED_DIRECT_SPF: SPF fails and the last hop had no TLS; AUTH_NA does not fire', async () => {
  const r = await (await engine()).scan(messageFrom('spf-fail.example.org'), meta({ ip: '192.0.2.10', from: 'user@spf-fail.example.org' }));
  assert.ok(names(r).has('R_SPF_FAIL') && names(r).has('RCVD_NO_TLS_LAST'));
  assert.equal(symbol(r, 'VIOLATED_DIRECT_SPF')?.score, 3.5);
  assert.equal(symbol(r, 'R_SPF_FAIL')?.score, 1, 'policy "leave" keeps the atom weight');
  assert.ok(!names(r).has('AUTH_NA'));
});

test('a default composite can be switched off in local.d/composites.yaml', async () => {
  const r = await (await engine({ composites: { disabled: ['VIOLATED_DIRECT_SPF'] } })).scan(
    messageFrom('spf-fail.example.org'),
    meta({ ip: '192.0.2.10', from: 'user@spf-fail.example.org' }),
  );
  assert.ok(names(r).has('R_SPF_FAIL'));
  assert.ok(!names(r).has('VIOLATED_DIRECT_SPF'));
});
