// Under the cluster supervisor, SIGHUP sent to the supervisor is forwarded to the workers, each
// reloads its certificate, and nobody exits (a SIGHUP without a handler would kill Node).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile } from 'node:fs/promises';
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

test('serve (cluster): SIGHUP to the supervisor reaches the worker, which reloads its certificate', async () => {
  const pki = await makeTestPki();
  const dir = await makeConfDir({
    'mailsift.yaml': 'workers:\n  normal:\n    bind: "127.0.0.1:0"\n    tls: { bind: "127.0.0.1:0", cert: server.crt, key: server.key, only: true }\n  controller: { enabled: false }\n',
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
    await srv.waitFor((l) => l.msg === 'TLS certificate reloaded', 'the worker to reload');
    const pids = new Set(srv.lines.filter((l) => l.msg === 'TLS certificate reloaded').map((l) => l.pid));
    assert.deepEqual(pids, new Set(listens.map((l) => l.pid)));
    assert.equal(await serverCn(port, ca), 'server-two');
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
