// A real normal worker with a keypair, over real sockets: rspamc's captured request is scanned
// and answered sealed; every kind of tampering is refused with a clear, logged error and the
// connection closed, and the worker keeps serving; keep-alive outer requests; encrypted_only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { loadConfig } from '../../src/config/load.js';
import { base32Encode } from '../../src/core/base32.js';
import { createTransport } from '../../src/http/server.js';
import { listenTransport } from '../../src/workers/listen.js';
import { seal, sharedKey } from '../../src/crypto/cryptobox.js';
import { generateKeypair, keyId, type KexKeypair } from '../../src/crypto/keypair.js';
import { sealRequest, serializeInnerRequest } from '../../src/http/crypt/envelope.js';
import { formatKeyHeader, parseKeyHeader } from '../../src/http/crypt/key-header.js';
import { HttpCryptServer } from '../../src/http/crypt/server-crypt.js';
import { createEngine } from '../../src/engine/index.js';
import type { Scanner } from '../../src/engine/contract.js';
import { builtinModules } from '../../src/modules/index.js';
import { createLogger } from '../../src/observability/log.js';
import { startNormalWorker, type RunningWorker } from '../../src/workers/normal.js';
import { cases, file, loadKeypair, unhex } from './fixtures.js';
import { exchange, openReply, splitReplies } from './raw.js';

const server = loadKeypair('server-keypair.json');
const wrong = loadKeypair('wrong-keypair.json');
const MSG = file(cases.find((c) => c.name === 'rspamc-checkv2')!, 'request.inner.bin')!;
const GTUBE = Buffer.from('Subject: test\r\n\r\nXJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X\r\n');

let scanner: Scanner;
let worker: RunningWorker;
const refusals: string[] = [];

async function startWorker(crypt: HttpCryptServer, host = '127.0.0.1'): Promise<RunningWorker> {
  return startNormalWorker({ host, port: 0, scanner, log: createLogger({ level: 'silent' }).child('normal'), transport: { crypt } });
}

before(async () => {
  const cfg = await loadConfig('conf');
  scanner = await createEngine(cfg.engine, builtinModules);
  worker = await startWorker(new HttpCryptServer({ keypair: server, onReject: (code) => refusals.push(code) }));
});
after(async () => {
  await worker?.close();
});

/** A fresh encrypted scan of `message`, as rspamc would send it. */
function scanRequest(message: Buffer, to: KexKeypair = server): { bytes: Buffer; nm: Uint8Array } {
  const inner = serializeInnerRequest({ path: '/checkv2', headers: [['User-Agent', 'rspamc'], ['Flags', 'body_block']], contentType: 'text/plain', body: message });
  return sealRequest(inner, to.publicKey);
}

/** The worker still scans encrypted and answers plaintext pings. */
async function stillServing(): Promise<void> {
  const { bytes, nm } = scanRequest(GTUBE);
  const { inner } = openReply(nm, await exchange(worker.port, bytes));
  assert.equal(inner?.status, 200);
  assert.equal((JSON.parse(inner.body.toString()) as { action: string }).action, 'reject');
  const ping = await exchange(worker.port, Buffer.from('GET /ping HTTP/1.0\r\n\r\n'));
  assert.match(ping.toString(), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\npong\r\n$/);
}

/** Expects a refusal: `sealed` says whether the error reply must be encrypted (key accepted). */
async function expectRefusal(bytes: Buffer, nm: Uint8Array, code: string, sealed: boolean, text: RegExp): Promise<void> {
  const before = refusals.length;
  const reply = await exchange(worker.port, bytes); // resolves on close: the server closed the connection
  const { outer, inner } = openReply(nm, reply);
  const shown = sealed ? inner : outer;
  if (sealed) {
    assert.equal(outer.status, 200, 'an encrypted reply always has outer status 200');
    assert.ok(inner, 'the error reply is sealed to the client');
  } else {
    assert.equal(inner, undefined, 'a refusal before the key is accepted is plaintext');
  }
  assert.equal(shown!.status, 400);
  assert.equal(shown!.headers['connection'], 'close');
  const err = JSON.parse(shown!.body.toString()) as { error: string; error_domain: string };
  assert.match(err.error, text);
  assert.equal(err.error_domain, 'transport-error');
  assert.deepEqual(refusals.slice(before), [code], 'logged once, with its code');
  await stillServing();
}

