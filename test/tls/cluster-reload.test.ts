// Under the cluster supervisor, SIGHUP re-reads the whole configuration: the scan worker takes a
// sound one and re-reads its certificate files; one with problems is refused, and the running
// worker still re-reads them. Nobody crashes (a SIGHUP without a handler would kill Node).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli } from '../cli/run-cli.js';
import { makeTestPki } from './certs.js';

function serverCn(port: number, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      resolve(String(sock.getPeerCertificate().subject.CN));
      sock.destroy();
    });
    sock.once('error', reject);
  });
}

test('serve (cluster): SIGHUP to the supervisor brings the new certificate, on a reload or a refused one', async () => {
  const pki = await makeTestPki();
  const yaml = 'workers:\n  normal:\n    bind: "127.0.0.1:0"\n    tls: { bind: "127.0.0.1:0", cert: server.crt, key: server.key, only: true }\n  controller: { enabled: false }\n';
  const dir = await makeConfDir({
    'mailsift.yaml': yaml,
    'server.crt': await readFile(pki.server1.cert),
    'server.key': await readFile(pki.server1.key),
  });
  // One worker keeps the test quick; the supervisor forwards SIGHUP to each worker the same way.
  const srv = runCli(['serve', '--workers', '1', '-c', dir]);
  try {
    await srv.waitFor((l) => /^started 1 normal worker/.test(l.msg), 'the workers', 60_000);
    const listens = srv.lines.filter((l) => l.worker === 'normal' && /^listening with TLS on /.test(l.msg));
    assert.equal(listens.length, 1);
    assert.notEqual(listens[0]!.pid, srv.child.pid, 'the worker is a separate process');
    const port = listens[0]!.tlsPort as number;
    const ca = await readFile(pki.caCert);
    assert.equal(await serverCn(port, ca), 'server-one');

    await copyFile(pki.server2.cert, join(dir, 'server.crt'));
    await copyFile(pki.server2.key, join(dir, 'server.key'));
    srv.child.kill('SIGHUP');
    await srv.waitFor((l) => /^reloaded: /.test(l.msg), 'the reload', 60_000);
    const first = await srv.waitFor((l) => l.msg === 'TLS certificate reloaded', 'the worker to re-read its certificate');
    assert.equal(first.pid, listens[0]!.pid, 'the same worker, configured again in place');
    assert.equal(await serverCn(port, ca), 'server-two');

    // A configuration with a problem is refused, but the certificate files are still re-read.
    await copyFile(pki.server1.cert, join(dir, 'server.crt'));
    await copyFile(pki.server1.key, join(dir, 'server.key'));
    await writeFile(join(dir, 'mailsift.yaml'), `${yaml}logging: { level: loud }\n`);
    srv.child.kill('SIGHUP');
    await srv.waitFor((l) => /^reload refused: the configuration has 1 problem/.test(l.msg), 'the refusal', 60_000);
    await srv.waitFor((l) => l.msg === 'TLS certificate reloaded' && l !== first, 'the running worker to re-read its certificate');
    assert.equal(await serverCn(port, ca), 'server-one');
    assert.equal(srv.child.exitCode, null, 'the supervisor survived SIGHUP');
    assert.equal(srv.lines.some((l) => /restarting/.test(l.msg)), false, 'no worker died');

    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0, srv.output());
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
    await pki.remove();
  }
});
