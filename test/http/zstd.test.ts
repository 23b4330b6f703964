// zstd in both directions over a real socket: compressed requests (header, alias, magic),
// compressed replies (flag, Accept-Encoding, compressed request), dictionaries by id, the
// error texts, the never-compressed error replies, and a zip bomb bounded by the body limit.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Compressor, compress } from 'zstd-napi';
import { zstdDecompressBounded } from '../../src/http/zstd.js';
import { exchange, FIXTURES, header, parseReply, postV2, startRealWorker } from '../protocol/harness.js';

const MSG = readFileSync(join(FIXTURES, 'messages', 'crlf-simple.eml'));
/** A raw-content dictionary: any bytes work; the id comes from config. */
const DICT = Buffer.from('From: Alice <alice@example.com>\r\nTo: Bob <bob@example.org>\r\nSubject: fixture message'.repeat(20));
const DICT_ID = 7;

function withDict(data: Buffer): Buffer {
  const c = new Compressor();
  c.loadDictionary(DICT);
  return c.compress(data);
}

describe('zstd', () => {
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker({ dictionaries: { input: { id: DICT_ID, data: DICT }, output: { id: DICT_ID, data: DICT } } });
    port = w.port;
    close = w.close;
  });
  after(() => close());

  async function scan(headers: Array<[string, string]>, body: Buffer) {
    return parseReply((await exchange(port, postV2('/checkv2', headers, body))).data);
  }

  function json(r: ReturnType<typeof parseReply>, dict?: Buffer): Record<string, unknown> {
    const body = header(r, 'Compression') === 'zstd' ? zstdDecompressBounded(r.body, 1 << 24, dict) : r.body;
    return JSON.parse(body.toString()) as Record<string, unknown>;
  }

  for (const [label, headers] of [
    ['Compression: zstd', [['Compression', 'zstd']]],
    ['Content-Encoding: zstd', [['Content-Encoding', 'zstd']]],
    ['magic bytes only', []],
  ] as Array<[string, Array<[string, string]>]>) {
    it(`decompresses a request flagged by ${label} and compresses the reply`, async () => {
      const r = await scan(headers, compress(MSG));
      assert.equal(r.status, 200);
      assert.equal(header(r, 'Compression'), 'zstd');
      assert.equal(header(r, 'Content-Encoding'), 'zstd');
      assert.equal(header(r, 'Content-Type'), 'application/json');
      assert.deepEqual([...r.body.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd]);
      // An output dictionary is configured, so every compressed reply uses and names it.
      assert.equal(header(r, 'Dictionary'), String(DICT_ID));
      assert.equal(json(r, DICT)['message-id'], 'fixture-crlf-1@example.com');
    });
  }

  for (const [label, h] of [
    ['Flags: zstd', ['Flags', 'zstd']],
    ['Accept-Encoding: zstd', ['Accept-Encoding', 'gzip, ZSTD']],
  ] as Array<[string, [string, string]]>) {
    it(`compresses the reply of a plain request on ${label}`, async () => {
      const r = await scan([h], MSG);
      assert.equal(header(r, 'Compression'), 'zstd');
      assert.equal(json(r, DICT)['message-id'], 'fixture-crlf-1@example.com');
    });
  }

  it('does not compress unless asked (Haraka parses the body as JSON)', async () => {
    const r = await scan([], MSG);
    assert.equal(header(r, 'Compression'), undefined);
    assert.doesNotThrow(() => JSON.parse(r.body.toString()));
  });

  it('corrupt zstd → 400 naming the decompression error', async () => {
    const bad = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from('garbage garbage garbage')]);
    const r = await scan([['Compression', 'zstd'], ['Flags', 'zstd']], bad);
    assert.equal(r.status, 400);
    assert.match(r.reason, /^Decompression error: /);
    assert.equal(header(r, 'Compression'), undefined, 'error replies are never compressed');
    assert.match((JSON.parse(r.body.toString()) as { error: string }).error, /^Decompression error: /);
  });

  it('truncated zstd frame → 400', async () => {
    const c = compress(MSG);
    const r = await scan([['Compression', 'zstd']], c.subarray(0, c.length - 8));
    assert.equal(r.status, 400);
    assert.match(r.reason, /Decompression error/);
  });

  it('Compression other than zstd → 400 Invalid compression method', async () => {
    const r = await scan([['Compression', 'gzip']], MSG);
    assert.equal(r.status, 400);
    assert.equal(r.reason, 'Invalid compression method');
  });

  it('zip bomb: 60 MiB of zeros in a small frame → 413, then the worker still answers', async () => {
    const bomb = compress(Buffer.alloc(60 * 1024 * 1024));
    assert.ok(bomb.length < 1024 * 1024);
    const r = await scan([['Compression', 'zstd']], bomb);
    assert.equal(r.status, 413);
    const ping = parseReply((await exchange(port, Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n'))).data);
    assert.equal(ping.body.toString(), 'pong\r\n');
  });

  it('dictionary selected by id: request decoded with it, reply encoded with it and labelled', async () => {
    const r = await scan([['Compression', 'zstd'], ['Dictionary', String(DICT_ID)]], withDict(MSG));
    assert.equal(r.status, 200, r.reason);
    assert.equal(header(r, 'Dictionary'), String(DICT_ID));
    assert.throws(() => json(r), 'the reply needs the dictionary');
    assert.equal(json(r, DICT)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('unknown dictionary id → 400 invalid dictionary id; non-numeric → 400', async () => {
    const r1 = await scan([['Compression', 'zstd'], ['Dictionary', '8']], withDict(MSG));
    assert.equal(r1.status, 400);
    assert.equal(r1.reason, 'Unknown dictionary, invalid dictionary id');
    const r2 = await scan([['Compression', 'zstd'], ['Dictionary', 'abc']], withDict(MSG));
    assert.equal(r2.status, 400);
    assert.equal(r2.reason, 'Non numeric dictionary');
  });
});
