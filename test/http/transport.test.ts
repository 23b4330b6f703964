// The hand-written HTTP/1.x transport against hostile and unusual clients, over real sockets
// to a real worker: framing (length, chunked, close-delimited), limits, time-outs,
// keep-alive and pipelining. After every abuse the worker must still answer /ping.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { exchange, FIXTURES, header, parseReply, postV2, startRealWorker } from '../protocol/harness.js';
import { parseTarget } from '../../src/http/request-head.js';

const LF_MSG = readFileSync(join(FIXTURES, 'messages', 'lf-simple.eml'));
const CRLF_MSG = readFileSync(join(FIXTURES, 'messages', 'crlf-simple.eml'));

describe('transport', () => {
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker();
    port = w.port;
    close = w.close;
  });
  after(() => close());

  async function assertAlive(): Promise<void> {
    const { data } = await exchange(port, Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n'));
    const r = parseReply(data);
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'pong\r\n');
  }

  async function jsonError(bytes: Buffer, opts: Parameters<typeof exchange>[2] = {}): Promise<{ status: number; error: string; reason: string }> {
    const { data } = await exchange(port, bytes, opts);
    const r = parseReply(data);
    assert.equal(header(r, 'Content-Type'), 'application/json');
    const body = JSON.parse(r.body.toString()) as { error: string; error_domain: string };
    assert.equal(typeof body.error_domain, 'string');
    assert.equal(r.reason, body.error);
    return { status: r.status, error: body.error, reason: r.reason };
  }

  it('reads chunked bodies with extensions and trailers', async () => {
    const half = Math.floor(CRLF_MSG.length / 2);
    const a = CRLF_MSG.subarray(0, half);
    const b = CRLF_MSG.subarray(half);
    const req = Buffer.concat([
      Buffer.from('POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n'),
      Buffer.from(`${a.length.toString(16)};ext=1\r\n`), a, Buffer.from('\r\n'),
      Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n'),
      Buffer.from('0\r\nX-Trailer: yes\r\n\r\n'),
    ]);
    const r = parseReply((await exchange(port, req)).data);
    assert.equal(r.status, 200);
    assert.equal((JSON.parse(r.body.toString()) as Record<string, unknown>)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('truncated chunked body → 400, worker keeps serving', async () => {
    const req = Buffer.from('POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n100\r\nFrom: a@b\r\n');
    const e = await jsonError(req);
    assert.equal(e.status, 400);
    assert.match(e.error, /truncated/i);
    await assertAlive();
  });

  it('invalid chunk size → 400', async () => {
    const e = await jsonError(Buffer.from('POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'));
    assert.equal(e.status, 400);
    assert.match(e.error, /chunk/i);
  });

  it('declared 60 MiB body → 413 before the body is sent', async () => {
    const e = await jsonError(Buffer.from(`POST /checkv2 HTTP/1.1\r\nContent-Length: ${60 * 1024 * 1024}\r\n\r\n`), { halfClose: false, timeoutMs: 5000 });
    assert.equal(e.status, 413);
    await assertAlive();
  });

  it('streamed 60 MiB chunked body → 413 without buffering it all', async () => {
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    const chunk = Buffer.concat([Buffer.from(`${mib.length.toString(16)}\r\n`), mib, Buffer.from('\r\n')]);
    const pieces = [Buffer.from('POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n')];
    for (let i = 0; i < 60; i++) pieces.push(chunk);
    const { data } = await exchange(port, Buffer.alloc(0), { chunks: pieces, timeoutMs: 20_000 });
    const r = parseReply(data);
    assert.equal(r.status, 413);
    await assertAlive();
  });

  it('binary garbage → 400', async () => {
    const garbage = Buffer.concat([randomBytes(4096).map((b) => (b === 10 ? 11 : b)), Buffer.from('\r\n\r\n')]);
    const e = await jsonError(garbage);
    assert.equal(e.status, 400);
    await assertAlive();
  });

  it('1 MiB header line → 431 as soon as the header limit is passed', async () => {
    const req = Buffer.from(`POST /checkv2 HTTP/1.1\r\nX-Big: ${'a'.repeat(1024 * 1024)}\r\n\r\n`);
    const e = await jsonError(req, { halfClose: false, timeoutMs: 5000 });
    assert.equal(e.status, 431);
    await assertAlive();
  });

  it('unknown method → 400 instead of a silent close', async () => {
    const e = await jsonError(postV2('/checkv2', [], LF_MSG).subarray(4), {});
    assert.equal(e.status, 400);
  });

  describe('time-outs', () => {
  let slowPort = 0;
  let slowClose: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker({ transport: { requestTimeoutMs: 600, keepAliveTimeoutMs: 300 } });
    slowPort = w.port;
    slowClose = w.close;
  });
  after(() => slowClose());

  it('slowloris: a trickling client gets 408 within the request budget', async () => {
    const bytes = Buffer.from('POST /checkv2 HTTP/1.1\r\nX-Slow: ' + 'a'.repeat(100));
    const chunks = [...bytes].map((b) => Buffer.from([b]));
    const started = Date.now();
    const { data } = await exchange(slowPort, Buffer.alloc(0), { chunks, chunkDelayMs: 20, halfClose: false, timeoutMs: 5000 });
    const r = parseReply(data);
    assert.equal(r.status, 408);
    assert.ok(Date.now() - started < 3000);
    await assertAlive();
  });

  it('a stalled client (headers never finished) gets 408 and is closed', async () => {
    const { data, closedByServer } = await exchange(slowPort, Buffer.from('POST /checkv2 HTTP/1.1\r\nContent-Le'), { halfClose: false, timeoutMs: 5000 });
    assert.equal(parseReply(data).status, 408);
    assert.ok(closedByServer);
  });

  it('an idle keep-alive connection is closed quietly', async () => {
    const { data, closedByServer } = await exchange(slowPort, Buffer.from('GET /ping HTTP/1.1\r\n\r\n'), { halfClose: false, timeoutMs: 5000 });
    const r = parseReply(data);
    assert.equal(r.body.toString(), 'pong\r\n');
    assert.equal(r.rest.length, 0);
    assert.ok(closedByServer);
  });
  });

  it('HTTP/1.1 keep-alive: pipelined requests answered in order on one connection', async () => {
    const one = Buffer.from(`POST /checkv2 HTTP/1.1\r\nContent-Length: ${LF_MSG.length}\r\n\r\n`);
    const req = Buffer.concat([one, LF_MSG, Buffer.from('GET /PING HTTP/1.1\r\n\r\n'), Buffer.from('GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n')]);
    const { data } = await exchange(port, req, { halfClose: false });
    const r1 = parseReply(data);
    assert.equal(r1.status, 200);
    assert.equal(header(r1, 'Connection'), 'keep-alive');
    assert.equal((JSON.parse(r1.body.toString()) as Record<string, unknown>)['message-id'], 'fixture-lf-1@example.com');
    const r2 = parseReply(r1.rest);
    assert.equal(r2.body.toString(), 'pong\r\n');
    const r3 = parseReply(r2.rest);
    assert.equal(r3.status, 404);
    assert.equal(header(r3, 'Connection'), 'close');
    assert.equal(r3.rest.length, 0);
  });

  it('HTTP/1.0 keeps the connection only with Connection: keep-alive', async () => {
    const ka = Buffer.from('GET /ping HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /ping HTTP/1.0\r\n\r\n');
    const { data, closedByServer } = await exchange(port, ka, { halfClose: false, timeoutMs: 3000 });
    const r1 = parseReply(data);
    assert.equal(header(r1, 'Connection'), 'keep-alive');
    const r2 = parseReply(r1.rest);
    assert.equal(header(r2, 'Connection'), 'close');
    assert.ok(closedByServer);
  });

  it('HTTP/1.0 without Content-Length: the body runs until the client half-closes', async () => {
    const req = Buffer.concat([Buffer.from('POST /checkv2 HTTP/1.0\r\n\r\n'), CRLF_MSG]);
    const r = parseReply((await exchange(port, req)).data);
    assert.equal(r.status, 200);
    assert.equal((JSON.parse(r.body.toString()) as Record<string, unknown>)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('HTTP/1.0 without Content-Length and nothing after the headers: empty body, no hang', async () => {
    const { data } = await exchange(port, Buffer.from('POST /checkv2 HTTP/1.0\r\n\r\n'), { halfClose: false, timeoutMs: 3000 });
    const r = parseReply(data);
    assert.equal(r.status, 200);
    const json = JSON.parse(r.body.toString()) as Record<string, unknown>;
    assert.equal(json.action, 'no action');
    assert.deepEqual(json.symbols, {});
  });

  it('Expect: 100-continue gets an interim 100 before the body is sent', async () => {
    const head = Buffer.from(`POST /checkv2 HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: ${CRLF_MSG.length}\r\nConnection: close\r\n\r\n`);
    const { data } = await exchange(port, Buffer.alloc(0), { chunks: [head, CRLF_MSG], chunkDelayMs: 300 });
    const interim = 'HTTP/1.1 100 Continue\r\n\r\n';
    assert.equal(data.subarray(0, interim.length).toString(), interim);
    const r = parseReply(data.subarray(interim.length));
    assert.equal((JSON.parse(r.body.toString()) as Record<string, unknown>)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('header values are read as UTF-8 (Settings with non-ASCII text)', async () => {
    const settings = JSON.stringify({ messages: { smtp_message: 'Grüße, 世界' } });
    const r = parseReply((await exchange(port, postV2('/checkv2', [['Settings', settings]], CRLF_MSG))).data);
    const json = JSON.parse(r.body.toString('utf8')) as { messages: Record<string, string> };
    assert.equal(json.messages.smtp_message, 'Grüße, 世界');
  });

  it('GET with a body is scanned like POST (milter proxy)', async () => {
    const req = Buffer.concat([Buffer.from(`GET /checkv2 HTTP/1.1\r\nContent-Length: ${CRLF_MSG.length}\r\nConnection: close\r\n\r\n`), CRLF_MSG]);
    const r = parseReply((await exchange(port, req)).data);
    assert.equal((JSON.parse(r.body.toString()) as Record<string, unknown>)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('reply framing: Connection, Server, Date, Content-Length, Content-Type in Rspamd order', async () => {
    const { data } = await exchange(port, Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n'));
    const head = data.subarray(0, data.indexOf('\r\n\r\n')).toString('latin1').split('\r\n');
    assert.equal(head[0], 'HTTP/1.1 200 OK');
    assert.deepEqual(head.slice(1).map((l) => l.split(':')[0]), ['Connection', 'Server', 'Date', 'Content-Length', 'Content-Type']);
    assert.match(head[3]!, /^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  });

  it('unknown path → 404 invalid command; paths match exactly', async () => {
    for (const path of ['/', '/checkv2/', '/checkv', '/metrics']) {
      const e = await jsonError(Buffer.from(`GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`));
      assert.equal(e.status, 404, path);
      assert.equal(e.error, 'invalid command');
    }
  });
});

describe('request target', () => {
  it('turns query parameters into headers: decoded, quotes stripped, names lower-cased, last wins', () => {
    const t = parseTarget('http://localhost:11333/checkv2?IP=203.0.113.5&from=%22a%40b.c%22&flags=groups&rcpt=x@y&rcpt=z@w&empty');
    assert.equal(t.path, '/checkv2');
    assert.equal(t.query.get('ip'), '203.0.113.5');
    assert.equal(t.query.get('from'), 'a@b.c');
    assert.equal(t.query.get('rcpt'), 'z@w');
    assert.equal(t.query.get('empty'), '');
  });

  it('keeps + as is (no form decoding)', () => {
    assert.equal(parseTarget('/checkv2?from=a+b@c.d').query.get('from'), 'a+b@c.d');
  });
});
