// The client library against a real mailsift worker: v2 and v3 requests, JSON and msgpack,
// zstd both ways, keep-alive reuse and the error paths, all over real loopback sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import { ScanClient, CLIENT_ERROR_CODES, isScanClientError, type ScanReply } from '../../src/client/index.js';
import { ACTIONS } from '../../src/core/scan-types.js';
import { startTestWorker, type TestWorker } from './worker.js';

const MESSAGES = '/work/shared/fixtures/scan/messages';

let worker: TestWorker;
let client: ScanClient;
let gtube: Buffer;
let crlf: Buffer;

before(async () => {
  worker = await startTestWorker();
  client = new ScanClient({ server: worker.server, timeoutMs: 10_000 });
  gtube = await readFile(`${MESSAGES}/gtube.eml`);
  crlf = await readFile(`${MESSAGES}/crlf-simple.eml`);
});

after(async () => {
  client?.close();
  await worker?.close();
});

function assertVerdict(reply: ScanReply): void {
  assert.equal(reply.status, 200);
  assert.equal(typeof reply.result.score, 'number');
  assert.equal(typeof reply.result.required_score, 'number');
  assert.ok((ACTIONS as readonly string[]).includes(String(reply.result.action)), `unexpected action ${reply.result.action}`);
  assert.equal(typeof reply.result.symbols, 'object');
}

function assertGtube(reply: ScanReply): void {
  assertVerdict(reply);
  assert.equal(reply.result.action, 'reject');
  assert.ok(reply.result.symbols?.GTUBE, 'GTUBE symbol missing');
  assert.equal(reply.result['message-id'], 'GTUBE1.1010101@example.net');
}

/** A TCP relay in front of the worker that counts client connections, to observe keep-alive. */
async function countingRelay(target: number): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    count++;
    const outbound = net.connect(target, '127.0.0.1');
    sockets.add(inbound).add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const drop = (): void => { inbound.destroy(); outbound.destroy(); };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => count,
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

describe('v2 (/checkv2)', () => {
  test('GTUBE gives a reject verdict with the GTUBE symbol', async () => {
    assertGtube(await client.scan(gtube));
  });

  test('envelope options travel as headers and the scan still succeeds', async () => {
    const reply = await client.scan(crlf, {
      ip: '203.0.113.5', from: 'alice@example.com', rcpt: ['bob@example.org', 'carol@example.net'],
      helo: 'helo.example.org', hostname: 'mail.example.org', user: 'alice', deliverTo: 'bob@example.org',
      queueId: 'Q123', filename: 'crlf-simple.eml', headers: [['X-Custom', 'yes']],
    });
    assertVerdict(reply);
    assert.equal(reply.result['message-id'], 'fixture-crlf-1@example.com');
  });

  test('flags reach the server: groups adds the groups object, skip skips', async () => {
    const grouped = await client.scan(crlf, { flags: ['groups'] });
    assert.equal(typeof grouped.result.groups, 'object');
    const skipped = await client.scan(gtube, { flags: ['skip'] });
    assert.equal(skipped.result.is_skipped, true);
    assert.deepEqual(skipped.result.symbols, {});
  });

  test('zstd request and reply: the reply is compressed on the wire and decoded', async () => {
    const reply = await client.scan(gtube, { compress: true });
    assert.equal(reply.headers['compression'], 'zstd');
    assertGtube(reply);
  });

  test('msgpack reply when asked with Accept', async () => {
    const reply = await client.scan(gtube, { msgpack: true });
    assert.equal(reply.resultFormat, 'msgpack');
    assert.match(String(reply.headers['content-type']), /msgpack/);
    assertGtube(reply);
  });

  test('header values beyond ASCII reach the server as UTF-8 (a settings symbol name comes back intact)', async () => {
    const name = 'SYM_É☃';
    const reply = await client.scan(crlf, { settings: { symbols: [name] } });
    assert.ok(reply.result.symbols?.[name], `symbols: ${Object.keys(reply.result.symbols ?? {}).join(', ')}`);
  });

  test('the raw result bytes are the JSON the server sent', async () => {
    const reply = await client.scan(gtube);
    assert.equal(reply.resultFormat, 'json');
    assert.deepEqual(JSON.parse(reply.resultBytes.toString('utf8')), reply.result);
  });
});

