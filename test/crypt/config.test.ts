// `workers.<name>.keypair` and `encrypted_only`: the `mailsift keypair` / `rspamadm keypair`
// fields load (base32 or hex, Rspamd's field aliases), and every unusable keypair is a config
// error naming the key path, before any worker starts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { isConfigError, type ConfigIssue } from '../../src/config/errors.js';
import { base32Encode } from '../../src/core/base32.js';
import { loadConfig, type LoadedConfig } from '../../src/config/load.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { run } from '../interop/run.js';
import { DIR, hex, loadKeypair } from './fixtures.js';

const server = loadKeypair('server-keypair.json');
const printed = (JSON.parse(readFileSync(join(DIR, 'server-keypair.json'), 'utf8')) as { keypair: Record<string, string> }).keypair;
const printedHex = (JSON.parse(readFileSync(join(DIR, 'server-keypair.hex.json'), 'utf8')) as { keypair: Record<string, string> }).keypair;

async function load(workers: Record<string, unknown>): Promise<{ cfg?: LoadedConfig; issues: readonly ConfigIssue[] }> {
  const dir = await makeConfDir({ 'mailsift.yaml': stringify({ workers }) });
  try {
    return { cfg: await loadConfig(dir), issues: [] };
  } catch (err) {
    if (isConfigError(err)) return { issues: err.issues };
    throw err;
  } finally {
    await removeConfDir(dir);
  }
}

describe('worker keypair config', () => {
  it('takes the printed keypair as is (base32 and hex), on both workers', async () => {
    const { cfg, issues } = await load({ normal: { keypair: printed, encrypted_only: true }, controller: { keypair: printedHex } });
    assert.deepEqual(issues, []);
    assert.equal(hex(cfg!.workers.normal.crypt!.keypair.secretKey), hex(server.secretKey));
    assert.equal(hex(cfg!.workers.controller.crypt!.keypair.publicKey), hex(server.publicKey));
    assert.equal(cfg!.workers.normal.crypt!.encryptedOnly, true);
    assert.equal(cfg!.workers.controller.crypt!.encryptedOnly, false);
  });

  it("accepts Rspamd's field aliases and recomputes the id", async () => {
    const { cfg, issues } = await load({ normal: { keypair: { public_key: printed.pubkey, secret_key: printed.privkey, id: 'ignored' } } });
    assert.deepEqual(issues, []);
    assert.equal(hex(cfg!.workers.normal.crypt!.keypair.id), hex(server.id));
  });

  it('no keypair: no encryption', async () => {
    const { cfg } = await load({});
    assert.equal(cfg!.workers.normal.crypt, undefined);
    assert.equal(cfg!.workers.controller.crypt, undefined);
  });

  it('refuses unusable keypairs with the key path and the reason', async () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ pubkey: printed.pubkey }, /"privkey" string/],
      [{ pubkey: printed.pubkey.toUpperCase(), privkey: printed.privkey }, /"pubkey" as 52 base32 characters/],
      [{ pubkey: printed.pubkey, privkey: printed.privkey.slice(0, 40) }, /"privkey" as 52 base32 characters/],
      [{ pubkey: printedHex.pubkey, privkey: printedHex.privkey }, /"pubkey" as 52 base32/], // hex without encoding: hex
      [{ ...printed, algorithm: 'nistp256' }, /curve25519/],
      [{ ...printed, type: 'sign' }, /type "kex"/],
    ];
    for (const [keypair, why] of bad) {
      const { issues } = await load({ normal: { keypair } });
      assert.equal(issues.length, 1, JSON.stringify(issues));
      assert.equal(issues[0]!.path, 'workers.normal.keypair');
      assert.match(issues[0]!.expected, why);
      assert.ok(issues[0]!.line, 'the issue points at a line');
    }
  });

  it('a misspelt field is an error with a suggestion', async () => {
    const { issues } = await load({ controller: { keypair: { pubkey: printed.pubkey, privkye: printed.privkey } } });
    assert.ok(issues.some((i) => i.path.startsWith('workers.controller.keypair') && /privkey/.test(i.expected)), JSON.stringify(issues));
  });

  it('`mailsift keypair` output pasted under a worker loads, and its pubkey opens the door', async () => {
    const r = await run(process.execPath, ['--import', 'tsx', 'src/cli/mailsift.ts', 'keypair']);
    assert.equal(r.code, 0, r.stderr);
    const indented = r.stdout.split('\n').map((l) => (l ? `    ${l}` : l)).join('\n');
    const dir = await makeConfDir({ 'mailsift.yaml': `workers:\n  normal:\n${indented}` });
    try {
      const cfg = await loadConfig(dir);
      const pub = /pubkey: "?([a-z0-9]{52})"?/.exec(r.stdout)![1]!;
      assert.equal(base32Encode(cfg.workers.normal.crypt!.keypair.publicKey), pub);
    } finally {
      await removeConfDir(dir);
    }
  });

  it('encrypted_only needs a keypair', async () => {
    const { issues } = await load({ normal: { encrypted_only: true } });
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.path, 'workers.normal.encrypted_only');
    assert.match(issues[0]!.expected, /a keypair/);
  });
});
