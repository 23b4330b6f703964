// A property at the socket: random and mutated requests (v2 heads and bodies, chunked framing,
// /checkv3 forms, zstd bodies, Settings values, legacy SPAMC/RSPAMC heads, plain garbage) sent
// over a real TCP connection to a running worker always get an answer with a status — or a
// clean close when nothing HTTP-like was sent — within a time limit; no answer is a 500 (an
// uncoded error), nothing is logged as an error, and the worker keeps answering /ping.
// Run counts and seed: test/helpers/property.ts (FC_NUM_RUNS, FC_SEED).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { encode as msgpackEncode } from '@msgpack/msgpack';
import { zstdCompress } from '../../src/http/zstd.js';
import { createTransport } from '../../src/http/server.js';
import { buildMultipart } from '../../src/client/multipart.js';
import { SCAN_FLAGS } from '../../src/core/scan-types.js';
import { FIXTURES, startRealWorker, type CapturingLog } from '../protocol/harness.js';
import { fcParams, mutated, noisyBytes, splitAt } from '../helpers/property.js';

/** Whole-request budget of the worker under test: an unfinished request is answered 408 after it. */
const REQUEST_TIMEOUT_MS = 1000;
const KEEPALIVE_TIMEOUT_MS = 1500;
/** Generous for a loaded 2-core machine: a small scan takes tens of milliseconds. */
const ANSWER_WITHIN_MS = 20_000;

const MESSAGES = ['crlf-simple.eml', 'lf-simple.eml', 'gtube.eml', 'utf.eml', 'url1.eml', 'subject1.eml'].map((f) => readFileSync(join(FIXTURES, 'messages', f)));

// ---------------------------------------------------------------------------------------------
// Requests.

const valueNoise = noisyBytes(40).map((b) => b.toString('latin1').replace(/[\r\n]/g, ''));
const headerArb: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constant('IP'), fc.oneof(fc.ipV4(), fc.ipV6(), valueNoise)),
  fc.tuple(fc.constantFrom('From', 'Rcpt', 'Deliver-To'), fc.oneof(fc.emailAddress(), fc.emailAddress().map((a) => `<${a}>`), valueNoise)),
  fc.tuple(fc.constantFrom('Helo', 'Hostname', 'User', 'Queue-Id', 'Log-Tag', 'MTA-Tag', 'Settings-ID'), fc.oneof(fc.domain(), valueNoise)),
  fc.tuple(fc.constant('Flags'), fc.uniqueArray(fc.constantFrom(...SCAN_FLAGS, 'bogus'), { maxLength: 4 }).map((f) => f.join(','))),
  fc.tuple(fc.constant('Settings'), fc.oneof(
    fc.constantFrom('{"actions":{"reject":1}}', 'actions { reject = 1; } subject = "[UCL] %s"', '{"symbols_enabled":["GTUBE"]}', '__proto__ { x = 1 }', '{"groups_disabled":["headers"]}', '{"symbols":["__proto__", "X"]}'),
    valueNoise,
  )),
  fc.tuple(fc.constantFrom('Compression', 'Content-Encoding'), fc.constantFrom('zstd', 'gzip', 'ZSTD', '')),
  fc.tuple(fc.constant('Dictionary'), fc.constantFrom('0', '1', 'x', '99999999999999999999')),
  fc.tuple(fc.constant('Accept'), fc.constantFrom('application/msgpack', 'multipart/form-data', '*/*')),
  fc.tuple(fc.constant('Accept-Encoding'), fc.constantFrom('zstd', 'gzip')),
  fc.tuple(fc.constantFrom('Raw', 'Pass', 'Log', 'URL-Format'), fc.constantFrom('yes', 'all', 'no', 'extended')),
  fc.tuple(fc.constantFrom('maxscore', 'softscore'), fc.constantFrom('5', '-1', '1e309', 'x')),
  fc.tuple(fc.constant('Expect'), fc.constant('100-continue')),
  fc.tuple(fc.constant('Key'), fc.constantFrom('abc', 'aaaaaaaa=bbbb', '=')),
);

type Framing = 'length' | 'chunked' | 'none';