describe('v3 (/checkv3)', () => {
  test('JSON metadata, multipart reply with a result part', async () => {
    const reply = await client.scan(gtube, { protocol: 'v3', from: 'alice@example.com', rcpt: ['bob@example.org'], ip: '203.0.113.5' });
    assert.match(String(reply.headers['content-type']), /^multipart\//);
    assertGtube(reply);
  });

  test('msgpack metadata gives a msgpack result part', async () => {
    const reply = await client.scan(gtube, { protocol: 'v3', msgpack: true, rcpt: ['bob@example.org'] });
    assert.equal(reply.resultFormat, 'msgpack');
    assertGtube(reply);
  });

  test('zstd message part, compressed reply parts', async () => {
    const reply = await client.scan(gtube, { protocol: 'v3', compress: true });
    assertGtube(reply);
  });

  test('v3 flags reach the engine', async () => {
    const reply = await client.scan(gtube, { protocol: 'v3', flags: ['skip'] });
    assert.equal(reply.result.is_skipped, true);
    assert.deepEqual(reply.result.symbols, {});
  });
});

describe('connections and errors', () => {
  test('keep-alive: sequential scans share one connection', async () => {
    const relay = await countingRelay(worker.port);
    const c = new ScanClient({ server: `127.0.0.1:${relay.port}` });
    try {
      for (let i = 0; i < 4; i++) assertGtube(await c.scan(gtube));
      assert.equal(relay.connections(), 1);
    } finally {
      c.close();
      await relay.close();
    }
  });

  test('parallel scans on a pool all succeed', async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => client.scan(i % 2 ? gtube : crlf)));
    for (const r of replies) assertVerdict(r);
  });

  test('corrupt zstd gets a non-2xx reply whose error text reaches the caller', async () => {
    const corrupt = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from('definitely not a zstd frame')]);
    await assert.rejects(client.scan(corrupt, { compress: true }), (e: unknown) => {
      assert.ok(isScanClientError(e));
      assert.equal(e.code, CLIENT_ERROR_CODES.HTTP_STATUS);
      assert.ok(e.status !== undefined && e.status >= 400, `status ${e.status}`);
      assert.ok(e.serverError && e.serverError.length > 0);
      return true;
    });
  });

  test('an unknown path is an HTTP_STATUS error, not a verdict', async () => {
    await assert.rejects(client.scan(gtube, { path: '/no-such-command' }), (e: unknown) => isScanClientError(e) && e.code === CLIENT_ERROR_CODES.HTTP_STATUS);
  });

  test('a closed port is a CONNECT error', async () => {
    const spare = net.createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as net.AddressInfo).port;
    await new Promise<void>((r) => spare.close(() => r()));
    const c = new ScanClient({ server: `127.0.0.1:${port}` });
    await assert.rejects(c.scan(gtube), (e: unknown) => isScanClientError(e) && e.code === CLIENT_ERROR_CODES.CONNECT);
    c.close();
  });

  test('a server that never answers is a TIMEOUT error', async () => {
    const held = new Set<net.Socket>();
    const silent = net.createServer((s) => { held.add(s); s.on('data', () => undefined); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const c = new ScanClient({ server: `127.0.0.1:${(silent.address() as net.AddressInfo).port}`, timeoutMs: 300 });
    try {
      await assert.rejects(c.scan(gtube), (e: unknown) => isScanClientError(e) && e.code === CLIENT_ERROR_CODES.TIMEOUT);
    } finally {
      c.close();
      for (const s of held) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  test('ping answers pong', async () => {
    assert.equal(await client.ping(), 'pong');
  });
});

describe('rewritten messages (milter_headers footer configured)', () => {
  const FOOTER = 'footer added by the client test';
  let rewriting: TestWorker;
  let c: ScanClient;
  before(async () => {
    rewriting = await startTestWorker({ 'milter_headers.yaml': `footer:\n  text: "${FOOTER}"\n` });
    c = new ScanClient({ server: rewriting.server });
  });
  after(async () => {
    c?.close();
    await rewriting?.close();
  });

  test('v2 body block: Message-Offset splits the JSON from the rewritten message', async () => {
    const reply = await c.scan(crlf, { bodyBlock: true });
    assert.ok(reply.headers['message-offset'], 'no Message-Offset header');
    assertVerdict(reply);
    const text = reply.rewritten?.toString('utf8') ?? '';
    assert.ok(text.startsWith('From: Alice <alice@example.com>'), 'full message expected without the milter flag');
    assert.ok(text.includes(FOOTER));
  });

  test('v2 body block with milter flag carries only the body', async () => {
    const reply = await c.scan(crlf, { bodyBlock: true, flags: ['milter'] });
    const text = reply.rewritten?.toString('utf8') ?? '';
    assert.ok(text.includes(FOOTER));
    assert.ok(!/^From: /m.test(text), 'headers must not be in a milter body block');
  });

  test('v2 body block survives zstd reply compression', async () => {
    const reply = await c.scan(crlf, { bodyBlock: true, compress: true });
    assert.equal(reply.headers['compression'], 'zstd');
    assert.ok(reply.rewritten?.toString('utf8').includes(FOOTER));
  });

  test('without body_block there is only JSON', async () => {
    const reply = await c.scan(crlf, { bodyBlock: false });
    assert.equal(reply.headers['message-offset'], undefined);
    assert.equal(reply.rewritten, undefined);
  });

  test('v3: the rewritten message arrives as the body part (zstd parts too)', async () => {
    for (const compress of [false, true]) {
      const reply = await c.scan(crlf, { protocol: 'v3', compress });
      assertVerdict(reply);
      assert.ok(reply.rewritten?.toString('utf8').includes(FOOTER), `compress=${compress}`);
    }
  });
});
