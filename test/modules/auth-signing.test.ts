import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { createNetServices } from '../../src/net/index.js';
import type { NetServices } from '../../src/net/index.js';
import { dkimSigningModule } from '../../src/modules/dkim-signing/index.js';
import { whitelistModule } from '../../src/modules/whitelist/index.js';
import { milterHeadersModule } from '../../src/modules/milter-headers/index.js';
import { startNormalWorker } from '../../src/workers/normal.js';
import type { RunningWorker } from '../../src/workers/normal.js';
import { baseConfig } from '../engine/helpers.js';
import { run } from '../interop/run.js';
import { AUTH_MODULES, ed25519Key, message, meta, names, rsaKey, sign, symbolMap } from './auth-helpers.js';
import type { TestKey } from './auth-helpers.js';

let dns: DnsTestServer;
let net: NetServices;
let dir: string;
let rsa: TestKey;
let ed: TestKey;
let signer: Engine;
let verifier: Engine;

before(async () => {
  rsa = rsaKey();
  ed = ed25519Key();
  dir = await mkdtemp(join(tmpdir(), 'mailsift-dkim-'));
  await writeFile(join(dir, 'example.org.mail.key'), rsa.privatePem);
  await writeFile(join(dir, 'example.com.ed.key'), ed.privatePem);
  await writeFile(join(dir, 'selectors.map'), '# domain selector\nexample.com ed\n');
  dns = await startDnsServer({
    zone: {
      'mail._domainkey.example.org': [{ type: 'TXT', data: rsa.record }],
      'ed._domainkey.example.com': [{ type: 'TXT', data: ed.record }],
      'example.org': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' }],
      '_dmarc.example.org': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
      'evil.example.net': [{ type: 'TXT', data: 'v=spf1 -all' }],
      'slowauth.org': [{ type: 'TXT', data: 'v=spf1 -all' }],
      '_dmarc.slowauth.org': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
    },
  });
  dns.withheld.add('slowauth.org');
  dns.withheld.add('_dmarc.slowauth.org');
  net = createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 1 } });
  signer = await createEngine(baseConfig({
    modules: {
      dkim_signing: {
        domain: { 'example.org': { selector: 'mail', path: join(dir, 'example.org.mail.key') } },
        selector_map: join(dir, 'selectors.map'),
        path: join(dir, '$domain.$selector.key'),
        rewrite_message: true,
      },
    },
  }), [dkimSigningModule], { net });
  verifier = await createEngine(baseConfig({
    modules: {
      whitelist: { rules: { WHITELIST_DMARC: { domains: ['example.org'], valid_dmarc: true }, BLACKLIST_SPF: { domains: ['example.net'], valid_spf: true, blacklist: true } } },
      milter_headers: { use: ['authentication-results'] },
    },
  }), [...AUTH_MODULES, whitelistModule, milterHeadersModule], { net });
});

