// The v2/v1 reply as clients read it: Rspamd's number format, the body block written by a
// real rewriting routine (milter_headers footer) with and without `milter`, the body block
// under zstd, msgpack, and the legacy layout.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode as msgpackDecode } from '@msgpack/msgpack';
import { zstdDecompressBounded } from '../../src/http/zstd.js';
import { emitReplyJson, formatNumber } from '../../src/protocol/json-emit.js';
import { exchange, FIXTURES, header, parseReply, postV2, startRealWorker } from './harness.js';

const MSG = readFileSync(join(FIXTURES, 'messages', 'crlf-simple.eml'));
const FOOTER = 'footer added by the mailsift reply test';

describe('number formatting', () => {
  it('integral doubles with one decimal, others with six, non-finite as null', () => {
    assert.equal(formatNumber(15), '15.0');
    assert.equal(formatNumber(0), '0.0');
    assert.equal(formatNumber(-3), '-3.0');
    assert.equal(formatNumber(6.9), '6.900000');
    assert.equal(formatNumber(-0.1), '-0.100000');
    assert.equal(formatNumber(0.000028), '0.000028');
    assert.equal(formatNumber(Number.NaN), 'null');
  });

  it('milter positions stay integers; strings keep non-ASCII raw', () => {
    const s = emitReplyJson({ score: 1, subject: 'Grüße "x"\r\n', milter: { remove_headers: { 'X-Spam': 0 }, add_headers: { A: { value: 'v', order: -1 } } } });
    assert.equal(s, '{"score":1.0,"subject":"Grüße \\"x\\"\\r\\n","milter":{"remove_headers":{"X-Spam":0},"add_headers":{"A":{"value":"v","order":-1}}}}');
  });
});

describe('v2 replies from a real worker', () => {
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker({}, { milter_headers: { footer: { text: FOOTER, actions: [] } } });
    port = w.port;
    close = w.close;
  });
  after(() => close());

  const scan = async (path: string, headers: Array<[string, string]>, body = MSG) => parseReply((await exchange(port, postV2(path, headers, body))).data);

  it('body_block: Message-Offset splits JSON and the whole rewritten message', async () => {
    const r = await scan('/checkv2', [['Flags', 'body_block']]);
    const off = Number(header(r, 'Message-Offset'));
    assert.ok(off > 0);
    const json = JSON.parse(r.body.subarray(0, off).toString()) as Record<string, unknown>;
    assert.equal(json['message-id'], 'fixture-crlf-1@example.com');
    const block = r.body.subarray(off).toString();
    assert.ok(block.startsWith('From: Alice <alice@example.com>\r\n'));
    assert.ok(block.includes(FOOTER));
  });

  it('body_block + milter: only the body follows', async () => {
    const r = await scan('/checkv2', [['Flags', 'milter,body_block']]);
    const block = r.body.subarray(Number(header(r, 'Message-Offset'))).toString();
    assert.ok(block.startsWith('Hello Bob'), JSON.stringify(block.slice(0, 40)));
    assert.ok(block.includes(FOOTER));
  });

  it('rewritten but no body_block: pure JSON, no header', async () => {
    const r = await scan('/checkv2', []);
    assert.equal(header(r, 'Message-Offset'), undefined);
    assert.doesNotThrow(() => JSON.parse(r.body.toString()));
  });

  it('body_block + zstd: the offset counts decompressed bytes', async () => {
    const r = await scan('/checkv2', [['Flags', 'body_block,zstd']]);
    assert.equal(header(r, 'Compression'), 'zstd');
    const plain = zstdDecompressBounded(r.body, 1 << 24);
    const off = Number(header(r, 'Message-Offset'));
    assert.doesNotThrow(() => JSON.parse(plain.subarray(0, off).toString()));
    assert.ok(plain.subarray(off).toString().includes(FOOTER));
  });

  it('legacy /check with body_block: v1 layout, block appended', async () => {
    const r = await scan('/check', [['Flags', 'body_block']]);
    const off = Number(header(r, 'Message-Offset'));
    const json = JSON.parse(r.body.subarray(0, off).toString()) as Record<string, Record<string, unknown>>;
    assert.equal(typeof json.default!.is_spam, 'boolean');
    assert.ok(!('symbols' in json));
    assert.ok(r.body.subarray(off).toString().includes(FOOTER));
  });

  it('Accept: application/msgpack → the same object in msgpack', async () => {
    const [j, m] = await Promise.all([scan('/checkv2', []), scan('/checkv2', [['Accept', 'application/msgpack']])]);
    assert.equal(header(m, 'Content-Type'), 'application/msgpack');
    const a = JSON.parse(j.body.toString()) as Record<string, unknown>;
    const b = msgpackDecode(m.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(b), Object.keys(a));
    assert.deepEqual(Object.keys(b.symbols as object).sort(), Object.keys(a.symbols as object).sort());
  });

  it('msgpack errors when msgpack was asked for', async () => {
    const r = await scan('/checkv2', [['Accept', 'application/msgpack'], ['Compression', 'gzip']]);
    assert.equal(r.status, 400);
    assert.equal(header(r, 'Content-Type'), 'application/msgpack');
    assert.equal((msgpackDecode(r.body) as { error: string }).error, 'Invalid compression method');
  });

  it('Flags: skip → is_skipped, no action, no symbols, no message-id', async () => {
    const json = JSON.parse((await scan('/checkv2', [['Flags', 'skip']])).body.toString()) as Record<string, unknown>;
    assert.equal(json.is_skipped, true);
    assert.equal(json.action, 'no action');
    assert.deepEqual(json.symbols, {});
    assert.ok(!('message-id' in json));
  });
});
