// The fuzzer's own machinery (bench/fuzz/), where getting it wrong would weaken a campaign
// without any sign: kept-alive connections only for inputs the server frames by itself, a
// stale kept-alive connection never turned into a finding, the same bytes for input N of a
// seed, the known-bug filter, and node:crypto X25519 agreeing with the server's curve.
// Against a real scan worker over real sockets.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import net from 'node:net';
import { x25519 } from '@noble/curves/ed25519.js';
import { startRealWorker } from '../protocol/harness.js';
import { exactlyFramed, Pool, send, type Outcome } from '../../bench/fuzz/send.js';
import { knownBug } from '../../bench/fuzz/known.js';
import { Rng } from '../../bench/fuzz/rng.js';
import { publicKeyOf, sharedKeyFor } from '../../bench/fuzz/x25519.js';
import { sharedKey } from '../../src/crypto/cryptobox.js';
import { loadSeeds } from '../../bench/fuzz/seeds.js';
import type { SurfaceContext } from '../../bench/fuzz/surface.js';
import { v2Surface } from '../../bench/fuzz/surfaces/v2.js';
import { v3Surface } from '../../bench/fuzz/surfaces/v3.js';
import { httpcryptSurface } from '../../bench/fuzz/surfaces/httpcrypt.js';
import { mimeSurface } from '../../bench/fuzz/surfaces/mime.js';

const MSG = 'From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\nMessage-ID: <fz@example.com>\r\n\r\nhello\r\n';

