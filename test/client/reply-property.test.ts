// Property tests for the client's reply decoder (src/client/reply.ts, multipart.ts, zstd.ts):
// whatever a server sends back — random bytes, mutated valid replies, bad zstd, wrong
// Message-Offset, broken multipart — the caller gets a decoded reply or a ScanClientError,
// never another exception, and never a silently truncated or inflated-without-bound body.
// Valid replies round-trip. Run counts and seed: test/helpers/property.ts.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fc from 'fast-check';
import { encode as msgpackEncode } from '@msgpack/msgpack';
import { decodeReply, errorText, type ReplyHeaders } from '../../src/client/reply.js';
import { buildMultipart, parseMultipart } from '../../src/client/multipart.js';
import { CLIENT_ERROR_CODES } from '../../src/client/errors.js';
import { zstdCompress as serverZstd } from '../../src/http/zstd.js';
import { zstdDecompress } from '../../src/client/zstd.js';
import { parseServer, ScanClient } from '../../src/client/scan-client.js';
import { sendEncrypted } from '../../src/client/encrypted.js';
import { generateKeypair } from '../../src/crypto/keypair.js';
import { fcParams, mutated, noisyBytes } from '../helpers/property.js';

/** Runs `fn`; a throw must be a ScanClientError (matched on its code). */
function expectClientError<T>(fn: () => T): { ok: true; value: T } | { ok: false; code: string } {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('MAILSIFT_CLIENT_')) {
      throw new Error(`threw something that is not a ScanClientError: ${(err as Error)?.stack ?? String(err)}`);
    }
    return { ok: false, code };
  }
}

const resultArb = fc.record({
  action: fc.constantFrom('reject', 'no action', 'add header'),
  score: fc.integer({ min: -50, max: 50 }),
  symbols: fc.dictionary(fc.stringMatching(/^[A-Z_]{1,10}$/), fc.record({ name: fc.string({ maxLength: 5 }), score: fc.integer() }, { noNullPrototype: true }), { maxKeys: 3, noNullPrototype: true }),
}, { requiredKeys: ['action', 'score'], noNullPrototype: true });

interface ReplyCase {
  headers: ReplyHeaders;
  body: Buffer;
  result: Record<string, unknown>;
  rewritten: Buffer | undefined;
}

/** A reply as mailsift sends it: v2 (JSON/msgpack, Message-Offset, whole-body zstd) or v3 multipart. */
const replyArb: fc.Arbitrary<ReplyCase> = fc
  .record({
    result: resultArb,
    msgpack: fc.boolean(),
    zstd: fc.boolean(),
    v3: fc.boolean(),
    rewritten: fc.option(fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u)), { nil: undefined }),
  })
  .map(({ result, msgpack, zstd, v3, rewritten }) => {
    const payload = msgpack ? Buffer.from(msgpackEncode(result)) : Buffer.from(JSON.stringify(result));
    const type = msgpack ? 'application/msgpack' : 'application/json';
    if (v3) {
      const parts = [{ name: 'result', contentType: type, body: zstd ? serverZstd(payload) : payload, ...(zstd ? { contentEncoding: 'zstd' } : {}) }];
      if (rewritten) parts.push({ name: 'body', contentType: 'application/octet-stream', body: zstd ? serverZstd(rewritten) : rewritten, ...(zstd ? { contentEncoding: 'zstd' } : {}) });
      const boundary = 'reply-boundary-1';
      return { headers: { 'content-type': `multipart/mixed; boundary="${boundary}"` }, body: buildMultipart(boundary, parts), result, rewritten };
    }
    const headers: ReplyHeaders = { 'content-type': type };
    let body: Buffer = rewritten ? Buffer.concat([payload, rewritten]) : payload;
    if (rewritten) headers['message-offset'] = String(payload.length);
    if (zstd) {
      body = serverZstd(body);
      headers['compression'] = 'zstd';
    }
    return { headers, body, result, rewritten };
  });

