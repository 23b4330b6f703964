// A request without a client IP: the engine takes the client's address and reverse name from the
// top Received header before any rule runs, as Rspamd 3.4 does (src/engine/received-client.ts).
// Real messages through the whole built-in module set; a probe module records what rules see.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { defineModule } from '../../src/plugin-api/index.js';
import type { ScanMeta, ScanResult } from '../../src/plugin-api/index.js';
import { parseReceived } from '../../src/message/parse-received.js';
import { engineConfig, fixtureMessage, meta, names, symbol } from '../modules/helpers.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let dns: DnsTestServer;
let net: NetServices;
let engine: Engine;
let seen: ScanMeta | undefined;

/** Records the meta a filter sees; inserts nothing. */
const probe = defineModule({
  name: 'meta_probe',
  symbols: { META_PROBE: { score: 0 } },
  setup(ctx) {
    ctx.symbol({ name: 'META_PROBE', check: (t) => { seen = t.meta; } });
  },
});

before(async () => {
  dns = await startDnsServer({
    zone: {
      // The relay in the Exim-style hop has a name; the dynamic client below has none.
      '7.100.51.198.in-addr.arpa': [{ type: 'PTR', data: 'mail.example.com' }],
    },
  });
  net = createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 0 } });
  engine = await createEngine(engineConfig(), [...builtinModules, probe], { net, log: quiet });
});

after(async () => {
  await net.close();
  await dns.close();
});

/** ham.eml (a real list message) as our MX received it, with `hop` as its top Received header. */
function arrived(hop: string): Buffer {
  return Buffer.concat([Buffer.from(`Received: ${hop}\r\n`), fixtureMessage('ham.eml')]);
}

const DATE = 'Tue,  7 May 2019 21:01:20 +0000';
const POSTFIX_NAMED = `from mail.ietf.org (mail.ietf.org [4.31.198.44])\r\n\tby mx.example.org (Postfix) with ESMTPS id 4F3A21C0;\r\n\t${DATE}`;
const POSTFIX_UNKNOWN = `from dsl-203-0-113-30 (unknown [203.0.113.30])\r\n\tby mx.example.org (Postfix) with ESMTP id 4F3A21C1;\r\n\t${DATE}`;
const EXIM = `from mail.example.com ([198.51.100.7] helo=mail.example.com)\r\n\tby mx.example.org with esmtp (Exim 4.96) id 1q2w3e-0001;\r\n\t${DATE}`;
const LOCAL = `from localhost (localhost [127.0.0.1])\r\n\tby mx.example.org (Postfix) with ESMTP id 4F3A21C2;\r\n\t${DATE}`;
const NO_FROM = `by mx.example.org (Postfix, from userid 1001) id 4F3A21C3; ${DATE}`;

async function scan(message: Buffer, m: ScanMeta = meta()): Promise<{ r: ScanResult; seen: ScanMeta }> {
  seen = undefined;
  const r = await engine.scan(message, m);
  assert.ok(seen, 'the probe ran');
  return { r, seen };
}

test('Rspamd real_ip / real_hostname of a hop: the Postfix reverse name only, `unknown` is none', () => {
  const named = parseReceived(POSTFIX_NAMED);
  assert.equal(named.realIp, '4.31.198.44');
  assert.equal(named.realHostname, 'mail.ietf.org');
  const unknown = parseReceived(POSTFIX_UNKNOWN);
  assert.equal(unknown.realIp, '203.0.113.30');
  assert.equal(unknown.realHostname, undefined);
  // Exim's leading name is what it looked up, but Rspamd 3.4 reads only the address there.
  const exim = parseReceived(EXIM);
  assert.equal(exim.realIp, '198.51.100.7');
  assert.equal(exim.realHostname, undefined);
  assert.equal(exim.fromHostname, 'mail.example.com');
  // A name without a dot before the bracket is not taken (`localhost`, `unknown`).
  assert.equal(parseReceived(LOCAL).realHostname, undefined);
  assert.equal(parseReceived(LOCAL).realIp, '127.0.0.1');
  assert.equal(parseReceived('from [IPv6:2001:db8::25] (mx.example.net [IPv6:2001:db8::25]) by mx.example.org with ESMTP id 1; ' + DATE).realHostname, 'mx.example.net');
  assert.equal(parseReceived('from [IPv6:2001:db8::25] (mx.example.net [IPv6:2001:db8::25]) by mx.example.org with ESMTP id 1; ' + DATE).realIp, '2001:db8::25');
  // Only the first comment is read: an address in a later one is not Rspamd's real_ip.
  assert.equal(parseReceived(`from box (HELO box) (198.51.100.9) by mx.example.org with SMTP; ${DATE}`).realIp, undefined);
  assert.equal(parseReceived(NO_FROM).realIp, undefined);
  // Without a comment: the first word and a bracketed address right after it (fetchmail's hop).
  const fetched = parseReceived(`from phobos [127.0.0.1] by localhost with IMAP (fetchmail-5.9.0); ${DATE}`);
  assert.equal(fetched.realIp, '127.0.0.1');
  assert.equal(fetched.realHostname, 'phobos');
});

