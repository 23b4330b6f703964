// The `workers.<name>.tls` section: defaults, resolved paths, and the config errors an
// administrator sees for a missing CA, an unreadable file or a key that does not fit.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isConfigError, type ConfigIssue } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { makeTestPki, type TestPki } from './certs.js';

let pki: TestPki;
let pem: { cert: Buffer; key: Buffer; otherKey: Buffer };
before(async () => {
  pki = await makeTestPki();
  pem = { cert: await readFile(pki.server1.cert), key: await readFile(pki.server1.key), otherKey: await readFile(pki.server2.key) };
});
after(() => pki?.remove());

async function issuesOf(files: Record<string, string | Buffer>): Promise<readonly ConfigIssue[]> {
  const dir = await makeConfDir(files);
  try {
    await loadConfig(dir);
    return [];
  } catch (err) {
    if (isConfigError(err)) return err.issues;
    throw err;
  } finally {
    await removeConfDir(dir);
  }
}

test('tls section: paths resolve against the config directory, defaults apply', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': 'workers:\n  normal:\n    tls: { bind: "*:11335", cert: tls/a.crt, key: tls/a.key }\n',
    'tls/a.crt': pem.cert,
    'tls/a.key': pem.key,
  });
  try {
    const cfg = await loadConfig(dir);
    assert.deepEqual(cfg.workers.normal.tls, {
      host: '0.0.0.0',
      port: 11335,
      certFile: join(dir, 'tls/a.crt'),
      keyFile: join(dir, 'tls/a.key'),
      requireClientCert: false,
      only: false,
    });
    assert.equal(cfg.workers.controller.tls, undefined);
  } finally {
    await removeConfDir(dir);
  }
});

test('require_client_cert without a CA file is a config error on workers.<name>.tls.ca', async () => {
  const issues = await issuesOf({
    'mailsift.yaml': 'workers:\n  controller:\n    tls: { bind: "127.0.0.1:11336", cert: c.pem, key: k.pem, require_client_cert: true }\n',
    'c.pem': pem.cert,
    'k.pem': pem.key,
  });
  assert.equal(issues.length, 1, JSON.stringify(issues));
  assert.equal(issues[0]!.path, 'workers.controller.tls.ca');
  assert.match(issues[0]!.expected, /CA file/);
});

test('missing or unreadable files are listed with their key and path; a bad bind and unknown keys too', async () => {
  const issues = await issuesOf({ 'mailsift.yaml': 'workers:\n  normal:\n    tls: { bind: "127.0.0.1:11335", cert: nope.crt, key: nope.key, ca: "." }\n' });
  const byPath = new Map(issues.map((i) => [i.path, i]));
  assert.match(byPath.get('workers.normal.tls.cert')?.found ?? '', /no such file.*nope\.crt/);
  assert.match(byPath.get('workers.normal.tls.key')?.found ?? '', /no such file.*nope\.key/);
  assert.match(byPath.get('workers.normal.tls.ca')?.found ?? '', /not a file/);
  const more = await issuesOf({ 'mailsift.yaml': 'workers:\n  normal:\n    tls: { bind: "nowhere", cert: a, key: b, requre_client_cert: true }\n' });
  assert.ok(more.some((i) => i.path === 'workers.normal.tls.bind' && /host:port/.test(i.expected)), JSON.stringify(more));
  assert.ok(more.some((i) => i.path.startsWith('workers.normal.tls') && /require_client_cert/.test(i.expected)), JSON.stringify(more));
});

test('a key that does not belong to the certificate is a config error naming both files', async () => {
  const issues = await issuesOf({
    'mailsift.yaml': 'workers:\n  normal:\n    tls: { bind: "127.0.0.1:11335", cert: c.pem, key: k.pem }\n',
    'c.pem': pem.cert,
    'k.pem': pem.otherKey,
  });
  assert.equal(issues.length, 1, JSON.stringify(issues));
  assert.equal(issues[0]!.path, 'workers.normal.tls.cert');
  assert.match(issues[0]!.expected, /usable with the key/);
  assert.match(issues[0]!.found, /c\.pem.*k\.pem/);
});
