// The real rspamc (Debian's rspamd 3.4 package) with `--key` against `mailsift serve --single`
// configured with the fixture keypair on both workers: it scans through the normal worker and
// reads /stat from the controller; a wrong key fails in rspamc and the server keeps serving;
// `encrypted_only` refuses plaintext from a non-local address but not encrypted requests.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli, type LogLine, type Running } from '../cli/run-cli.js';
import { parseTextOutput, run } from '../interop/run.js';
import { base32Encode } from '../../src/core/base32.js';
import { loadKeypair } from './fixtures.js';

const RSPAMC = '/usr/bin/rspamc';
const GTUBE = '/work/shared/fixtures/scan/messages/gtube.eml';
const skip = existsSync(RSPAMC) ? false : 'rspamc not installed (apt-get install rspamd; .ci/run does)';
const NON_LOCAL = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

const server = loadKeypair('server-keypair.json');
const PUB = base32Encode(server.publicKey);
const WRONG_PUB = base32Encode(loadKeypair('wrong-keypair.json').publicKey);
const KEYPAIR = `keypair: { pubkey: ${PUB}, privkey: ${base32Encode(server.secretKey)} }`;
// The normal worker listens on every address so a non-local peer can reach it.
const CONF = [
  'workers:',
  `  normal: { bind: "${NON_LOCAL ? '0.0.0.0' : '127.0.0.1'}:0", encrypted_only: true, ${KEYPAIR} }`,
  `  controller: { bind: "127.0.0.1:0", ${KEYPAIR} }`,
  '',
].join('\n');

const isListen = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.port === 'number' && /^listening on /.test(l.msg);

let dir: string;
let srv: Running;
let normalPort: number;
let controllerPort: number;

before(async () => {
  if (skip) return;
  dir = await makeConfDir({ 'mailsift.yaml': CONF });
  srv = runCli(['serve', '--single', '-c', dir]);
  normalPort = (await srv.waitFor(isListen('normal'), 'the normal listener')).port!;
  controllerPort = (await srv.waitFor(isListen('controller'), 'the controller listener')).port!;
});
after(async () => {
  if (srv) {
    srv.child.kill('SIGTERM');
    await srv.exited;
  }
  if (dir) await removeConfDir(dir);
});

const rspamc = (host: string, port: number, args: string[]) => run(RSPAMC, ['-h', `${host}:${port}`, ...args]);

describe('rspamc --key against mailsift', { skip }, () => {
  it('scans through the normal worker', async () => {
    const r = await rspamc('127.0.0.1', normalPort, ['--key', PUB, 'symbols', GTUBE]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const v = parseTextOutput(r.stdout);
    assert.equal(v.action, 'reject');
    assert.ok(v.symbols.has('GTUBE'), r.stdout);
    assert.equal(v.messageId, 'GTUBE1.1010101@example.net');
  });

  it('-j and -z inside the envelope', async () => {
    const r = await rspamc('127.0.0.1', normalPort, ['--key', PUB, '-j', '-z', GTUBE]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((JSON.parse(r.stdout) as { action: string }).action, 'reject');
  });

  it('reads /stat from the controller', async () => {
    const r = await rspamc('127.0.0.1', controllerPort, ['--key', PUB, 'stat']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^Results for command: stat/m);
    assert.match(r.stdout, /^Messages scanned: \d+$/m);
    assert.match(r.stdout, /^Connections count: \d+$/m);
  });

  it('fails with a wrong key, and the workers keep serving', async () => {
    const n = await rspamc('127.0.0.1', normalPort, ['--key', WRONG_PUB, GTUBE]);
    assert.doesNotMatch(n.stdout, /^Action:/m, n.stdout);
    assert.match(n.stdout + n.stderr, /error/i);
    const c = await rspamc('127.0.0.1', controllerPort, ['--key', WRONG_PUB, 'stat']);
    assert.doesNotMatch(c.stdout, /Messages scanned/);
    assert.equal(srv.lines.filter((l) => l.code === 'ERR_CRYPT_UNKNOWN_KEY').length, 2, 'both refusals logged');
    const again = await rspamc('127.0.0.1', normalPort, ['--key', PUB, GTUBE]);
    assert.equal(parseTextOutput(again.stdout).action, 'reject', again.stdout);
  });

  it('encrypted_only: plaintext from loopback is served (local peer)', async () => {
    const r = await rspamc('127.0.0.1', normalPort, [GTUBE]);
    assert.equal(parseTextOutput(r.stdout).action, 'reject', r.stdout + r.stderr);
  });

  it('encrypted_only: plaintext from a non-local address is refused, encrypted is served', { skip: NON_LOCAL ? false : 'no non-loopback IPv4 address' }, async () => {
    const plain = await rspamc(NON_LOCAL!, normalPort, [GTUBE]);
    assert.doesNotMatch(plain.stdout, /^Action:/m);
    assert.match(plain.stdout + plain.stderr, /Encryption required/);
    const enc = await rspamc(NON_LOCAL!, normalPort, ['--key', PUB, GTUBE]);
    assert.equal(parseTextOutput(enc.stdout).action, 'reject', enc.stdout + enc.stderr);
  });
});
