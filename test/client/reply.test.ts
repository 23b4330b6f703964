// Reply decoding on real captured Rspamd replies (shared/fixtures/scan): Message-Offset body
// blocks, zstd bodies, error replies, and the v3 multipart layout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { decodeReply, errorText } from '../../src/client/index.js';

const FIXTURES = '/work/shared/fixtures/scan';

interface RawReply {
  status: number;
  reason: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Split a captured HTTP/1.1 reply (Content-Length framed, as Rspamd sends) into its pieces. */
async function loadReply(name: string): Promise<RawReply> {
  const raw = await readFile(`${FIXTURES}/${name}`);
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.\d (\d{3}) ?(.*)$/.exec(statusLine!);
  assert.ok(m, `bad status line in ${name}`);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const c = l.indexOf(':');
    headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
  }
  const body = raw.subarray(end + 4, end + 4 + Number(headers['content-length']));
  assert.equal(body.length, Number(headers['content-length']), `${name} body is truncated`);
  return { status: Number(m[1]), reason: m[2]!, headers, body };
}

test('plain JSON reply decodes to the object the fixture pretty-prints', async () => {
  const r = await loadReply('a03-checkv2-envelope/response.bin');
  const decoded = decodeReply(r.status, r.headers, r.body);
  const expected = JSON.parse(await readFile(`${FIXTURES}/a03-checkv2-envelope/response-body.json`, 'utf8'));
  assert.deepEqual(decoded.result, expected);
  assert.equal(decoded.rewritten, undefined);
});

test('Message-Offset splits the JSON from the rewritten message', async () => {
  const r = await loadReply('r05-rspamc-mime/response.bin');
  const decoded = decodeReply(r.status, r.headers, r.body);
  assert.equal(decoded.resultBytes.length, Number(r.headers['message-offset']));
  assert.deepEqual(decoded.rewritten, await readFile(`${FIXTURES}/r05-rspamc-mime/body-block.eml`));
  assert.equal(decoded.result.action, 'add header');
});

test('milter body block carries only the body', async () => {
  const r = await loadReply('a62-body-block-milter/response.bin');
  const decoded = decodeReply(r.status, r.headers, r.body);
  assert.deepEqual(decoded.rewritten, await readFile(`${FIXTURES}/a62-body-block-milter/body-block.eml`));
  assert.ok(!decoded.rewritten!.toString().startsWith('From:'));
});

test('zstd reply body is decompressed before the split (offset counts decompressed bytes)', async () => {
  const r = await loadReply('b15-dkim-body-block/response.bin');
  assert.equal(r.body.subarray(0, 4).toString('hex'), '28b52ffd');
  const decoded = decodeReply(r.status, r.headers, r.body);
  assert.deepEqual(decoded.rewritten, await readFile(`${FIXTURES}/b15-dkim-body-block/body-block.eml`));
  assert.deepEqual(decoded.result, JSON.parse(await readFile(`${FIXTURES}/b15-dkim-body-block/response-body.json`, 'utf8')));
});

test('zstd reply without body block', async () => {
  const r = await loadReply('a70-zstd-request/response.bin');
  const decoded = decodeReply(r.status, r.headers, r.body);
  assert.deepEqual(decoded.result, JSON.parse(await readFile(`${FIXTURES}/a70-zstd-request/response-body.json`, 'utf8')));
});

test('v3 multipart reply: the result part is found and parsed', async () => {
  const r = await loadReply('v3-synthetic/response-form-data.bin');
  const decoded = decodeReply(r.status, r.headers, r.body);
  assert.equal(decoded.result.action, 'add header');
  assert.equal(decoded.result['message-id'], 'fixture-crlf-1@example.com');
});

test('error replies: the error field wins over the reason phrase', async () => {
  const r = await loadReply('a56-file-header-missing/response.bin');
  assert.equal(r.status, 503);
  assert.equal(errorText(r.status, r.reason, r.headers, r.body), 'Invalid file (/nonexistent/x.eml): No such file or directory');
  assert.equal(errorText(500, 'invalid command', {}, Buffer.from('<html>')), 'invalid command');
});

test('a Message-Offset beyond the body is a BAD_REPLY error', async () => {
  const r = await loadReply('a03-checkv2-envelope/response.bin');
  assert.throws(() => decodeReply(200, { ...r.headers, 'message-offset': String(r.body.length + 10) }, r.body), /outside/);
  assert.throws(() => decodeReply(200, r.headers, r.body.subarray(0, 50)), /cannot parse JSON/);
});
