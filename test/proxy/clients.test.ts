// Real clients through the proxy in HTTP mode: Debian's rspamc (plain, `--key` with the proxy's
// own keypair, `-z`), spamc in every mode a mail setup uses (its output and exit status the same
// as against the scanner directly: -c exits 1 on GTUBE), and mailsiftc, against real scanners
// behind it.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { formatKeypair, generateKeypair } from '../../src/crypto/keypair.js';
import { parseTextOutput, run, mailsiftc } from '../interop/run.js';
import { MESSAGES, startProxy, startScanner, type TestProxy, type TestScanner } from './harness.js';

const RSPAMC = '/usr/bin/rspamc';
const SPAMC = '/usr/bin/spamc';
const noRspamc = existsSync(RSPAMC) ? false : 'rspamc not installed (apt-get install rspamd; .ci/run does)';
const noSpamc = existsSync(SPAMC) ? false : 'spamc not installed (apt-get install spamc)';

const keys = formatKeypair(generateKeypair());
let scanner: TestScanner;
let proxy: TestProxy;

before(async () => {
  scanner = await startScanner();
  proxy = await startProxy({ keypair: { pubkey: keys.pubkey, privkey: keys.privkey }, upstreams: { local: { hosts: scanner.address } } });
});
after(async () => {
  await proxy?.close();
  await scanner?.close();
});

test('rspamc through the proxy: GTUBE is a reject, ham is not', { skip: noRspamc }, async () => {
  const before = scanner.seen.length;
  const spam = await run(RSPAMC, ['-h', proxy.address, `${MESSAGES}/gtube.eml`]);
  assert.equal(spam.code, 0, spam.stdout + spam.stderr);
  const v = parseTextOutput(spam.stdout);
  assert.equal(v.action, 'reject');
  assert.ok(v.symbols.has('GTUBE'));
  const ham = await run(RSPAMC, ['-h', proxy.address, '--ip', '192.0.2.10', '--from', 'sender@example.org', `${MESSAGES}/clean.eml`]);
  assert.equal(ham.code, 0, ham.stderr);
  assert.notEqual(parseTextOutput(ham.stdout).action, 'reject');
  assert.equal(scanner.seen.length, before + 2, 'both went to the scanner');
});

test('rspamc --key: encrypted to the proxy keypair, answered sealed', { skip: noRspamc }, async () => {
  const before = scanner.seen.length;
  const r = await run(RSPAMC, ['-h', proxy.address, '--key', keys.pubkey, `${MESSAGES}/gtube.eml`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(parseTextOutput(r.stdout).action, 'reject');
  assert.equal(scanner.seen.length, before + 1);
  // A wrong key is refused by the proxy, not relayed.
  const wrong = await run(RSPAMC, ['-h', proxy.address, '--key', formatKeypair(generateKeypair()).pubkey, `${MESSAGES}/gtube.eml`]);
  assert.doesNotMatch(wrong.stdout, /Action: reject/);
  assert.equal(scanner.seen.length, before + 1);
});

test('rspamc -z: a compressed request is scanned as the message, not as zstd bytes', { skip: noRspamc }, async () => {
  const r = await run(RSPAMC, ['-h', proxy.address, '-z', `${MESSAGES}/gtube.eml`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(parseTextOutput(r.stdout).action, 'reject');
});

test('spamc -y (SYMBOLS SPAMC) through the proxy lists GTUBE', { skip: noSpamc }, async () => {
  const r = await run(SPAMC, ['-d', '127.0.0.1', '-p', String(proxy.port), '-y'], await import('node:fs/promises').then((f) => f.readFile(`${MESSAGES}/gtube.eml`)));
  assert.match(r.stdout, /GTUBE/, r.stdout + r.stderr);
});

test('spamc through the proxy prints and exits as against the scanner directly (-c, -R, -r, -y, default, --headers, -K)', { skip: noSpamc }, async () => {
  const { readFile } = await import('node:fs/promises');
  const gtube = await readFile(`${MESSAGES}/gtube.eml`);
  const ham = await readFile(`${MESSAGES}/clean.eml`);
  const spamc = (port: number, args: string[], input: Buffer) => run(SPAMC, ['-d', '127.0.0.1', '-p', String(port), ...args], input);
  const c = await spamc(proxy.port, ['-c'], gtube);
  assert.equal(c.code, 1, `spamc -c exits 1 on GTUBE: ${c.stdout}${c.stderr}`);
  assert.equal(c.stdout, '15.0/15.0\n');
  const h = await spamc(proxy.port, ['-c'], ham);
  assert.equal(h.code, 0, `spamc -c exits 0 on ham: ${h.stdout}${h.stderr}`);
  for (const args of [['-c'], ['-R'], ['-r'], ['-y'], [], ['--headers'], ['-K']]) {
    for (const [what, message] of [['GTUBE', gtube], ['ham', ham]] as const) {
      const relayed = (): number => scanner.seen.filter((r) => r.path === '/checkv2').length;
      const before = relayed();
      const viaProxy = await spamc(proxy.port, args, message);
      const label = `spamc ${args.join(' ')} on ${what}`;
      // PING is answered by the proxy itself; every other command is one /checkv2 upstream.
      assert.equal(relayed(), before + (args[0] === '-K' ? 0 : 1), `${label}: relayed as /checkv2`);
      const direct = await spamc(scanner.port, args, message);
      assert.equal(viaProxy.code, direct.code, `${label}: ${viaProxy.stderr}`);
      assert.equal(viaProxy.stdout, direct.stdout, label);
    }
  }
  const report = await spamc(proxy.port, ['-R'], gtube);
  assert.match(report.stdout, /GTUBE/);
  const processed = await spamc(proxy.port, [], gtube);
  assert.match(processed.stdout, /^X-Spam-Flag: YES\r?$/m, processed.stdout.slice(0, 400));
});

test("the README's spamc lines for the proxy work as written (port aside)", { skip: noSpamc }, async () => {
  const { readFile } = await import('node:fs/promises');
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const lines = readme.split('\n').filter((l) => l.startsWith('spamc -d 127.0.0.1 -p 11332'));
  assert.equal(lines.length, 2);
  for (const line of lines) {
    const args = line.replace(/#.*$/, '').replace('< message.eml', '').trim().split(/\s+/).slice(1);
    args[args.indexOf('-p') + 1] = String(proxy.port);
    const r = await run(SPAMC, args, await readFile(`${MESSAGES}/gtube.eml`));
    assert.equal(r.code, line.includes(' -c ') ? 1 : 0, `${line}\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout, line.includes(' -c ') ? /^15\.0\/15\.0\n$/ : /GTUBE/, line);
  }
});

test('mailsiftc --key through the proxy', async () => {
  const r = await mailsiftc(['-h', proxy.address, '--key', keys.pubkey, `${MESSAGES}/gtube.eml`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(parseTextOutput(r.stdout).action, 'reject');
});