const bodyArb: fc.Arbitrary<{ body: Buffer; extra: Array<[string, string]> }> = fc.oneof(
  fc.constantFrom(...MESSAGES).map((m) => ({ body: m, extra: [] })),
  fc.constantFrom(...MESSAGES).map((m) => ({ body: zstdCompress(m), extra: [['Compression', 'zstd']] as Array<[string, string]> })),
  fc.tuple(fc.constantFrom(...MESSAGES), fc.boolean(), fc.boolean()).map(([m, msgpack, zstd]) => {
    const meta = { from: 'a@example.com', rcpt: ['b@example.net'], ip: '192.0.2.1', flags: ['groups'] };
    const body = buildMultipart('prop-boundary', [
      { name: 'metadata', contentType: msgpack ? 'application/msgpack' : 'application/json', body: msgpack ? Buffer.from(msgpackEncode(meta)) : Buffer.from(JSON.stringify(meta)) },
      { name: 'message', contentType: 'message/rfc822', body: zstd ? zstdCompress(m) : m, ...(zstd ? { contentEncoding: 'zstd' } : {}) },
    ]);
    return { body, extra: [['Content-Type', 'multipart/form-data; boundary=prop-boundary']] as Array<[string, string]> };
  }),
  fc.uint8Array({ maxLength: 300 }).map((u) => ({ body: Buffer.from(u), extra: [] })),
);

const httpRequestArb = fc
  .record({
    method: fc.constantFrom('POST', 'POST', 'GET', 'PUT', 'HEAD'),
    path: fc.constantFrom('/checkv2', '/checkv2', '/checkv3', '/check', '/symbols', '/skip', '/ping', '/nope', '/checkv2?ip=192.0.2.1&from=a@example.com&flags=groups'),
    version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'),
    headers: fc.array(headerArb, { maxLength: 6 }),
    body: bodyArb,
    framing: fc.constantFrom<Framing>('length', 'length', 'chunked', 'none'),
    cuts: fc.array(fc.nat(), { maxLength: 3 }),
    close: fc.boolean(),
  })
  .map((r) => {
    let head = `${r.method} ${r.path} ${r.version}\r\n`;
    for (const [k, v] of [...r.body.extra, ...r.headers]) head += `${k}: ${v}\r\n`;
    if (r.close) head += 'Connection: close\r\n';
    let body = r.body.body;
    if (r.framing === 'length') head += `Content-Length: ${body.length}\r\n`;
    else if (r.framing === 'chunked') {
      head += 'Transfer-Encoding: chunked\r\n';
      const pieces = splitAt(body, r.cuts).filter((p) => p.length > 0);
      body = Buffer.concat([...pieces.flatMap((p) => [Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]), Buffer.from('0\r\n\r\n')]);
    }
    return Buffer.concat([Buffer.from(`${head}\r\n`, 'utf8'), body]);
  });

