// `mailsift serve` with an HTTPS listener that requires client certificates, driven by real
// clients: curl for scans and refusals, a raw TLS socket for the keep-alive connection that
// must survive a certificate reload (SIGHUP).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { httpRequest, runCli, type LogLine } from '../cli/run-cli.js';
import { CA_ISSUER_RFC2253, makeTestPki } from './certs.js';

const GTUBE = '/work/shared/fixtures/scan/messages/gtube.eml';
/** Reject threshold applied by the settings rule that matches the certificate issuer. */
const TLS_CLIENT_REJECT = 1000;

function config(): string {
  return [
    'workers:',
    '  normal:',
    '    bind: "127.0.0.1:0"',
    '    count: 1',
    '    tls: { bind: "127.0.0.1:0", cert: tls/server.crt, key: tls/server.key, ca: tls/ca.crt, require_client_cert: true }',
    '  controller:',
    '    bind: "127.0.0.1:0"',
    '    tls: { bind: "127.0.0.1:0", cert: tls/server.crt, key: tls/server.key, only: true }',
    'settings:',
    '  tls_clients:',
    `    request_header: { TLS-Cert-Issuer: "^${CA_ISSUER_RFC2253}$" }`,
    `    apply: { actions: { reject: ${TLS_CLIENT_REJECT} } }`,
    '',
  ].join('\n');
}

interface CurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

function curl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '10', ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** One request on an open TLS connection; resolves with the raw reply once `pong` arrives. */
function pingOn(sock: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const onData = (c: Buffer): void => {
      data += c.toString('latin1');
      if (data.includes('pong')) {
        sock.off('data', onData);
        sock.off('close', onClose);
        resolve(data);
      }
    };
    const onClose = (): void => reject(new Error(`connection closed before the reply: ${JSON.stringify(data)}`));
    sock.on('data', onData);
    sock.once('close', onClose);
    sock.write('GET /ping HTTP/1.1\r\nHost: mailsift\r\nConnection: keep-alive\r\n\r\n');
  });
}

function openTls(port: number, files: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port, ca: files.ca, cert: files.cert, key: files.key, servername: 'localhost' }, () => resolve(sock));
    sock.once('error', reject);
  });
}

const isTlsListen = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.tlsPort === 'number' && /^listening with TLS on /.test(l.msg);
const isPlainListen = (l: LogLine) => l.worker === 'normal' && typeof l.port === 'number' && /^listening on /.test(l.msg);