describe('scan reply decoding', () => {
  it('valid replies in every negotiated form decode to the result and the rewritten message', () => {
    fc.assert(
      fc.property(replyArb, (c) => {
        const r = decodeReply(200, c.headers, c.body);
        assert.deepEqual(r.result, c.result);
        if (c.rewritten) assert.ok(r.rewritten?.equals(c.rewritten));
        else assert.equal(r.rewritten, undefined);
      }),
      fcParams(200),
    );
  });

  it('random and mutated replies decode or fail with a ScanClientError; a decoded body is never a truncated one', () => {
    const headerVariants = fc.record({
      'content-type': fc.constantFrom('application/json', 'application/msgpack', 'multipart/mixed; boundary="reply-boundary-1"', 'multipart/form-data', 'text/plain'),
      compression: fc.option(fc.constantFrom('zstd', 'gzip'), { nil: undefined }),
      'message-offset': fc.option(fc.oneof(fc.nat().map(String), fc.constantFrom('-1', 'x', '1e3', '')), { nil: undefined }),
    }, { requiredKeys: ['content-type'] });
    const cases = fc.oneof(
      fc.tuple(headerVariants, noisyBytes(300)).map(([headers, body]) => ({ headers, body, original: undefined as ReplyCase | undefined })),
      fc.tuple(replyArb, fc.array(fc.record({ kind: fc.constantFrom('truncate', 'flip', 'token'), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 3 })).map(([c, muts]) => {
        let body = c.body;
        for (const m of muts) {
          const at = body.length === 0 ? 0 : m.at % body.length;
          if (m.kind === 'truncate') body = body.subarray(0, at);
          else if (m.kind === 'flip' && body.length > 0) {
            body = Buffer.from(body);
            body[at] = m.byte;
          } else body = Buffer.concat([body.subarray(0, at), Buffer.from('--reply-boundary-1\r\n'), body.subarray(at)]);
        }
        return { headers: c.headers, body, original: c };
      }),
    );
    fc.assert(
      fc.property(cases, ({ headers, body, original }) => {
        const r = expectClientError(() => decodeReply(200, headers, body));
        if (!r.ok) assert.equal(r.code, CLIENT_ERROR_CODES.BAD_REPLY);
        // A truncated compressed rewritten message must not come back as if it were whole.
        if (r.ok && original?.rewritten && r.value.rewritten && body.length < original.body.length && headers['compression'] === 'zstd') {
          assert.ok(r.value.rewritten.equals(original.rewritten), 'a truncated zstd reply decoded to a different message');
        }
        const text = errorText(400, 'Bad Request', headers, body);
        assert.equal(typeof text, 'string');
      }),
      fcParams(300),
    );
  });

  it('multipart bodies the client writes read back; random ones only throw plain Errors', () => {
    const partArb = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
      contentType: fc.constantFrom('application/json', 'application/octet-stream'),
      body: fc.uint8Array({ maxLength: 100 }).map((u) => Buffer.from(u)),
    });
    fc.assert(
      fc.property(fc.array(partArb, { minLength: 1, maxLength: 5 }), (parts) => {
        const boundary = 'b-0123456789';
        if (parts.some((p) => p.body.includes(`--${boundary}`))) return;
        const back = parseMultipart(buildMultipart(boundary, parts), boundary);
        assert.deepEqual(back.map((p) => [p.name, p.contentType, p.body.toString('hex')]), parts.map((p) => [p.name, p.contentType, p.body.toString('hex')]));
      }),
      fcParams(200),
    );
    fc.assert(
      fc.property(fc.oneof(noisyBytes(300), mutated(fc.constant(buildMultipart('b', [{ name: 'result', contentType: 'application/json', body: Buffer.from('{}') }])), 6, ['--b', '--b--', '\r\n', '\n\n'])), (body) => {
        try {
          parseMultipart(body, 'b');
        } catch (err) {
          assert.ok(err instanceof Error);
        }
      }),
      fcParams(300),
    );
  });

  it('regression: a truncated zstd frame is an error, not the bytes decoded so far, and later replies still decode', () => {
    const json = Buffer.from('{"action":"reject","score":15}');
    const frame = serverZstd(json); // no content-size field, as the server writes replies
    const headers = { 'content-type': 'application/json', compression: 'zstd' };
    // zstd-napi's shared decoder returned the 29 bytes decoded so far here, then refused every
    // later frame ("Operation not authorized at current processing stage") for the whole process.
    assert.throws(() => zstdDecompress(frame.subarray(0, frame.length - 1)), { code: CLIENT_ERROR_CODES.BAD_REPLY });
    assert.throws(() => decodeReply(200, headers, frame.subarray(0, frame.length - 1)), { code: CLIENT_ERROR_CODES.BAD_REPLY });
    assert.deepEqual(decodeReply(200, headers, frame).result, { action: 'reject', score: 15 });
  });

  it('regression: a reply that inflates past the client bound is refused while decoding, not after', () => {
    // 64 MiB of zeros compresses to a few KiB: a misbehaving server could send far more.
    const zeros = serverZstd(Buffer.alloc(64 * 1024 * 1024));
    assert.ok(zeros.length < 64 * 1024);
    assert.throws(() => zstdDecompress(zeros, 1024 * 1024), { code: CLIENT_ERROR_CODES.BAD_REPLY });
    assert.equal(zstdDecompress(serverZstd(Buffer.from('ok'))).toString(), 'ok');
  });
});

