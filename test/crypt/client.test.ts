// The scan client with `key`: v2 and v3 scans and pings encrypted to a mailsift worker, the
// same through `mailsiftc --key`, and clear errors for a server that cannot decrypt.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { loadConfig } from '../../src/config/load.js';
import { base32Encode } from '../../src/core/base32.js';
import { HttpCryptServer } from '../../src/http/crypt/server-crypt.js';
import { ScanClient, isScanClientError } from '../../src/client/index.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { createLogger } from '../../src/observability/log.js';
import { startNormalWorker, type RunningWorker } from '../../src/workers/normal.js';
import { mailsiftc, parseTextOutput } from '../interop/run.js';
import { loadKeypair } from './fixtures.js';

const server = loadKeypair('server-keypair.json');
const PUB = base32Encode(server.publicKey);
const WRONG_PUB = base32Encode(loadKeypair('wrong-keypair.json').publicKey);
const GTUBE_FILE = '/work/shared/fixtures/scan/messages/gtube.eml';
const GTUBE = Buffer.from('Subject: test\r\nMessage-ID: <gtube-crypt@example.org>\r\n\r\nXJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X\r\n');

let worker: RunningWorker;
const refusals: string[] = [];

before(async () => {
  const cfg = await loadConfig('conf');
  const scanner = await createEngine(cfg.engine, builtinModules);
  worker = await startNormalWorker({
    host: '127.0.0.1', port: 0, scanner, log: createLogger({ level: 'silent' }).child('normal'),
    transport: { crypt: new HttpCryptServer({ keypair: server, onReject: (code) => refusals.push(code) }) },
  });
});
after(async () => {
  await worker?.close();
});

describe('ScanClient with a server key', () => {
  it('scans over v2 and v3, and pings, all encrypted', async () => {
    const client = new ScanClient({ server: `127.0.0.1:${worker.port}`, key: PUB });
    try {
      for (const protocol of ['v2', 'v3'] as const) {
        const r = await client.scan(GTUBE, { protocol, ip: '192.0.2.7', from: 'a@example.org', rcpt: ['b@example.net'] });
        assert.equal(r.status, 200, protocol);
        assert.equal(r.result.action, 'reject', protocol);
        assert.ok(r.result.symbols?.['GTUBE'], protocol);
        assert.equal(r.result['message-id'], 'gtube-crypt@example.org', protocol);
      }
      const z = await client.scan(GTUBE, { compress: true });
      assert.equal(z.result.action, 'reject', 'zstd inside the envelope');
      assert.equal(await client.ping(), 'pong');
    } finally {
      client.close();
    }
  });

  it('really encrypts: a server without the keypair cannot read the request', async () => {
    // A bare TCP server records what arrives and answers nothing useful.
    let got = Buffer.alloc(0);
    const sink = net.createServer((s) => {
      s.on('data', (c: Buffer) => {
        got = Buffer.concat([got, c]);
        if (got.includes('\r\n\r\n')) s.end('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n');
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const client = new ScanClient({ server: `127.0.0.1:${(sink.address() as net.AddressInfo).port}`, key: PUB, timeoutMs: 3000 });
    try {
      await assert.rejects(client.scan(GTUBE, { from: 'secret-sender@example.org' }), (e: unknown) => isScanClientError(e) && /cannot decrypt the reply/.test(e.message));
      const text = got.toString('latin1');
      assert.match(text, /^POST \/post HTTP\/1\.0\r\nContent-Length: \d+\r\nContent-Type: application\/octet-stream\r\nConnection: close\r\nKey: [a-z0-9]{8}=[a-z0-9]{52}\r\n\r\n/);
      assert.ok(!text.includes('secret-sender') && !text.includes('GTUBE') && !text.includes('checkv2'), 'nothing of the inner request is visible');
    } finally {
      client.close();
      sink.close();
    }
  });

  it('reports a wrong server key clearly', async () => {
    const client = new ScanClient({ server: `127.0.0.1:${worker.port}`, key: WRONG_PUB });
    try {
      await assert.rejects(client.scan(GTUBE), (e: unknown) => isScanClientError(e) && /Unknown key id/.test(e.message) && e.status === 400);
    } finally {
      client.close();
    }
    assert.ok(refusals.includes('ERR_CRYPT_UNKNOWN_KEY'));
  });

  it('refuses a key that is not 52 base32 characters', () => {
    assert.throws(() => new ScanClient({ key: PUB.toUpperCase() }), /bad server key/);
    assert.throws(() => new ScanClient({ key: PUB + 'y' }), /bad server key/);
  });
});

describe('mailsiftc --key', () => {
  it('scans a file encrypted and prints the verdict', async () => {
    const r = await mailsiftc(['-h', `127.0.0.1:${worker.port}`, '--key', PUB, GTUBE_FILE]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const v = parseTextOutput(r.stdout);
    assert.equal(v.action, 'reject');
    assert.ok(v.symbols.has('GTUBE'));
  });

  it('--key with -3 (v3) and -j', async () => {
    const r = await mailsiftc(['-h', `127.0.0.1:${worker.port}`, '--key', PUB, '-3', '-j', GTUBE_FILE]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((JSON.parse(r.stdout) as { action: string }).action, 'reject');
  });

  it('fails with the reason when the key is wrong', async () => {
    const r = await mailsiftc(['-h', `127.0.0.1:${worker.port}`, '--key', WRONG_PUB, GTUBE_FILE]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /Unknown key id/);
  });
});
