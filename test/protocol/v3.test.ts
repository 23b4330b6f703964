// /checkv3 end to end over a real socket: multipart requests with JSON and msgpack
// metadata, a zstd message part, msgpack and zstd result parts, the rewritten `body` part
// (milter_headers footer, a real rewriting routine), and malformed variants → 400.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode as msgpackDecode, encode as msgpackEncode } from '@msgpack/msgpack';
import { compress } from 'zstd-napi';
import { zstdDecompressBounded } from '../../src/http/zstd.js';
import { exchange, FIXTURES, header, parseReply, startRealWorker, type HttpReply } from './harness.js';

const MSG = readFileSync(join(FIXTURES, 'messages', 'crlf-simple.eml'));
const FOOTER = 'footer added by the mailsift v3 test';

interface Part { name: string; type?: string; encoding?: string; body: Buffer }

function form(boundary: string, parts: Part[], closing = true): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    let h = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n`;
    if (p.type) h += `Content-Type: ${p.type}\r\n`;
    if (p.encoding) h += `Content-Encoding: ${p.encoding}\r\n`;
    out.push(Buffer.from(h + '\r\n'), p.body, Buffer.from('\r\n'));
  }
  if (closing) out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}

function request(body: Buffer, contentType: string | undefined, extra: Array<[string, string]> = []): Buffer {
  let h = `POST /checkv3 HTTP/1.1\r\nConnection: close\r\nContent-Length: ${body.length}\r\n`;
  if (contentType !== undefined) h += `Content-Type: ${contentType}\r\n`;
  for (const [k, v] of extra) h += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(h + '\r\n'), body]);
}

/** Splits a multipart reply into named parts (decoding per-part zstd). */
function replyParts(r: HttpReply): Map<string, { type: string; encoding?: string; body: Buffer }> {
  const ct = header(r, 'Content-Type') ?? '';
  const b = /boundary="?([^";]+)"?/.exec(ct)?.[1];
  assert.ok(b, `multipart reply expected, got ${ct}`);
  const out = new Map<string, { type: string; encoding?: string; body: Buffer }>();
  const text = r.body.toString('latin1');
  assert.ok(text.endsWith(`--${b}--\r\n`), 'closing delimiter');
  for (const chunk of text.split(`--${b}`).slice(1, -1)) {
    const headEnd = chunk.indexOf('\r\n\r\n');
    const head = chunk.slice(0, headEnd);
    let body: Buffer = Buffer.from(chunk.slice(headEnd + 4, chunk.length - 2), 'latin1');
    const name = /name="([^"]+)"/.exec(head)![1]!;
    const type = /Content-Type: (.*)/.exec(head)![1]!.trim();
    const encoding = /Content-Encoding: (.*)/.exec(head)?.[1]?.trim();
    if (encoding === 'zstd') body = zstdDecompressBounded(body, 1 << 24);
    out.set(name, { type, ...(encoding ? { encoding } : {}), body });
  }
  return out;
}

function resultOf(r: HttpReply): Record<string, unknown> {
  const part = replyParts(r).get('result');
  assert.ok(part, 'result part');
  return (part.type === 'application/msgpack' ? msgpackDecode(part.body) : JSON.parse(part.body.toString())) as Record<string, unknown>;
}

describe('/checkv3', () => {
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker({}, { milter_headers: { footer: { text: FOOTER, actions: [] } } });
    port = w.port;
    close = w.close;
  });
  after(() => close());

  const send = async (bytes: Buffer) => parseReply((await exchange(port, bytes)).data);
  const jsonMeta = (o: unknown): Part => ({ name: 'metadata', type: 'application/json', body: Buffer.from(JSON.stringify(o)) });
  const message = (body: Buffer = MSG, extra: Partial<Part> = {}): Part => ({ name: 'message', type: 'application/octet-stream', body, ...extra });

  it('JSON metadata: multipart/mixed reply with a JSON result, Vary, envelope applied', async () => {
    const with_ = await send(request(form('b1', [jsonMeta({ from: 'alice@example.com', rcpt: ['bob@example.org'], ip: '203.0.113.5', flags: ['groups'] }), message()]), 'multipart/form-data; boundary=b1'));
    assert.equal(with_.status, 200, with_.reason);
    assert.match(header(with_, 'Content-Type')!, /^multipart\/mixed; boundary="/);
    assert.equal(header(with_, 'Vary'), 'Accept, Accept-Encoding');
    const res = resultOf(with_);
    assert.equal(res['message-id'], 'fixture-crlf-1@example.com');
    assert.ok('groups' in res, 'flags from metadata are applied');
    const syms = res.symbols as Record<string, { metric_score: number }>;
    assert.ok('FROM_EQ_ENVFROM' in syms, 'the envelope sender reached the rules');
    const without = resultOf(await send(request(form('b2', [message()]), 'multipart/form-data; boundary="b2"')));
    assert.ok(!('FROM_EQ_ENVFROM' in (without.symbols as object)), 'metadata is optional; no sender, no symbol');
    assert.ok(!('groups' in without));
  });

  it('the rewritten message comes back as a body part (milter_headers footer)', async () => {
    const r = await send(request(form('b3', [jsonMeta({}), message()]), 'multipart/form-data; boundary=b3'));
    const parts = replyParts(r);
    const body = parts.get('body');
    assert.ok(body, 'body part present');
    assert.equal(body.type, 'application/octet-stream');
    assert.ok(body.body.toString().includes(FOOTER));
    assert.ok(body.body.toString().startsWith('From: '), 'whole message without the milter flag');
    const milter = await send(request(form('b4', [jsonMeta({ flags: ['milter'] }), message()]), 'multipart/form-data; boundary=b4'));
    const mbody = replyParts(milter).get('body')!.body.toString();
    assert.ok(mbody.includes(FOOTER) && !mbody.includes('Subject:'), 'milter flag: body only');
  });

  it('msgpack metadata → msgpack result part', async () => {
    const meta: Part = { name: 'metadata', type: 'application/msgpack', body: Buffer.from(msgpackEncode({ from: 'alice@example.com' })) };
    const r = await send(request(form('b5', [meta, message()]), 'multipart/form-data; boundary=b5'));
    const part = replyParts(r).get('result')!;
    assert.equal(part.type, 'application/msgpack');
    const res = msgpackDecode(part.body) as Record<string, unknown>;
    assert.ok('FROM_EQ_ENVFROM' in (res.symbols as object));
  });

  it('metadata whose decoding would cost seconds is a 400 naming why (fuzz finding v3 #24947)', async () => {
    // A million nested one-element arrays, or a million empty maps, cost seconds in the decoder.
    const cases: Array<[Part, RegExp]> = [
      [{ name: 'metadata', type: 'application/msgpack', body: Buffer.alloc(5 * 1024 * 1024, 0x91) }, /metadata part is 5242880 bytes, more than the 4194304 read/],
      [{ name: 'metadata', type: 'application/msgpack', body: Buffer.alloc(1024 * 1024, 0x91) }, /metadata refused: nested deeper than 64 levels/],
      [{ name: 'metadata', type: 'application/msgpack', body: Buffer.concat([Buffer.from([0xdd, 0, 0x10, 0, 0]), Buffer.alloc(1 << 20, 0x80)]) }, /metadata refused: more than 10000 arrays and maps/],
      [{ name: 'metadata', type: 'application/json', body: Buffer.from('['.repeat(100_000)) }, /metadata refused: nested deeper than 64 levels/],
      [{ name: 'metadata', type: 'application/json', body: Buffer.from(`{"x":[${'{},'.repeat(20_000)}{}]}`) }, /metadata refused: more than 10000 arrays and maps/],
    ];
    for (const [part, why] of cases) {
      const r = await send(request(form('b9', [part, message()]), 'multipart/form-data; boundary=b9'));
      assert.equal(r.status, 400);
      assert.match(r.reason, why);
    }
    // Brackets inside strings are text, not structure.
    const r = await send(request(form('b9', [jsonMeta({ from: `${'['.repeat(200)}@example.com` }), message()]), 'multipart/form-data; boundary=b9'));
    assert.equal(r.status, 200);
  });

  it('Accept: application/x-msgpack → msgpack result with JSON metadata', async () => {
    const r = await send(request(form('b6', [jsonMeta({}), message()]), 'multipart/form-data; boundary=b6', [['Accept', 'application/x-msgpack']]));
    assert.equal(replyParts(r).get('result')!.type, 'application/msgpack');
    assert.equal(resultOf(r)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('zstd message part in, zstd parts out with Accept-Encoding: zstd', async () => {
    const r = await send(request(form('b7', [jsonMeta({}), message(compress(MSG), { encoding: 'zstd' })]), 'multipart/form-data; boundary=b7', [['Accept-Encoding', 'zstd'], ['Accept', 'multipart/form-data']]));
    assert.equal(r.status, 200, r.reason);
    assert.match(header(r, 'Content-Type')!, /^multipart\/form-data; boundary=/);
    assert.equal(header(r, 'Compression'), undefined, 'parts are compressed, not the envelope');
    const parts = replyParts(r);
    assert.equal(parts.get('result')!.encoding, 'zstd');
    assert.equal(parts.get('body')!.encoding, 'zstd');
    assert.equal(resultOf(r)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('replays the rspamc-style request and the 3.4 capture', async () => {
    for (const file of [join(FIXTURES, 'v3-synthetic', 'request-rspamc-style.bin'), join(FIXTURES, 'a27-checkv3-on-34', 'request.bin')]) {
      const r = await send(readFileSync(file));
      assert.equal(r.status, 200, `${file}: ${r.reason}`);
      assert.equal(typeof resultOf(r).action, 'string');
    }
  });

  const bad: Array<[string, () => Buffer, RegExp]> = [
    ['no Content-Type', () => request(form('x', [message()]), undefined), /^missing Content-Type header for v3 request$/],
    ['no boundary', () => request(form('x', [message()]), 'multipart/form-data'), /^cannot extract boundary/],
    ['boundary that never occurs', () => request(form('x', [message()]), 'multipart/form-data; boundary=other'), /^cannot parse multipart\/form-data body/],
    ['no message part', () => request(form('x', [jsonMeta({})]), 'multipart/form-data; boundary=x'), /^missing 'message' part/],
    ['empty message part', () => request(form('x', [jsonMeta({}), message(Buffer.alloc(0))]), 'multipart/form-data; boundary=x'), /^missing 'message' part/],
    ['metadata not JSON', () => request(form('x', [{ name: 'metadata', type: 'application/json', body: Buffer.from('{"from":') }, message()]), 'multipart/form-data; boundary=x'), /^cannot parse metadata/],
    ['metadata not an object', () => request(form('x', [jsonMeta([1, 2]), message()]), 'multipart/form-data; boundary=x'), /^metadata is not a valid object$/],
    ['bad msgpack metadata', () => request(form('x', [{ name: 'metadata', type: 'application/msgpack', body: Buffer.from([0xc1]) }, message()]), 'multipart/form-data; boundary=x'), /^cannot parse metadata/],
    ['truncated (no closing delimiter)', () => request(form('x', [jsonMeta({}), message()], false).subarray(0, 150), 'multipart/form-data; boundary=x'), /^cannot parse multipart\/form-data body/],
    ['three parts', () => request(form('x', [jsonMeta({}), message(), { name: 'extra', body: Buffer.from('x') }]), 'multipart/form-data; boundary=x'), /at most 2 parts.*got 3/],
    ['corrupt zstd message part', () => request(form('x', [jsonMeta({}), message(Buffer.from('not zstd at all'), { encoding: 'zstd' })]), 'multipart/form-data; boundary=x'), /^message decompression error: /],
  ];
  for (const [label, build, pattern] of bad) {
    it(`malformed: ${label} → 400 naming the problem`, async () => {
      const r = await send(build());
      assert.equal(r.status, 400);
      assert.equal(header(r, 'Content-Type'), 'application/json');
      const err = JSON.parse(r.body.toString()) as { error: string; error_domain: string };
      assert.match(err.error, pattern);
      assert.equal(err.error_domain, 'protocol-error');
      assert.equal(r.reason, err.error);
    });
  }

  it('/checkv2 is unaffected by the v3 route (same worker)', async () => {
    const b = Buffer.concat([Buffer.from(`POST /checkv2 HTTP/1.1\r\nConnection: close\r\nContent-Length: ${MSG.length}\r\n\r\n`), MSG]);
    const r = await send(b);
    assert.equal(header(r, 'Content-Type'), 'application/json');
    assert.equal((JSON.parse(r.body.toString()) as Record<string, unknown>)['message-id'], 'fixture-crlf-1@example.com');
  });
});