test('serve: HTTPS scans with curl, client certificates required, the issuer selects settings, SIGHUP swaps the certificate', async () => {
  const pki = await makeTestPki();
  const dir = await makeConfDir({
    'mailsift.yaml': config(),
    'tls/ca.crt': await readFile(pki.caCert),
    'tls/server.crt': await readFile(pki.server1.cert),
    'tls/server.key': await readFile(pki.server1.key),
  });
  const tlsDir = join(dir, 'tls');
  const srv = runCli(['serve', '--single', '-c', dir]);
  try {
    const tlsPort = (await srv.waitFor(isTlsListen('normal'), 'the TLS listener')).tlsPort as number;
    const plainPort = (await srv.waitFor(isPlainListen, 'the plain listener')).port!;
    const controllerTls = (await srv.waitFor(isTlsListen('controller'), 'the controller TLS listener')).tlsPort as number;
    assert.equal(srv.lines.some((l) => l.worker === 'controller' && /^listening on /.test(l.msg)), false, 'tls.only: no plain controller listener');

    // The controller over HTTPS, no client certificate asked for.
    const ctl = await curl(['--cacert', pki.caCert, `https://127.0.0.1:${controllerTls}/ping`]);
    assert.equal(ctl.stdout.trim(), 'pong', ctl.stderr);
    const url = `https://127.0.0.1:${tlsPort}/checkv2`;
    const withCert = ['--cacert', pki.caCert, '--cert', pki.client.cert, '--key', pki.client.key];

    // A scan over HTTPS by curl, verifying the server against the CA.
    const scan = await curl([...withCert, '--data-binary', `@${GTUBE}`, url]);
    assert.equal(scan.code, 0, scan.stderr);
    const reply = JSON.parse(scan.stdout) as { action: string; symbols: Record<string, unknown>; required_score: number };
    assert.ok('GTUBE' in reply.symbols, scan.stdout);
    assert.equal(reply.required_score, TLS_CLIENT_REJECT, 'the settings rule keyed on TLS-Cert-Issuer applied');

    // The plain listener of the same worker: no certificate, so the rule does not apply.
    const plain = await httpRequest(plainPort, 'POST', '/checkv2', await readFile(GTUBE));
    assert.equal(plain.status, 200);
    assert.equal(JSON.parse(plain.body).required_score, 15);

    // Refused: no client certificate, and one from a CA the server does not trust.
    const noCert = await curl(['--cacert', pki.caCert, `https://127.0.0.1:${tlsPort}/ping`]);
    assert.notEqual(noCert.code, 0, 'a client without a certificate must be refused');
    assert.doesNotMatch(noCert.stdout, /pong/);
    const rogue = await curl(['--cacert', pki.caCert, '--cert', pki.rogueClient.cert, '--key', pki.rogueClient.key, `https://127.0.0.1:${tlsPort}/ping`]);
    assert.notEqual(rogue.code, 0, 'a certificate from an unknown CA must be refused');
    // And a client that does not trust our certificate gives up on its own.
    const untrusting = await curl(['--cert', pki.client.cert, '--key', pki.client.key, `https://127.0.0.1:${tlsPort}/ping`]);
    assert.notEqual(untrusting.code, 0);

    // The worker keeps serving after the refusals.
    const ping = await curl([...withCert, `https://127.0.0.1:${tlsPort}/ping`]);
    assert.equal(ping.stdout.trim(), 'pong', ping.stderr);

    // Reload: a keep-alive connection opened with the first certificate stays usable.
    const files = { ca: await readFile(pki.caCert), cert: await readFile(pki.client.cert), key: await readFile(pki.client.key) };
    const kept = await openTls(tlsPort, files);
    assert.equal(kept.getPeerCertificate().subject.CN, 'server-one');
    assert.match(await pingOn(kept), /^HTTP\/1\.1 200/);

    await copyFile(pki.server2.cert, join(tlsDir, 'server.crt'));
    await copyFile(pki.server2.key, join(tlsDir, 'server.key'));
    srv.child.kill('SIGHUP');
    await srv.waitFor((l) => l.msg === 'TLS certificate reloaded' && l.tlsPort === tlsPort, 'the reload');
    await srv.waitFor((l) => l.msg === 'TLS certificate reloaded' && l.tlsPort === controllerTls, 'the controller reload');
    const ctlConn = await openTls(controllerTls, { ...files });
    assert.equal(ctlConn.getPeerCertificate().subject.CN, 'server-two', 'the controller reloaded too');
    ctlConn.destroy();

    const fresh = await openTls(tlsPort, files);
    assert.equal(fresh.getPeerCertificate().subject.CN, 'server-two', 'new handshakes use the new certificate');
    assert.match(await pingOn(fresh), /^HTTP\/1\.1 200/);
    fresh.destroy();
    assert.match(await pingOn(kept), /^HTTP\/1\.1 200/, 'the connection opened before the reload still works');
    assert.equal(kept.getPeerCertificate().subject.CN, 'server-one');

    // A broken file on reload is logged and the previous certificate stays in use.
    await writeFile(join(tlsDir, 'server.crt'), 'not a certificate\n');
    srv.child.kill('SIGHUP');
    const failed = await srv.waitFor((l) => /^TLS certificate reload failed/.test(l.msg), 'the failed reload');
    assert.match(failed.msg, /server\.crt/);
    const after = await openTls(tlsPort, files);
    assert.equal(after.getPeerCertificate().subject.CN, 'server-two');
    assert.match(await pingOn(after), /^HTTP\/1\.1 200/);
    after.destroy();
    assert.match(await pingOn(kept), /^HTTP\/1\.1 200/);
    kept.destroy();

    srv.child.kill('SIGTERM');
    const { code } = await srv.exited;
    assert.equal(code, 0, srv.output());
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
    await pki.remove();
  }
});
