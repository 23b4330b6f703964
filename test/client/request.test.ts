// Requests the client builds, compared with what the real rspamc sent (captured in
// shared/fixtures/scan): same headers for the same options, and a v3 body whose parts parse back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { decode as msgpackDecode } from '@msgpack/msgpack';
import { buildV2Request, buildV3Request } from '../../src/client/index.js';
import { boundaryOf, parseMultipart } from '../../src/client/multipart.js';
import { zstdDecompress } from '../../src/client/zstd.js';

const FIXTURES = '/work/shared/fixtures/scan';
/** Headers the HTTP layer adds (or rspamc adds for its own transport), not the request builder. */
const TRANSPORT_HEADERS = new Set(['content-length', 'connection', 'user-agent', 'host']);

async function capturedHeaders(name: string): Promise<{ headers: string[]; body: Buffer }> {
  const raw = await readFile(`${FIXTURES}/${name}/request.bin`);
  const end = raw.indexOf('\r\n\r\n');
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n').slice(1);
  const headers = lines
    .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as const)
    .filter(([n]) => !TRANSPORT_HEADERS.has(n))
    .map(([n, v]) => `${n}: ${v}`);
  return { headers: headers.sort(), body: raw.subarray(end + 4) };
}

const ours = (pairs: Array<[string, string]>): string[] => pairs.map(([n, v]) => `${n.toLowerCase()}: ${v}`).sort();

test('v2: the same options give the headers rspamc 3.4 sent (r02)', async () => {
  const { headers, body } = await capturedHeaders('r02-rspamc-options');
  const req = buildV2Request(body, {
    ip: '203.0.113.5', from: 'alice@example.com', rcpt: ['bob@example.org', 'carol@example.net'], user: 'alice',
    deliverTo: 'bob@example.org', helo: 'mail.example.org', hostname: 'mail.example.org', filename: 'crlf-simple.eml',
    extendedUrls: true, passAll: true, profile: true, headers: [['MTA-Tag', 'outbound'], ['X-Custom', 'yes']],
  });
  assert.deepEqual(ours(req.headers), headers);
  assert.deepEqual(req.body, body);
  assert.equal(req.path, '/checkv2');
});

test('v2 compressed: a zstd body that decompresses to the message, with rspamc\'s headers (r03) and more', async () => {
  const { headers } = await capturedHeaders('r03-rspamc-compressed');
  const message = await readFile(`${FIXTURES}/messages/spam_message.eml`);
  const req = buildV2Request(message, { filename: 'spam_message.eml', compress: true });
  const built = ours(req.headers);
  for (const h of headers) assert.ok(built.includes(h), `missing ${h}`);
  assert.deepEqual(zstdDecompress(req.body), message);
});

test('v3: metadata and message parts parse back; JSON metadata as rspamc builds it', async () => {
  const message = Buffer.from('From: a@example.com\r\nSubject: x\r\n\r\nbody\r\n');
  const opts = { from: 'alice@example.com', rcpt: ['bob@example.org'], ip: '203.0.113.5', helo: 'mail.example.org', queueId: 'QV3', passAll: true, bodyBlock: false };
  const req = buildV3Request(message, opts);
  const ct = req.headers.find(([n]) => n === 'Content-Type')![1];
  const parts = parseMultipart(req.body, boundaryOf(ct)!);
  assert.deepEqual(parts.map((p) => p.name), ['metadata', 'message']);
  // The rspamc-style example's metadata for the same envelope (shared/fixtures/scan/v3-synthetic).
  const sample = await readFile(`${FIXTURES}/v3-synthetic/request-rspamc-style.bin`, 'latin1');
  const sampleMeta = JSON.parse(/\{"from".*\}/.exec(sample)![0]) as Record<string, unknown>;
  assert.deepEqual(JSON.parse(parts[0]!.body.toString()), sampleMeta);
  assert.deepEqual(parts[1]!.body, message);
});

test('v3 msgpack + zstd: msgpack metadata, zstd message part', () => {
  const message = Buffer.from('Subject: y\r\n\r\nhello\r\n');
  const req = buildV3Request(message, { msgpack: true, compress: true, rcpt: ['a@example.com', 'b@example.com'], settings: '{"actions":{"reject":50}}' });
  const parts = parseMultipart(req.body, boundaryOf(req.headers[0]![1])!);
  assert.match(parts[0]!.contentType!, /msgpack/);
  const meta = msgpackDecode(parts[0]!.body) as Record<string, unknown>;
  assert.deepEqual(meta.rcpt, ['a@example.com', 'b@example.com']);
  assert.deepEqual(meta.settings, { actions: { reject: 50 } });
  assert.equal(parts[1]!.contentEncoding, 'zstd');
  assert.deepEqual(zstdDecompress(parts[1]!.body), message);
});