after(async () => {
  // A before() that failed half-way leaves some of these unset; close what exists.
  await net?.close();
  await dns?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('dkim_signing: authenticated mail is signed (RSA from the domain table, Ed25519 via the selector map) and verifies', async () => {
  for (const [domain, selector, algo] of [['example.org', 'mail', 'rsa-sha256'], ['example.com', 'ed', 'ed25519-sha256']] as const) {
    const msg = message(`user@${domain}`);
    const r = await signer.scan(msg, meta({ user: 'alice', ip: '203.0.113.9', from: `user@${domain}` }));
    assert.deepEqual(symbolMap(r).DKIM_SIGNED, [`${domain}:s=${selector}`]);
    assert.equal(r.dkimSignatures?.length, 1);
    assert.match(r.dkimSignatures![0]!, new RegExp(`a=${algo};.*d=${domain};`, 's'));
    assert.match(r.dkimSignatures![0]!, /;\r\n\t/, 'folded with the message newline and a tab, as Rspamd');
    assert.ok(r.rewritten?.toString().startsWith('DKIM-Signature: '), 'the rewritten message carries the signature');
    assert.ok(r.rewritten!.subarray(r.rewritten!.length - msg.length).equals(msg), 'followed by the original message');
    const v = await verifier.scan(r.rewritten!, meta({ ip: '192.0.2.10', from: `user@${domain}` }));
    assert.deepEqual(names(v, /^R_DKIM_/), ['R_DKIM_ALLOW'], `${domain}: ${JSON.stringify(symbolMap(v))}`);
  }
});

test('dkim_signing: inbound mail and unknown domains are not signed', async () => {
  const inbound = await signer.scan(message('user@example.org'), meta({ ip: '203.0.113.9', from: 'user@example.org' }));
  assert.equal(inbound.dkimSignatures, undefined);
  const unknown = await signer.scan(message('user@example.net'), meta({ user: 'alice', from: 'user@example.net' }));
  assert.equal(unknown.dkimSignatures, undefined);
  assert.equal(unknown.rewritten, undefined);
});

test('whitelist and Authentication-Results from the auth checks', async () => {
  const signed = await sign(message('user@example.org'), 'example.org', 'mail', rsa);
  const ok = await verifier.scan(signed, meta({ ip: '192.0.2.10', from: 'bounce@example.org', helo: 'mta.example.org' }));
  assert.deepEqual(names(ok, /LIST|DMARC_POLICY/), ['DMARC_POLICY_ALLOW', 'WHITELIST_DMARC']);
  assert.equal(ok.symbols.find((s) => s.name === 'WHITELIST_DMARC')?.score, -7);
  const ar = ok.milter?.add_headers?.['Authentication-Results'];
  const value = ar && !Array.isArray(ar) && typeof ar === 'object' ? ar.value : String(ar);
  assert.equal(value, 'test.local;\r\n\tdkim=pass header.d=example.org header.s=mail;\r\n\tspf=pass (test.local: domain of bounce@example.org designates 192.0.2.10 as permitted sender) smtp.mailfrom=bounce@example.org;\r\n\tdmarc=pass header.from=example.org (policy=reject)');
  // DNS timing out: the rows Rspamd 3.4 wrote in fixture b01.
  const slow = await verifier.scan(message('alice@slowauth.org'), meta({ ip: '192.0.2.10', from: 'alice@slowauth.org' }));
  const sar = slow.milter?.add_headers?.['Authentication-Results'];
  const rows = String(sar && !Array.isArray(sar) && typeof sar === 'object' ? sar.value : sar).split(';\r\n\t');
  assert.equal(rows[1], 'dkim=none');
  assert.match(rows[2] ?? '', /^spf=temperror \(test\.local: error in processing during lookup of alice@slowauth\.org[^)]*\) smtp\.mailfrom=alice@slowauth\.org$/);
  assert.equal(rows[3], 'dmarc=temperror reason="query timed out" header.from=slowauth.org (policy=temperror)');
  const bad = await verifier.scan(message('user@evil.example.net'), meta({ ip: '192.0.2.10', from: 'x@evil.example.net' }));
  assert.deepEqual(names(bad, /LIST/), ['BLACKLIST_SPF']);
});

test('the real rspamc receives the signed message (body block) and the dkim-signature field', { skip: existsSync('/usr/bin/rspamc') ? false : 'rspamc not installed' }, async () => {
  let worker: RunningWorker | undefined;
  try {
    worker = await startNormalWorker({ host: '127.0.0.1', port: 0, scanner: signer, log: { debug() {}, info() {}, warn() {}, error() {} } });
    const file = join(dir, 'out.eml');
    await writeFile(file, message('user@example.org'));
    const server = `127.0.0.1:${worker.port}`;
    const j = await run('/usr/bin/rspamc', ['-h', server, '-u', 'alice', '-j', file]);
    assert.equal(j.code, 0, j.stderr);
    // rspamc prints the reply, then the body block it received as "New body:".
    const [json, newBody] = j.stdout.split('\nNew body:\n');
    const obj = JSON.parse(json!) as Record<string, unknown>;
    assert.match(String(obj['dkim-signature']), /d=example\.org;/);
    assert.match(newBody ?? '', /^DKIM-Signature: v=1; a=rsa-sha256;[^]*\r\nFrom: Sender <user@example\.org>/);
    const m = await run('/usr/bin/rspamc', ['-h', server, '-u', 'alice', '--mime', file]);
    assert.equal(m.code, 0, m.stderr);
    assert.match(m.stdout, /DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.org;/);
  } finally {
    await worker?.close();
  }
});