const legacyRequestArb = fc
  .tuple(fc.constantFrom('CHECK RSPAMC/1.3', 'SYMBOLS SPAMC/1.2', 'PROCESS SPAMC/1.2', 'CHECK SPAMC/1.5'), fc.constantFrom(...MESSAGES), fc.array(headerArb, { maxLength: 3 }))
  .map(([line, m, headers]) => Buffer.concat([Buffer.from(`${line}\r\nContent-length: ${m.length}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 'utf8'), m]));

/** Many requests answered at once, pipelined in one write (they used to recurse once per request). */
const floodArb = fc
  .tuple(fc.constantFrom('GET /ping HTTP/1.1\r\n\r\n', 'GET /nope HTTP/1.1\r\n\r\n', 'HEAD /ping HTTP/1.1\r\n\r\n', '\r\n'), fc.integer({ min: 100, max: 8000 }), fc.option(httpRequestArb, { nil: undefined }))
  .map(([one, n, tail]) => Buffer.concat([Buffer.from(one.repeat(n)), tail ?? Buffer.alloc(0)]));

const streamArb = fc.oneof(
  { weight: 1, arbitrary: floodArb },
  { weight: 3, arbitrary: httpRequestArb },
  { weight: 4, arbitrary: mutated(httpRequestArb, 4) },
  { weight: 1, arbitrary: fc.array(httpRequestArb, { minLength: 2, maxLength: 3 }).map((rs) => Buffer.concat(rs)) },
  { weight: 1, arbitrary: mutated(legacyRequestArb, 3) },
  { weight: 1, arbitrary: noisyBytes(400) },
);

// ---------------------------------------------------------------------------------------------
// One exchange over a real socket.

interface Outcome {
  data: Buffer;
  closed: boolean;
  ms: number;
}

/**
 * Writes `pieces`, optionally half-closes, and reads until the server closes; without a
 * half-close, reading also stops once one whole reply head is in (the connection may stay
 * open for keep-alive).
 */
function exchange(port: number, pieces: Buffer[], halfClose: boolean): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const sock = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    let settled = false;
    const done = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ data: Buffer.concat(parts), closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => done(false), ANSWER_WITHIN_MS);
    sock.on('data', (d: Buffer) => {
      parts.push(d);
      if (!halfClose && withoutContinue(Buffer.concat(parts).toString('latin1')).includes('\r\n\r\n')) done(false);
    });
    sock.on('end', () => done(true));
    sock.on('close', () => done(true));
    sock.on('error', (err: NodeJS.ErrnoException) => {
      // The server may reset after answering when request bytes were left unread.
      if (parts.length > 0 || err.code === 'ECONNRESET' || err.code === 'EPIPE') done(true);
      else if (!settled) {
        settled = true;
        clearTimeout(timer);
        reject(err);
      }
    });
    sock.on('connect', () => {
      for (const p of pieces) if (!sock.destroyed) sock.write(p);
      if (halfClose && !sock.destroyed) sock.end();
    });
  });
}

/** The interim `100 Continue` heads an `Expect: 100-continue` request gets before its answer. */
function withoutContinue(text: string): string {
  let t = text;
  while (t.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) t = t.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
  return t;
}

const STATUS_LINE = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/;
const LEGACY_LINE = /^(RSPAMD\/1\.3|SPAMD\/1\.[015]) \d+ [^\r\n]*\r\n/;

describe('the worker over a socket, under random requests', () => {
  let port = 0;
  let log: CapturingLog;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker({ maxMessage: 256 * 1024, transport: { requestTimeoutMs: REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: KEEPALIVE_TIMEOUT_MS } });
    port = w.port;
    log = w.log;
    close = w.close;
  });
  after(() => close());

  async function assertPings(): Promise<void> {
    const r = await exchange(port, [Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n')], true);
    assert.match(r.data.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\npong\r\n$/, 'the worker stopped answering /ping');
  }

  it('every request gets a status (or a clean close for blank input) in time, never a 500, and /ping keeps answering', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(streamArb, fc.array(fc.nat(), { maxLength: 3 }), fc.integer({ min: 0, max: 9 }), async (bytes, cuts, h) => {
        const halfClose = h > 0; // one in ten leaves the connection open: the time-outs must answer
        const r = await exchange(port, splitAt(bytes, cuts), halfClose);
        assert.ok(r.ms < ANSWER_WITHIN_MS, `no answer within ${ANSWER_WITHIN_MS} ms`);
        const text = withoutContinue(r.data.toString('latin1'));
        if (text.length === 0) {
          assert.ok(r.closed, 'neither an answer nor a close');
          assert.equal(bytes.toString('latin1').trim(), '', `closed without an answer to ${JSON.stringify(bytes.subarray(0, 120).toString('latin1'))}`);
          seen.set('close', (seen.get('close') ?? 0) + 1);
          return;
        }
        const m = STATUS_LINE.exec(text);
        if (m) {
          assert.notEqual(m[1], '500', `500 for ${JSON.stringify(bytes.subarray(0, 200).toString('latin1'))}: ${text.slice(0, 300)}`);
          seen.set(m[1]!, (seen.get(m[1]!) ?? 0) + 1);
        } else {
          assert.match(text, LEGACY_LINE, `not a reply: ${JSON.stringify(text.slice(0, 200))}`);
          seen.set('legacy', (seen.get('legacy') ?? 0) + 1);
        }
        const errors = log.lines.filter((l) => l.level === 'error');
        assert.deepEqual(errors, [], 'the worker logged an error (an uncoded failure)');
      }),
      fcParams(40),
    );
    await assertPings();
    if (process.env.FC_SHOW) console.log(JSON.stringify([...seen]));
    // The generators reach the scan path and the refusals alike (a silent generator bug would not).
    assert.ok((seen.get('200') ?? 0) > 0, `statuses seen: ${JSON.stringify([...seen])}`);
    assert.ok([...seen.keys()].some((k) => k.startsWith('4')), `statuses seen: ${JSON.stringify([...seen])}`);
  });

  it('regression: thousands of pipelined requests in one write are all answered, in order, and the worker lives', async () => {
    const n = 8000;
    const r = await exchange(port, [Buffer.from('GET /ping HTTP/1.1\r\n\r\n'.repeat(n) + 'GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n')], true);
    const text = r.data.toString('latin1');
    assert.equal(text.split('HTTP/1.1 200 OK\r\n').length - 1, n);
    assert.ok(text.lastIndexOf('HTTP/1.1 200 OK') < text.indexOf('HTTP/1.1 404 '), 'the 404 comes last');
    assert.deepEqual(log.lines.filter((l) => l.level === 'error'), []);
    await assertPings();
  });

  it('a client that reads its pipelined replies late still gets every one of them', async () => {
    const n = 10_000;
    const got = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1');
      const parts: Buffer[] = [];
      sock.pause(); // read nothing while the server answers: its replies must wait, not pile up
      sock.on('connect', () => {
        sock.write('GET /ping HTTP/1.1\r\n\r\n'.repeat(n));
        sock.end('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n');
        setTimeout(() => sock.resume(), 500);
      });
      sock.on('data', (d: Buffer) => parts.push(d));
      const giveUp = setTimeout(() => sock.destroy(), ANSWER_WITHIN_MS);
      sock.on('close', () => {
        clearTimeout(giveUp);
        resolve(Buffer.concat(parts).toString('latin1'));
      });
      sock.on('error', reject);
    });
    assert.equal(got.split('HTTP/1.1 200 OK\r\n').length - 1, n + 1);
    await assertPings();
  });

  it('regression: a Settings header with a `__proto__` key and a folded Rcpt are scanned normally', async () => {
    const msg = MESSAGES[0]!;
    const req = Buffer.concat([Buffer.from(`POST /checkv2 HTTP/1.1\r\nConnection: close\r\nSettings: __proto__ { polluted = 1 }\r\nRcpt: a@example.com,\r\n b@example.net\r\nContent-Length: ${msg.length}\r\n\r\n`), msg]);
    const r = await exchange(port, [req], true);
    assert.match(r.data.toString('latin1'), /^HTTP\/1\.1 200 /);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    await assertPings();
  });
});

describe('transport back-pressure', () => {
  it('stops taking pipelined requests while the peer leaves its replies unread, and answers them all once it reads', async () => {
    const n = 40;
    const reply = Buffer.alloc(2 * 1024 * 1024, 0x61);
    let handled = 0;
    const t = createTransport(() => {
      handled++;
      return { status: 200, contentType: 'text/plain', body: reply };
    });
    await new Promise<void>((r) => t.server.listen(0, '127.0.0.1', r));
    const port = (t.server.address() as net.AddressInfo).port;
    try {
      const sock = net.connect(port, '127.0.0.1');
      sock.pause();
      await new Promise<void>((r, j) => sock.once('connect', r).once('error', j));
      sock.write('GET /big HTTP/1.1\r\n\r\n'.repeat(n));
      await new Promise((r) => setTimeout(r, 700));
      // 80 MiB of replies: without back-pressure all of them sit in the worker's memory by now;
      // with it the worker stops once the socket buffers are full.
      const whilePaused = handled;
      const want = n * reply.length;
      let got = 0;
      await new Promise<void>((resolve, reject) => {
        const giveUp = setTimeout(() => reject(new Error(`only ${got} of ${want} bytes`)), ANSWER_WITHIN_MS);
        sock.on('data', (d: Buffer) => {
          got += d.length;
          if (got >= want) {
            clearTimeout(giveUp);
            resolve();
          }
        });
        sock.resume();
      });
      sock.destroy();
      assert.ok(whilePaused < n, `all ${n} requests were answered into an unread socket`);
      assert.equal(handled, n);
    } finally {
      await t.close();
    }
  });
});
