// `mailsift keypair`: the printed keys are a real X25519 pair with Rspamd's key id, the YAML
// pastes into a worker section as is, and the real rspamc encrypts to the printed pubkey.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { base32Decode, base32Encode } from '../../src/core/base32.js';
import { formatKeypair, generateKeypair } from '../../src/crypto/keypair.js';
import { loadConfig } from '../../src/config/load.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { run, type RunResult } from '../interop/run.js';
import { runCli } from './run-cli.js';

const RSPAMC = '/usr/bin/rspamc';
const GTUBE = '/work/shared/fixtures/scan/messages/gtube.eml';

const cli = (args: string[]) => run(process.execPath, ['--import', 'tsx', 'src/cli/mailsift.ts', ...args]);

interface KeypairFields {
  privkey: string;
  id: string;
  pubkey: string;
  type: string;
  algorithm: string;
  encoding: string;
}

/** X25519 public key of a raw secret, computed by OpenSSL (through node:crypto), not by our code. */
function x25519Public(secret: Uint8Array): Buffer {
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), secret]);
  const jwk = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url');
}

function checkKeypair(k: KeypairFields): void {
  assert.deepEqual([k.type, k.algorithm, k.encoding], ['kex', 'curve25519', 'base32']);
  assert.equal(k.privkey.length, 52);
  assert.equal(k.pubkey.length, 52);
  const secret = base32Decode(k.privkey)!;
  const pub = base32Decode(k.pubkey)!;
  assert.equal(secret.length, 32);
  assert.equal(secret[0]! & 7, 0, 'secret stored clamped, as Rspamd does');
  assert.equal(secret[31]! & 0xc0, 0x40);
  assert.deepEqual(x25519Public(secret), Buffer.from(pub), 'pubkey belongs to privkey');
  // encryption.md §2.2: the id is BLAKE2b-512 of the public key.
  assert.equal(k.id, base32Encode(createHash('blake2b512').update(pub).digest()));
}

// Each CLI start costs seconds (tsx compiles the sources), so the runs happen once, in parallel.
let dir: string;
let yamlRun: RunResult;
let jsonRun: RunResult;
let fileRun: RunResult;

before(async () => {
  dir = await makeConfDir({});
  [yamlRun, jsonRun, fileRun] = await Promise.all([cli(['keypair']), cli(['keypair', '--json']), cli(['keypair', '-j', '-o', join(dir, 'kp.json')])]);
});
after(async () => {
  await removeConfDir(dir);
});

/** The printed YAML indented to sit under `workers.normal:`. */
function underNormal(yaml: string): string {
  return yaml.split('\n').map((l) => (l ? `    ${l}` : l)).join('\n');
}

test('keypair prints YAML that is a valid keypair and pastes into a worker section', async () => {
  assert.equal(yamlRun.code, 0, yamlRun.stderr);
  const doc = parseYaml(yamlRun.stdout) as { keypair: KeypairFields };
  checkKeypair(doc.keypair);
  const conf = await makeConfDir({ 'mailsift.yaml': `workers:\n  normal:\n${underNormal(yamlRun.stdout)}\n    encrypted_only: true\n` });
  try {
    const cfg = await loadConfig(conf);
    const kp = cfg.workers.normal.crypt?.keypair;
    assert.ok(kp, 'the pasted keypair is loaded');
    assert.equal(base32Encode(kp.publicKey), doc.keypair.pubkey);
    assert.equal(base32Encode(kp.secretKey), doc.keypair.privkey);
  } finally {
    await removeConfDir(conf);
  }
});

test('keypair --json prints the rspamadm -j layout; every run is a new key; -o writes an owner-only file once', async () => {
  for (const r of [jsonRun, fileRun]) assert.equal(r.code, 0, r.stderr);
  const out = join(dir, 'kp.json');
  const printed = (JSON.parse(jsonRun.stdout) as { keypair: KeypairFields }).keypair;
  const written = (JSON.parse(await readFile(out, 'utf8')) as { keypair: KeypairFields }).keypair;
  checkKeypair(printed);
  checkKeypair(written);
  assert.notEqual(printed.privkey, written.privkey);
  assert.notEqual(printed.privkey, (parseYaml(yamlRun.stdout) as { keypair: KeypairFields }).keypair.privkey);
  assert.equal(fileRun.stdout, '');
  assert.equal((await stat(out)).mode & 0o777, 0o600);
  const again = await cli(['keypair', '-o', out]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /exists/);
  assert.deepEqual((JSON.parse(await readFile(out, 'utf8')) as { keypair: KeypairFields }).keypair, written, 'not overwritten');
});

test('rspamc --key <printed pubkey> scans against a worker configured with the printed YAML', { skip: existsSync(RSPAMC) ? false : 'rspamc not installed' }, async () => {
  assert.equal(yamlRun.code, 0, yamlRun.stderr);
  const pubkey = (parseYaml(yamlRun.stdout) as { keypair: KeypairFields }).keypair.pubkey;
  const conf = await makeConfDir({ 'mailsift.yaml': `workers:\n  normal:\n    bind: "127.0.0.1:0"\n${underNormal(yamlRun.stdout)}\n  controller: { enabled: false }\n` });
  const srv = runCli(['serve', '--single', '-c', conf]);
  try {
    const port = (await srv.waitFor((l) => l.worker === 'normal' && typeof l.port === 'number' && /^listening on /.test(l.msg), 'the normal listener')).port!;
    const r = await run(RSPAMC, ['-h', `127.0.0.1:${port}`, '--key', pubkey, GTUBE]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Action: reject/);
    assert.match(r.stdout, /GTUBE/);
    // Encrypting to some other key: the worker cannot open it, so no verdict comes back.
    const other = formatKeypair(generateKeypair()).pubkey;
    const bad = await run(RSPAMC, ['-h', `127.0.0.1:${port}`, '--key', other, GTUBE]);
    assert.doesNotMatch(bad.stdout, /Action: reject/);
  } finally {
    srv.child.kill('SIGKILL');
    await srv.exited;
    await removeConfDir(conf);
  }
});