describe('encrypted requests on a normal worker', () => {
  it("replays rspamc's captured request: scanned, answered sealed with rspamd's layout", async () => {
    const c = cases.find((x) => x.name === 'rspamc-checkv2')!;
    const reply = await exchange(worker.port, file(c, 'request.bin')!);
    const { outer, inner } = openReply(unhex(c.nm_hex!), reply);
    assert.equal(outer.status, 200);
    assert.equal(outer.headers['content-type'], 'application/octet-stream');
    assert.equal(outer.headers['key'], undefined);
    assert.match(reply.toString('latin1'), /^HTTP\/1\.1 200 OK\r\nConnection: close\r\nServer: [^\r]+\r\nDate: [^\r]+\r\nContent-Length: \d+\r\nContent-Type: application\/octet-stream\r\n\r\n/);
    assert.ok(inner);
    assert.equal(inner.status, 200);
    assert.equal(inner.headers['content-type'], 'application/json');
    const result = JSON.parse(inner.body.toString()) as { action: string; score: number; symbols: Record<string, unknown> };
    assert.equal(typeof result.score, 'number');
    assert.ok(Object.keys(result.symbols).length > 0);
  });

  it('scans a fresh request (GTUBE → reject) and the plaintext path still works', stillServing);

  it('refuses a flipped MAC byte (sealed error reply)', async () => {
    const { bytes, nm } = scanRequest(MSG);
    const t = Buffer.from(bytes);
    t[t.indexOf('\r\n\r\n') + 4 + 24]! ^= 0x80;
    await expectRefusal(t, nm, 'ERR_CRYPT_BAD_MAC', true, /bad MAC/);
  });

  it('refuses a request encrypted to another key (wrong short id; plaintext error)', async () => {
    const { bytes, nm } = scanRequest(MSG, wrong);
    await expectRefusal(bytes, nm, 'ERR_CRYPT_UNKNOWN_KEY', false, /Unknown key id/);
  });

  it('refuses the right short id in front of a body sealed for another key', async () => {
    const { bytes } = scanRequest(MSG, wrong);
    const text = bytes.toString('latin1');
    const fixedId = Buffer.from(text.replace(/Key: [a-z0-9]{8}=/, `Key: ${formatKeyHeader(server.id, new Uint8Array(32)).slice(0, 9)}`), 'latin1');
    // The server accepts the client key and seals its error with the key it shares with it.
    const serverSide = sharedKey(server.secretKey, parseKeyHeader(/Key: ([^\r]+)/.exec(text)![1]!)!.peerKey!)!;
    await expectRefusal(fixedId, serverSide, 'ERR_CRYPT_BAD_MAC', true, /bad MAC/);
  });

  it('refuses a body shorter than nonce + MAC (sealed error reply)', async () => {
    const client = generateKeypair();
    const nm = sharedKey(client.secretKey, server.publicKey)!;
    const body = Buffer.alloc(39, 7);
    const head = `POST /post HTTP/1.0\r\nContent-Length: 39\r\nKey: ${formatKeyHeader(server.id, client.publicKey)}\r\n\r\n`;
    await expectRefusal(Buffer.concat([Buffer.from(head), body]), nm, 'ERR_CRYPT_SHORT_BODY', true, /shorter than nonce and MAC/);
  });

  it('refuses a sealed body cut short (Content-Length matching the cut)', async () => {
    const { bytes, nm } = scanRequest(MSG);
    const text = bytes.toString('latin1');
    const len = Number(/Content-Length: (\d+)/.exec(text)![1]);
    const cut = Buffer.from(text.slice(0, -10).replace(`Content-Length: ${len}`, `Content-Length: ${len - 10}`), 'latin1');
    await expectRefusal(cut, nm, 'ERR_CRYPT_BAD_MAC', true, /bad MAC/);
  });

  it('answers 400 to a client that stops in the middle of the outer body, and keeps serving', async () => {
    const { bytes } = scanRequest(MSG);
    const reply = await exchange(worker.port, bytes.subarray(0, bytes.length - 100), { end: true });
    assert.match(reply.toString('latin1'), /^HTTP\/1\.1 400 /);
    await stillServing();
  });

  it('refuses garbage base32 in Key (upper case, foreign characters, short key)', async () => {
    const { bytes, nm } = scanRequest(MSG);
    const text = bytes.toString('latin1');
    const key = /Key: ([^\r]+)/.exec(text)![1]!;
    for (const bad of [key.toUpperCase(), key.replace(/=./, '=0'), key.slice(0, -2), `${key.split('=')[0]}!=${key.split('=')[1]}`]) {
      await expectRefusal(Buffer.from(text.replace(key, bad), 'latin1'), nm, 'ERR_CRYPT_BAD_KEY_HEADER', false, /Invalid Key header/);
    }
  });

  it('refuses a replayed request whose body was swapped (same Key, nonce and MAC)', async () => {
    const a = scanRequest(MSG);
    const b = serializeInnerRequest({ path: '/checkv2', headers: [], contentType: 'text/plain', body: GTUBE });
    const headEnd = a.bytes.indexOf('\r\n\r\n') + 4;
    const nonceMac = a.bytes.subarray(headEnd, headEnd + 40);
    const otherCipher = seal(a.nm, b).subarray(40);
    const head = a.bytes.subarray(0, headEnd).toString('latin1').replace(/Content-Length: \d+/, `Content-Length: ${40 + otherCipher.length}`);
    await expectRefusal(Buffer.concat([Buffer.from(head, 'latin1'), nonceMac, otherCipher]), a.nm, 'ERR_CRYPT_BAD_MAC', true, /bad MAC/);
    // The untouched request is still good (replays are not tracked, as in Rspamd).
    const { inner } = openReply(a.nm, await exchange(worker.port, a.bytes));
    assert.equal(inner?.status, 200);
  });

  it('refuses decrypted bytes that are not one complete request (body without Content-Length)', async () => {
    const client = generateKeypair();
    const nm = sharedKey(client.secretKey, server.publicKey)!;
    const inner = Buffer.concat([Buffer.from('POST /checkv2 HTTP/1.0\r\nUser-Agent: x\r\n\r\n'), MSG]);
    const box = seal(nm, inner);
    const head = `POST /post HTTP/1.0\r\nContent-Length: ${box.length}\r\nKey: ${formatKeyHeader(server.id, client.publicKey)}\r\n\r\n`;
    await expectRefusal(Buffer.concat([Buffer.from(head), box]), nm, 'ERR_CRYPT_BAD_INNER', true, /not one complete HTTP request/);
  });

  it('keeps an HTTP/1.1 keep-alive connection open across encrypted requests (proxy form)', async () => {
    const client = generateKeypair();
    const nm = sharedKey(client.secretKey, server.publicKey)!;
    const one = (path: string, body: Buffer, keepAlive: boolean): Buffer => {
      const sealed = sealRequest(serializeInnerRequest({ path, headers: [], body }), server.publicKey, { clientKeypair: client, host: 'scanner', keepAlive });
      assert.match(sealed.bytes.toString('latin1'), new RegExp(`^POST /post HTTP/1\\.1\r\nConnection: ${keepAlive ? 'keep-alive' : 'close'}\r\nHost: scanner\r\nContent-Length: \\d+\r\nContent-Type: application/octet-stream\r\nKey: ${formatKeyHeader(keyId(server.publicKey), client.publicKey)}\r\n\r\n`));
      return sealed.bytes;
    };
    // The last request asks to close, so the exchange ends when the server closes.
    const stream = await exchange(worker.port, Buffer.concat([one('/checkv2', GTUBE, true), one('/ping', Buffer.alloc(0), true), one('/ping', Buffer.alloc(0), false)]));
    const replies = splitReplies(stream).map((r) => openReply(nm, r));
    assert.equal(replies.length, 3);
    assert.equal(replies[0]!.outer.headers['connection'], 'keep-alive');
    assert.equal((JSON.parse(replies[0]!.inner!.body.toString()) as { action: string }).action, 'reject');
    assert.equal(replies[1]!.inner!.body.toString(), 'pong\r\n');
    assert.equal(replies[2]!.outer.headers['connection'], 'close');
  });
});

