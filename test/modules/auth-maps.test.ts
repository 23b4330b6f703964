// whitelist domains and dkim_signing selectors come from maps (files through the maps
// framework): an administrator edits the file and the next scans use it without a restart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { createMapRegistry } from '../../src/maps/index.js';
import type { MapRegistry } from '../../src/maps/index.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { dkimSigningModule } from '../../src/modules/dkim-signing/index.js';
import { whitelistModule } from '../../src/modules/whitelist/index.js';
import { baseConfig } from '../engine/helpers.js';
import { AUTH_MODULES, ed25519Key, message, meta, names, symbolMap } from './auth-helpers.js';

const FILE_CHECK_MS = 100;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let dns: DnsTestServer;
let net: NetServices;
let maps: MapRegistry;
let dir: string;
let engine: Engine;

/** Scans until `ok` accepts the result or `ms` pass (a map reload is a background timer). */
async function eventually<T>(scan: () => Promise<T>, ok: (r: T) => boolean, ms = 3_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await scan();
    if (ok(r) || Date.now() > until) return r;
    await new Promise((res) => setTimeout(res, FILE_CHECK_MS));
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-auth-maps-'));
  const ed = ed25519Key();
  const ed2 = ed25519Key();
  await writeFile(join(dir, 'example.com.ed.key'), ed.privatePem);
  await writeFile(join(dir, 'example.com.ed2.key'), ed2.privatePem);
  await writeFile(join(dir, 'selectors.map'), '# domain selector\nexample.com ed\n');
  await writeFile(join(dir, 'spf-whitelist.map'), '# trusted senders\nother.example\n');
  dns = await startDnsServer({ zone: { 'example.org': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' }] } });
  net = createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 1 } });
  maps = createMapRegistry({ baseDir: dir, log: quiet, fileCheckMs: FILE_CHECK_MS });
  engine = await createEngine(baseConfig({
    modules: {
      whitelist: { rules: { WHITELIST_SPF: { domains: join(dir, 'spf-whitelist.map'), valid_spf: true } } },
      dkim_signing: { selector_map: 'selectors.map', path: join(dir, '$domain.$selector.key') },
    },
  }), [...AUTH_MODULES, whitelistModule, dkimSigningModule], { net, maps });
});

after(async () => {
  maps?.close();
  await net?.close();
  await dns?.close();
  await rm(dir, { recursive: true, force: true });
});

test('whitelist: a domain added to the map file is whitelisted after the reload', async () => {
  const scan = () => engine.scan(message('user@example.org'), meta({ ip: '192.0.2.10', from: 'user@example.org' }));
  assert.deepEqual(names(await scan(), /^WHITELIST/), [], 'example.org is not listed yet');
  await writeFile(join(dir, 'spf-whitelist.map'), '# trusted senders\nother.example\nexample.org\n');
  const after = await eventually(scan, (r) => names(r, /^WHITELIST/).length > 0);
  assert.deepEqual(symbolMap(after).WHITELIST_SPF, ['example.org']);
});

test('dkim_signing: a selector changed in the map file is used after the reload', async () => {
  const sign = () => engine.scan(message('user@example.com'), meta({ user: 'alice', ip: '203.0.113.9', from: 'user@example.com' }));
  assert.deepEqual(symbolMap(await sign()).DKIM_SIGNED, ['example.com:s=ed']);
  await writeFile(join(dir, 'selectors.map'), '# domain selector\nexample.com ed2\n');
  const after = await eventually(sign, (r) => symbolMap(r).DKIM_SIGNED?.[0] !== 'example.com:s=ed');
  assert.deepEqual(symbolMap(after).DKIM_SIGNED, ['example.com:s=ed2']);
  assert.match(after.dkimSignatures?.[0] ?? '', /s=ed2;/);
});
