// haraka-plugin-rspamd's request bytes (captured from the real plugin) replayed over a socket:
// the reply must be one JSON.parse-able body with the fields the plugin reads.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import { ACTIONS } from '../../src/core/scan-types.js';
import { startTestWorker, type TestWorker } from '../client/worker.js';

const FIXTURES = '/work/shared/fixtures/scan';
/** A reply slower than this means the worker is stuck; the plugin's own default timeout is similar. */
const REPLY_TIMEOUT_MS = 15_000;

let worker: TestWorker;
before(async () => { worker = await startTestWorker(); });
after(async () => { await worker?.close(); });

interface HttpReply { status: number; headers: Map<string, string>; body: Buffer }

/** Decode a chunked body; undefined while the terminating chunk has not arrived. */
function dechunk(buf: Buffer): Buffer | undefined {
  const out: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(pos, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(out);
    if (buf.length < eol + 2 + size + 2) return undefined;
    out.push(buf.subarray(eol + 2, eol + 2 + size));
    pos = eol + 2 + size + 2;
  }
}

/** Send raw request bytes; read one HTTP reply (Content-Length, chunked or close-delimited). */
function exchange(port: number, request: Buffer): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => { sock.destroy(); reject(new Error('no complete reply in time')); }, REPLY_TIMEOUT_MS);
    const tryParse = (closed: boolean): void => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) { if (closed) reject(new Error(`connection closed before the headers: ${buf.toString()}`)); return; }
      const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
      const headers = new Map<string, string>();
      for (const l of lines) headers.set(l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim());
      const rest = buf.subarray(end + 4);
      let body: Buffer | undefined;
      if (headers.has('content-length')) {
        const n = Number(headers.get('content-length'));
        if (rest.length >= n) body = rest.subarray(0, n);
      } else if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
        body = dechunk(rest);
      } else if (closed) {
        body = rest;
      }
      if (body === undefined) { if (closed) reject(new Error('connection closed mid-body')); return; }
      clearTimeout(timer);
      sock.destroy();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    };
    sock.on('data', (c: Buffer) => { buf = Buffer.concat([buf, c]); tryParse(false); });
    sock.on('end', () => tryParse(true));
    sock.on('error', (e) => { clearTimeout(timer); reject(e); });
    sock.write(request);
  });
}

/** The checks haraka-plugin-rspamd 1.6.1 makes on the parsed body before using it. */
function assertHarakaReadable(body: Buffer): void {
  const r = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  assert.equal(r.error, undefined, `scan failed: ${String(r.error)}`);
  assert.ok((ACTIONS as readonly string[]).includes(String(r.action)), `action ${String(r.action)}`);
  assert.equal(typeof r.score, 'number');
  assert.equal(typeof r.required_score, 'number');
  assert.equal(typeof r.is_skipped, 'boolean');
  assert.equal(typeof r.messages, 'object');
  assert.ok(r.symbols && typeof r.symbols === 'object');
  for (const [key, s] of Object.entries(r.symbols as Record<string, { name?: unknown; score?: unknown }>)) {
    assert.equal(s.name, key);
    assert.equal(typeof s.score, 'number');
  }
}

for (const name of ['h01-haraka-default', 'h02-haraka-flags']) {
  test(`${name}: the captured Haraka request gets a reply Haraka can parse`, async () => {
    const reply = await exchange(worker.port, await readFile(`${FIXTURES}/${name}/request.bin`));
    assert.equal(reply.status, 200);
    // Haraka does not decompress and cannot split a body block: neither may appear unasked
    // (h02 is configured with body_block, so a rewrite may legitimately append one there).
    assert.equal(reply.headers.get('compression'), undefined);
    const offset = reply.headers.get('message-offset');
    if (name === 'h01-haraka-default') assert.equal(offset, undefined);
    const json = offset === undefined ? reply.body : reply.body.subarray(0, Number(offset));
    assertHarakaReadable(json);
    const r = JSON.parse(json.toString()) as Record<string, unknown>;
    assert.equal(r['message-id'], 'fixture-crlf-1@example.com');
  });
}