test('no IP: the top hop with a reverse name gives address and name; no HFILTER_HOSTNAME_UNKNOWN', async () => {
  const { r, seen: m } = await scan(arrived(POSTFIX_NAMED));
  assert.equal(m.ip, '4.31.198.44');
  assert.equal(m.hostname, 'mail.ietf.org');
  assert.equal(m.noIp, true);
  assert.ok(!names(r).has('HFILTER_HOSTNAME_UNKNOWN'));
  // The hop is the client's own: no artificial hop is counted in front of it.
  assert.deepEqual(symbol(r, 'RCVD_COUNT_THREE')?.options, ['4']);
});

test('no IP, top hop without a reverse name (`unknown`): address only; the name is unknown, PTR asked', async () => {
  const { r, seen: m } = await scan(arrived(POSTFIX_UNKNOWN));
  assert.equal(m.ip, '203.0.113.30');
  assert.equal(m.hostname, undefined);
  assert.ok(names(r).has('HFILTER_HOSTNAME_UNKNOWN'));
  // once_received asked for the PTR of the Received address and found none.
  assert.ok(names(r).has('RDNS_NONE'));
});

test('no IP, Exim-style top hop: the address, not the name (as Rspamd 3.4); the PTR found becomes the name', async () => {
  const { r, seen: m } = await scan(arrived(EXIM));
  assert.equal(m.ip, '198.51.100.7');
  // once_received resolved the address and set the name for the rules after it (hfilter waits for it).
  assert.ok(!names(r).has('HFILTER_HOSTNAME_UNKNOWN'));
  assert.ok(!names(r).has('RDNS_NONE'));
});

test('no IP, a local relay on top: 127.0.0.1 is the client and the rules that skip local clients skip', async () => {
  const { r, seen: m } = await scan(arrived(LOCAL));
  assert.equal(m.ip, '127.0.0.1');
  assert.equal(m.hostname, undefined);
  assert.ok(!names(r).has('HFILTER_HOSTNAME_UNKNOWN'));
  assert.ok(!names(r).has('RDNS_NONE'));
});

test('no IP and a top hop with no address: nothing is taken, the host name stays unknown', async () => {
  const { r, seen: m } = await scan(arrived(NO_FROM));
  assert.equal(m.ip, undefined);
  assert.equal(m.noIp, true);
  assert.ok(names(r).has('HFILTER_HOSTNAME_UNKNOWN'));
});

test('an IP in the request wins: the Received chain is not read for it, the hop is counted in front', async () => {
  const { r, seen: m } = await scan(arrived(POSTFIX_NAMED), meta({ ip: '192.0.2.10' }));
  assert.equal(m.ip, '192.0.2.10');
  assert.equal(m.hostname, undefined);
  assert.equal(m.noIp, undefined);
  assert.ok(names(r).has('HFILTER_HOSTNAME_UNKNOWN'));
  assert.deepEqual(symbol(r, 'RCVD_COUNT_FIVE')?.options, ['5']);
});

test('a Hostname without an IP is replaced only by a reverse name the top hop records', async () => {
  assert.equal((await scan(arrived(POSTFIX_UNKNOWN), meta({ hostname: 'given.example.net' }))).seen.hostname, 'given.example.net');
  assert.equal((await scan(arrived(POSTFIX_NAMED), meta({ hostname: 'given.example.net' }))).seen.hostname, 'mail.ietf.org');
});

test('settings rules on `ip` match the address read from Received', async () => {
  const rules = [{ id: 'relay_net', priority: 1, apply: { actions: { reject: 50 } }, conditions: { ip: ['4.31.198.0/24'] } }];
  const e = await createEngine({ ...engineConfig(), settings: rules }, builtinModules, { net, log: quiet });
  assert.equal((await e.scan(arrived(POSTFIX_NAMED), meta())).requiredScore, 50);
  assert.equal((await e.scan(arrived(POSTFIX_UNKNOWN), meta())).requiredScore, 15);
});