function post(path: string, body: string, extra = ''): Buffer {
  return Buffer.from(`POST ${path} HTTP/1.1\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, 'latin1');
}

function status(o: Outcome): number | string {
  return o.kind === 'reply' ? o.status : o.kind;
}

describe('fuzz: exactlyFramed', () => {
  const cases: Array<[string, Buffer, boolean]> = [
    ['POST with its exact Content-Length', post('/checkv2', MSG, 'IP: 192.0.2.1\r\n'), true],
    ['GET without a body', Buffer.from('GET /ping HTTP/1.1\r\nPassword: x\r\n\r\n'), true],
    ['Connection: keep-alive', post('/checkv2', MSG, 'Connection: keep-alive\r\n'), true],
    ['GET with bytes after the head', Buffer.from('GET /ping HTTP/1.1\r\n\r\nGET /ping HTTP/1.1\r\n\r\n'), false],
    ['Content-Length one short', Buffer.from(`POST /checkv2 HTTP/1.1\r\nContent-Length: ${MSG.length - 1}\r\n\r\n${MSG}`), false],
    ['Content-Length twice', post('/checkv2', MSG, `Content-Length: ${MSG.length}\r\n`), false],
    ['Content-Length as hex', Buffer.from(`POST /checkv2 HTTP/1.1\r\nContent-Length: 0x${MSG.length.toString(16)}\r\n\r\n${MSG}`), false],
    ['POST without Content-Length', Buffer.from(`POST /checkv2 HTTP/1.1\r\n\r\n${MSG}`), false],
    ['chunked', Buffer.from(`POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`), false],
    ['Connection: close', post('/checkv2', MSG, 'Connection: close\r\n'), false],
    ['Expect: 100-continue', post('/checkv2', MSG, 'Expect: 100-continue\r\n'), false],
    ['HTTP/1.0', Buffer.from(`POST /checkv2 HTTP/1.0\r\nContent-Length: ${MSG.length}\r\n\r\n${MSG}`), false],
    ['a bare LF inside the head', post('/checkv2', MSG, 'IP: 192.0.2.1\nX-Injected: 1\r\n'), false],
    ['a bare CR inside a value', post('/checkv2', MSG, 'IP: 192.0.2.1\rX: 1\r\n'), false],
    ['a header without a colon', post('/checkv2', MSG, 'broken line\r\n'), false],
    ['a header name with a space', post('/checkv2', MSG, 'Bad Name: 1\r\n'), false],
    ['an odd method', Buffer.from('PUT /checkv2 HTTP/1.1\r\nContent-Length: 0\r\n\r\n'), false],
    ['no end of head', Buffer.from('GET /ping HTTP/1.1\r\nHost: x\r\n'), false],
  ];
  for (const [name, bytes, want] of cases) it(`${name}: ${want}`, () => assert.equal(exactlyFramed(bytes), want));
});

describe('fuzz: Pool against a real worker', () => {
  let port = 0;
  let connections = 0;
  let close: () => Promise<void>;
  before(async () => {
    // A short idle time-out, so the test can watch the server drop an idle pooled connection.
    const w = await startRealWorker({ onConnection: () => { connections++; }, transport: { keepAliveTimeoutMs: 300 } });
    port = w.port;
    close = w.close;
  });
  after(() => close());

  it('sends exactly framed inputs on one kept-alive connection, and the replies are whole', async () => {
    const pool = new Pool({ host: '127.0.0.1', port }, 1);
    try {
      const before = connections;
      for (let i = 0; i < 5; i++) {
        const o = await pool.send(post('/checkv2', MSG, 'IP: 192.0.2.1\r\n'));
        assert.equal(status(o), 200);
        assert.ok(o.kind === 'reply' && /"time_real"/.test(o.body.toString()), 'the whole JSON body was read');
        assert.equal(o.kind === 'reply' && o.retried, undefined);
      }
      assert.equal(connections - before, 1);
    } finally {
      pool.close();
    }
  });

  it('gives every input that bends the framing a fresh connection', async () => {
    const pool = new Pool({ host: '127.0.0.1', port }, 4);
    try {
      const before = connections;
      const bent = Buffer.from(`POST /checkv2 HTTP/1.1\nContent-Length: ${MSG.length}\n\n${MSG}`);
      for (let i = 0; i < 3; i++) assert.equal(status(await pool.send(bent)), 200);
      assert.equal(connections - before, 3);
    } finally {
      pool.close();
    }
  });

  it('a pooled connection the server closed while idle is dropped, not sent on', async () => {
    const pool = new Pool({ host: '127.0.0.1', port }, 1);
    try {
      const before = connections;
      assert.equal(status(await pool.send(Buffer.from('GET /ping HTTP/1.1\r\n\r\n'))), 200);
      // Past the server's idle time-out (300 ms; waited generously): it closes the connection the pool holds.
      await new Promise((r) => setTimeout(r, 3000));
      const o = await pool.send(post('/checkv2', MSG));
      assert.equal(status(o), 200);
      assert.equal(connections - before, 2);
    } finally {
      pool.close();
    }
  });

  it('a reply that closes the connection takes it out of the pool', async () => {
    const pool = new Pool({ host: '127.0.0.1', port }, 1);
    try {
      const before = connections;
      // An unknown command: the reply says Connection: close.
      const o = await pool.send(Buffer.from('GET /nope HTTP/1.1\r\n\r\n'));
      assert.equal(status(o), 404);
      assert.equal(status(await pool.send(Buffer.from('GET /ping HTTP/1.1\r\n\r\n'))), 200);
      assert.equal(connections - before, o.kind === 'reply' && /connection: keep-alive/i.test(o.head) ? 1 : 2);
    } finally {
      pool.close();
    }
  });

  it('send() on a fresh connection half-closes, so a body shorter than its length is answered, not awaited', async () => {
    const o = await send({ host: '127.0.0.1', port }, Buffer.from(`POST /checkv2 HTTP/1.1\r\nContent-Length: 100\r\n\r\nFrom: a@b\r\n`), 20_000);
    assert.notEqual(o.kind, 'timeout');
  });
});

describe('fuzz: Pool when a kept-alive connection dies under a request', () => {
  // A server that answers the first request of each connection (keep-alive) and closes the
  // connection without a word on the second: what a worker closing an idle connection just as
  // the pool takes it looks like from the client.
  let server: net.Server;
  let port = 0;
  let accepted = 0;
  before(async () => {
    server = net.createServer((sock) => {
      accepted++;
      let served = 0;
      let buf = '';
      sock.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        while (buf.includes('\r\n\r\n')) {
          buf = buf.slice(buf.indexOf('\r\n\r\n') + 4);
          if (served++ === 0) sock.write('HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok');
          else sock.destroy();
        }
      });
      sock.on('error', () => sock.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('sends the input again on a fresh connection and says so', async () => {
    const pool = new Pool({ host: '127.0.0.1', port }, 1);
    try {
      const first = await pool.send(Buffer.from('GET /a HTTP/1.1\r\n\r\n'));
      assert.equal(status(first), 200);
      assert.equal(first.kind === 'reply' && first.retried, undefined);
      const second = await pool.send(Buffer.from('GET /b HTTP/1.1\r\n\r\n'));
      assert.equal(status(second), 200);
      assert.equal(second.retried, true);
      assert.equal(accepted, 2);
    } finally {
      pool.close();
    }
  });
});

describe('fuzz: known bugs', () => {
  const cases: Array<[string, string, string | undefined]> = [
    ['NBSP in a Received header', 'Received: from a\xc2\xa0(b) by c\r\nFrom: x@y\r\n\r\nhi\r\n', 'received-odd-whitespace'],
    ['VT on a Received continuation line', 'Received: from a\r\n\tby\x0bc\r\nFrom: x@y\r\n\r\nhi\r\n', 'received-odd-whitespace'],
    ['lower case, LF line ends', 'x: 1\nreceived: from a\xe3\x80\x80b\n\nhi\n', 'received-odd-whitespace'],
    ['NBSP in another header', 'Received: from a by b\r\nSubject: a\xc2\xa0b\r\n\r\nhi\r\n', undefined],
    ['Received after a bare CR is not a line start', 'X: 1\rReceived: a\xc2\xa0b\r\n\r\nhi\r\n', undefined],
    ['200 DKIM signatures', `${'DKIM-Signature: v=1; a=rsa-sha256\r\n'.repeat(200)}\r\nhi\r\n`, 'signature-flood'],
    ['199 DKIM signatures', `${'DKIM-Signature: v=1; a=rsa-sha256\r\n'.repeat(199)}\r\nhi\r\n`, undefined],
  ];
  for (const [name, text, want] of cases) it(name, () => assert.equal(knownBug(Buffer.from(text, 'latin1')), want));
});

describe('fuzz: determinism', () => {
  it('the generator stream is the one campaigns were seeded with', () => {
    // Pinned: changing the stream would silently change what input N of every seed is.
    const r = Rng.forInput(1, 'mime', 0);
    assert.deepEqual(Array.from({ length: 4 }, () => r.u32()), PINNED_STREAM);
  });

  it('input N of a surface is the same bytes every time, whatever was generated before', async () => {
    const seeds = await loadSeeds(process.cwd(), false);
    const ctx: SurfaceContext = { seeds, mapIds: [], writableMapIds: [] };
    const digest = (make: () => Buffer[]): string => {
      const h = createHash('sha256');
      for (const b of make()) h.update(b);
      return h.digest('hex');
    };
    for (const surface of [v2Surface(ctx), v3Surface(ctx), httpcryptSurface(ctx), mimeSurface(ctx)]) {
      const forward = digest(() => Array.from({ length: 30 }, (_, i) => surface.generate(Rng.forInput(7, surface.name, i)).bytes));
      const backward = digest(() => Array.from({ length: 30 }, (_, i) => surface.generate(Rng.forInput(7, surface.name, 29 - i)).bytes).reverse());
      assert.equal(backward, forward, surface.name);
    }
  });
});

describe('fuzz: X25519 through node:crypto', () => {
  it('gives the public and shared keys of the server implementation', () => {
    const server = x25519.getPublicKey(new Uint8Array(32).fill(7));
    const shared = sharedKeyFor(server);
    for (let i = 0; i < 20; i++) {
      const sk = new Rng(i).bytes(32);
      sk[0]! &= 248;
      sk[31]! &= 127;
      sk[31]! |= 64;
      const secret = new Uint8Array(sk);
      assert.deepEqual(Buffer.from(publicKeyOf(secret)), Buffer.from(x25519.getPublicKey(secret)));
      assert.deepEqual(Buffer.from(shared(secret)), Buffer.from(sharedKey(secret, server)!));
    }
  });
});

/** Rng.forInput(1, "mime", 0): its first four draws, as the original sfc32 code gave them. */
const PINNED_STREAM = [2869617031, 2895935395, 4054982550, 1667194446];