describe('what the router sees', () => {
  it('the inner request only, marked with the client key; the outer URL and Key header are gone', async () => {
    const got: Array<Record<string, unknown>> = [];
    const t = createTransport((req) => {
      got.push({ method: req.method, path: req.path, query: req.query.get('x'), key: req.headers.first('key'), ua: req.headers.first('user-agent'), crypt: req.crypt, body: req.body.toString() });
      return { status: 200, contentType: 'text/plain', headers: [['X-Seen', 'yes']], body: 'ok' };
    }, { crypt: new HttpCryptServer({ keypair: server }) });
    const w = await listenTransport(t, '127.0.0.1', 0);
    try {
      const client = generateKeypair();
      const inner = serializeInnerRequest({ path: '/learnspam?x=1', headers: [['User-Agent', 'inner-agent']], body: Buffer.from('hello') });
      const { bytes, nm } = sealRequest(inner, server.publicKey, { clientKeypair: client });
      const { inner: reply } = openReply(nm, await exchange(w.port, bytes));
      assert.equal(reply?.status, 200);
      assert.equal(reply.headers['x-seen'], 'yes');
      assert.equal(reply.body.toString(), 'ok');
      assert.deepEqual(got, [{ method: 'POST', path: '/learnspam', query: '1', key: undefined, ua: 'inner-agent', crypt: { peerKey: base32Encode(client.publicKey) }, body: 'hello' }]);
      // Plaintext requests carry no crypt mark; a Key header without "=" is ignored (as in Rspamd).
      await exchange(w.port, Buffer.from('GET /x HTTP/1.0\r\n\r\n'));
      await exchange(w.port, Buffer.from('GET /y HTTP/1.0\r\nKey: no-equals-sign\r\n\r\n'));
      assert.deepEqual(got.slice(1).map((g) => [g.path, g.crypt]), [['/x', undefined], ['/y', undefined]]);
    } finally {
      await w.close();
    }
  });
});

