// A normal worker with an HTTPS listener, in this process: the real engine scans, and every
// ScanMeta it receives is recorded on the way, to see what the TLS layer hands the task.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { loadConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { createLogger } from '../../src/observability/log.js';
import type { ScanMeta } from '../../src/plugin-api/index.js';
import type { RunningWorker } from '../../src/workers/listen.js';
import { startNormalWorker } from '../../src/workers/normal.js';
import { CA_ISSUER_RFC2253, makeTestPki, type TestPki } from './certs.js';

const GTUBE = '/work/shared/fixtures/scan/messages/gtube.eml';

let pki: TestPki;
let worker: RunningWorker;
let tlsOnly: RunningWorker;
const seen: ScanMeta[] = [];

before(async () => {
  pki = await makeTestPki();
  const cfg = await loadConfig('conf');
  const engine = await createEngine(cfg.engine, builtinModules);
  const scanner = {
    scan(message: Buffer, meta: ScanMeta) {
      seen.push(meta);
      return engine.scan(message, meta);
    },
  };
  const log = createLogger({ level: 'silent' }).child('normal');
  const tls = { host: '127.0.0.1', port: 0, certFile: pki.server1.cert, keyFile: pki.server1.key, caFile: pki.caCert, requireClientCert: false };
  worker = await startNormalWorker({ host: '127.0.0.1', port: 0, scanner, log, listen: { tls } });
  tlsOnly = await startNormalWorker({ host: '127.0.0.1', port: 0, scanner, log, listen: { tls, plain: false } });
});

after(async () => {
  await Promise.all([worker?.close(), tlsOnly?.close()]);
  await pki?.remove();
});

interface Reply {
  status: number;
  body: string;
  /** Subject CN of the certificate the server presented. */
  serverCn?: string;
}

function post(port: number, path: string, body: Buffer, opts: { tls: boolean; client?: { cert: string; key: string }; headers?: Record<string, string> }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const common = { host: '127.0.0.1', port, method: 'POST', path, agent: false as const, headers: { 'content-length': String(body.length), ...opts.headers } };
    const onRes = (res: IncomingMessage): void => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => (data += c));
      res.on('end', () => {
        const sock = res.socket as TLSSocket;
        const cn = opts.tls ? sock.getPeerCertificate?.()?.subject?.CN : undefined;
        resolve({ status: res.statusCode ?? 0, body: data, ...(cn ? { serverCn: String(cn) } : {}) });
      });
    };
    const req = opts.tls
      ? httpsRequest({ ...common, ca: readFileSyncCached(pki.caCert), ...(opts.client ? { cert: readFileSyncCached(opts.client.cert), key: readFileSyncCached(opts.client.key) } : {}) }, onRes)
      : httpRequest(common, onRes);
    req.on('error', reject);
    req.end(body);
  });
}

const fileCache = new Map<string, Buffer>();
function readFileSyncCached(p: string): Buffer {
  let b = fileCache.get(p);
  if (!b) {
    b = readFileSync(p);
    fileCache.set(p, b);
  }
  return b;
}

function lastMeta(): ScanMeta {
  const m = seen[seen.length - 1];
  assert.ok(m, 'the engine saw a scan');
  return m;
}

test('v2 over HTTPS with a client certificate: scanned, the issuer reaches the task', async () => {
  const r = await post(worker.tlsPort!, '/checkv2', await readFile(GTUBE), { tls: true, client: pki.client });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.serverCn, 'server-one');
  const reply = JSON.parse(r.body) as { action: string; symbols: Record<string, unknown> };
  assert.equal(reply.action, 'reject');
  assert.ok('GTUBE' in reply.symbols);
  assert.equal(lastMeta().tls?.certIssuer, CA_ISSUER_RFC2253);
  assert.deepEqual(lastMeta().requestHeaders.get('tls-cert-issuer'), [CA_ISSUER_RFC2253], 'visible to rules reading request headers');
});

test('v3 over HTTPS: the issuer fills meta.tls when the metadata has none', async () => {
  const boundary = 'tls-test-boundary';
  const msg = await readFile(GTUBE);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\nContent-Type: application/json\r\n\r\n{"from":"a@example.org"}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="message"\r\nContent-Type: message/rfc822\r\n\r\n`),
    msg,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const r = await post(worker.tlsPort!, '/checkv3', body, { tls: true, client: pki.client, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
  assert.equal(r.status, 200, r.body);
  assert.equal(lastMeta().from, 'a@example.org');
  assert.equal(lastMeta().tls?.certIssuer, CA_ISSUER_RFC2253);
});

test('a TLS-Cert-Issuer header sent by the client is kept', async () => {
  const r = await post(worker.tlsPort!, '/checkv2', await readFile(GTUBE), { tls: true, client: pki.client, headers: { 'TLS-Cert-Issuer': 'CN=Proxy said so' } });
  assert.equal(r.status, 200, r.body);
  assert.equal(lastMeta().tls?.certIssuer, 'CN=Proxy said so');
  assert.deepEqual(lastMeta().requestHeaders.get('tls-cert-issuer'), ['CN=Proxy said so']);
});

test('optional client certificates: none, or one from an unknown CA, scans without an issuer', async () => {
  for (const client of [undefined, pki.rogueClient]) {
    const r = await post(worker.tlsPort!, '/checkv2', await readFile(GTUBE), { tls: true, ...(client ? { client } : {}) });
    assert.equal(r.status, 200, r.body);
    assert.equal(lastMeta().tls?.certIssuer, undefined, client ? 'unverified certificate' : 'no certificate');
    assert.equal(lastMeta().requestHeaders.has('tls-cert-issuer'), false);
  }
});

test('the plain listener of the same worker serves the same routes, without TLS facts', async () => {
  const r = await post(worker.port, '/checkv2', await readFile(GTUBE), { tls: false });
  assert.equal(r.status, 200, r.body);
  assert.equal(JSON.parse(r.body).action, 'reject');
  assert.equal(lastMeta().tls, undefined);
});

test('tls.only: no plain listener, HTTPS works', async () => {
  assert.equal(tlsOnly.port, 0, 'no plain port bound');
  assert.ok(tlsOnly.tlsPort! > 0);
  const r = await post(tlsOnly.tlsPort!, '/checkv2', await readFile(GTUBE), { tls: true, client: pki.client });
  assert.equal(r.status, 200, r.body);
  assert.equal(lastMeta().tls?.certIssuer, CA_ISSUER_RFC2253);
});

test('a key that does not match the certificate stops the worker from starting, naming the files; nothing stays bound', async () => {
  const log = createLogger({ level: 'silent' }).child('normal');
  const scanner = { scan: () => Promise.reject(new Error('not reached')) };
  // Find a port, then ask for the plain listener there: after the failure it must be free again.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const tls = { host: '127.0.0.1', port: 0, certFile: pki.server1.cert, keyFile: pki.server2.key, requireClientCert: false };
  await assert.rejects(startNormalWorker({ host: '127.0.0.1', port, scanner, log, listen: { tls } }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_TLS_CONFIG');
    assert.ok(err.message.includes(pki.server1.cert) && err.message.includes(pki.server2.key), err.message);
    return true;
  });
  const again = createServer();
  await new Promise<void>((resolve, reject) => {
    again.once('error', reject);
    again.listen({ host: '127.0.0.1', port }, () => resolve());
  });
  await new Promise<void>((r) => again.close(() => r()));
});