describe('replies from a misbehaving server, over a socket', () => {
  /** Answers every connection with the next queued bytes (after the request head is in), then closes. */
  let server: net.Server;
  let port = 0;
  let next: { bytes: Buffer; close: boolean } = { bytes: Buffer.alloc(0), close: true };
  before(async () => {
    server = net.createServer((sock) => {
      const answer = next;
      let seen = Buffer.alloc(0);
      sock.on('data', (d: Buffer) => {
        const first = seen.length === 0 || !seen.includes('\r\n\r\n');
        seen = Buffer.concat([seen, d]);
        if (first && seen.includes('\r\n\r\n')) {
          sock.write(answer.bytes);
          if (answer.close) sock.end();
        }
      });
      sock.on('error', () => sock.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const serverKey = generateKeypair().publicKey;
  /** Short: a reply that never completes on an open connection ends in the client's time-out. */
  const CLIENT_TIMEOUT_MS = 800;
  /** Most replies end with a close; some leave the connection open. */
  const closeAfterArb = fc.integer({ min: 0, max: 4 }).map((n) => n > 0);
  const replyBytes = fc.oneof(
    noisyBytes(300),
    replyArb.map((c) => {
      const head = Object.entries(c.headers).map(([k, v]) => `${k}: ${String(v)}\r\n`).join('');
      return Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${c.body.length}\r\n${head}\r\n`), c.body]);
    }),
  );

  it('the scan client resolves with a reply or rejects with a ScanClientError, within its time-out', async () => {
    const client = new ScanClient({ server: `127.0.0.1:${port}`, timeoutMs: CLIENT_TIMEOUT_MS, keepAlive: false });
    try {
      await fc.assert(
        fc.asyncProperty(fc.oneof(replyBytes, mutated(replyBytes, 4)), closeAfterArb, async (bytes, closeAfter) => {
          next = { bytes, close: closeAfter };
          const started = Date.now();
          try {
            await client.scan(Buffer.from('Subject: x\r\n\r\nhi\r\n'));
          } catch (err) {
            const code = (err as { code?: unknown }).code;
            assert.ok(typeof code === 'string' && code.startsWith('MAILSIFT_CLIENT_'), `not a ScanClientError: ${(err as Error)?.stack ?? String(err)}`);
          }
          assert.ok(Date.now() - started < CLIENT_TIMEOUT_MS + 5000, 'the client outlived its time-out');
        }),
        fcParams(30),
      );
    } finally {
      client.close();
    }
  });

  it('the encrypted exchange resolves or rejects with a ScanClientError, within its time-out', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(replyBytes, mutated(replyBytes, 4)), closeAfterArb, async (bytes, closeAfter) => {
        next = { bytes, close: closeAfter };
        try {
          await sendEncrypted({ host: '127.0.0.1', port }, serverKey, { method: 'POST', path: '/checkv2', headers: [], body: Buffer.from('x') }, { timeoutMs: CLIENT_TIMEOUT_MS, maxReplyBytes: 1 << 20 });
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          assert.ok(typeof code === 'string' && code.startsWith('MAILSIFT_CLIENT_'), `not a ScanClientError: ${(err as Error)?.stack ?? String(err)}`);
        }
      }),
      fcParams(20),
    );
  });

  it('parseServer reads any -h value or refuses it with BAD_REQUEST', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 40, unit: 'binary' }), fc.tuple(fc.oneof(fc.ipV4(), fc.ipV6().map((a) => `[${a}]`), fc.domain()), fc.option(fc.integer({ min: -1, max: 70000 }))).map(([h, p]) => (p === null ? h : `${h}:${p}`))), (spec) => {
        try {
          const a = parseServer(spec);
          assert.ok(a.socketPath !== undefined || (Number.isInteger(a.port) && a.port! > 0 && a.port! <= 65535));
        } catch (err) {
          assert.equal((err as { code?: unknown }).code, CLIENT_ERROR_CODES.BAD_REQUEST);
        }
      }),
      fcParams(300),
    );
  });
});