describe('a worker without a keypair', () => {
  it('ignores Key and treats the outer POST /post as a plain request (unknown command)', async () => {
    const plain = await startNormalWorker({ host: '127.0.0.1', port: 0, scanner, log: createLogger({ level: 'silent' }).child('normal') });
    try {
      const { bytes } = scanRequest(GTUBE);
      const reply = (await exchange(plain.port, bytes)).toString('latin1');
      assert.match(reply, /^HTTP\/1\.1 404 invalid command\r\n/);
    } finally {
      await plain.close();
    }
  });
});

describe('encrypted_only', () => {
  const nonLocal = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

  it('serves plaintext to local peers and refuses it from other addresses; encrypted requests pass', { skip: nonLocal ? false : 'no non-loopback IPv4 address on this machine' }, async () => {
    const codes: string[] = [];
    const w = await startWorker(new HttpCryptServer({ keypair: server, encryptedOnly: true, onReject: (c) => codes.push(c) }), '0.0.0.0');
    try {
      const ping = Buffer.from('GET /ping HTTP/1.0\r\n\r\n');
      assert.match((await exchange(w.port, ping)).toString(), /^HTTP\/1\.1 200 OK/, 'loopback is local');
      const refused = (await exchange(w.port, ping, { host: nonLocal!, localAddress: nonLocal! })).toString();
      assert.match(refused, /^HTTP\/1\.1 400 Encryption required\r\n/);
      assert.match(refused, /"error":"Encryption required"/);
      assert.deepEqual(codes, ['ERR_CRYPT_REQUIRED']);
      const { bytes, nm } = scanRequest(GTUBE);
      const { inner } = openReply(nm, await exchange(w.port, bytes, { host: nonLocal!, localAddress: nonLocal! }));
      assert.equal(inner?.status, 200);
    } finally {
      await w.close();
    }
  });
});
