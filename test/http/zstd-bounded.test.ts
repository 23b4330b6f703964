// The bounded zstd decoder (src/http/zstd.ts): one output buffer of exactly the output's size,
// whether the frame declares its content size or not, several frames, a frame whose header
// lies, the limit on both paths; and the peak memory of decoding the fuzzer's RLE bomb
// (bench/fuzz/findings/zstd-memory-rle-bomb.bin, 1.6 KB → 50 MiB), measured in a fresh process:
// one copy of the output, where the decoder used to hold its slices and their concatenation.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { compress } from 'zstd-napi';
import { zstdCompress, zstdDecompressBounded } from '../../src/http/zstd.js';
import { zstdDecompress } from '../../src/client/zstd.js';

const FINDING = new URL('../../bench/fuzz/findings/zstd-memory-rle-bomb.bin', import.meta.url).pathname;
const MAX_MESSAGE = 50 * 1024 * 1024;

/** The finding's body: the one zstd frame after the request's header block. */
function bombBody(): Buffer {
  const raw = readFileSync(FINDING);
  return raw.subarray(raw.indexOf('\r\n\r\n') + 4);
}

/**
 * A single-segment frame declaring `size` bytes, made of RLE blocks of 128 KiB (3-byte block
 * header: last-block bit, type 1 = RLE, size; then the byte to repeat).
 */
function rleFrame(size: number, byte: number): Buffer {
  const BLOCK = 128 * 1024;
  const n = Math.ceil(size / BLOCK);
  // Descriptor 0xa0: 4-byte content size, single segment, no checksum, no dictionary.
  const head = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0, 0]);
  head.writeUInt32LE(size, 5);
  const blocks = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    const len = Math.min(BLOCK, size - i * BLOCK);
    blocks.writeUIntLE((len << 3) | (1 << 1) | (i === n - 1 ? 1 : 0), i * 4, 3);
    blocks[i * 4 + 3] = byte;
  }
  return Buffer.concat([head, blocks]);
}

const codeOf = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return (err as { code?: unknown }).code;
  }
  return undefined;
};

describe('zstdDecompressBounded', () => {
  const text = Buffer.from('Subject: zstd\r\n\r\n' + 'the quick brown fox jumps over the lazy dog\r\n'.repeat(500));

  it('decodes a frame with a declared content size and one without (as Rspamd writes it) to the same bytes', () => {
    const sized = compress(text);
    const unsized = zstdCompress(text);
    assert.notDeepEqual(sized.subarray(0, 6), unsized.subarray(0, 6), 'the two frame headers differ');
    for (const frame of [sized, unsized]) {
      const out = zstdDecompressBounded(frame, text.length);
      assert.ok(out.equals(text));
    }
  });

  it('concatenated frames decode to their concatenation', () => {
    const two = Buffer.concat([compress(text), zstdCompress(text), compress(Buffer.from('tail'))]);
    const out = zstdDecompressBounded(two, 3 * text.length);
    assert.ok(out.equals(Buffer.concat([text, text, Buffer.from('tail')])));
  });

  it('the limit holds on both paths: exactly the limit is accepted, one byte more is ERR_BODY_TOO_LARGE', () => {
    for (const frame of [compress(text), zstdCompress(text)]) {
      assert.equal(zstdDecompressBounded(frame, text.length).length, text.length);
      assert.equal(codeOf(() => zstdDecompressBounded(frame, text.length - 1)), 'ERR_BODY_TOO_LARGE');
    }
  });

  it('a frame whose header declares more than the limit is refused from its header', () => {
    // A valid 32 KB frame declaring 1 GiB: decoding it up to the limit would take 50 MiB of
    // output first; its header says enough.
    const frame = rleFrame(1 << 30, 0x41);
    const t0 = process.cpuUsage();
    assert.equal(codeOf(() => zstdDecompressBounded(frame, MAX_MESSAGE)), 'ERR_BODY_TOO_LARGE');
    const used = process.cpuUsage(t0);
    // Generous: decoding the 50 MiB before the limit would cost tens of ms; this costs microseconds.
    assert.ok(used.user + used.system < 500_000, `${used.user + used.system} µs`);
    assert.equal(zstdDecompressBounded(rleFrame(1 << 20, 0x41), 1 << 20).length, 1 << 20, 'the same frame shape within the limit decodes');
  });

  it('a frame holding other than what its header declares is ERR_DECOMPRESSION, never a short or padded buffer', () => {
    const frame = Buffer.from(compress(text));
    const descriptor = frame[4]!;
    const fcsBytes = [1, 2, 4, 8][descriptor >> 6]!;
    const fcsAt = 5 + (descriptor & 0x20 ? 0 : 1) + [0, 1, 2, 4][descriptor & 3]!;
    // Declare one byte less (a 2-byte field stores size − 256).
    if (fcsBytes === 2) frame.writeUInt16LE(frame.readUInt16LE(fcsAt) - 1, fcsAt);
    else if (fcsBytes === 4) frame.writeUInt32LE(frame.readUInt32LE(fcsAt) - 1, fcsAt);
    else assert.fail(`unexpected size field of ${fcsBytes} bytes`);
    assert.equal(codeOf(() => zstdDecompressBounded(frame, 10 * text.length)), 'ERR_DECOMPRESSION');
  });

  it('the client decodes replies with the same decoder and says when one is too large', () => {
    assert.ok(zstdDecompress(zstdCompress(text)).equals(text));
    assert.throws(() => zstdDecompress(compress(text), text.length - 1), /decompresses to more than/);
  });

  it('the fuzzer RLE bomb decodes to exactly max_message in one buffer: peak memory about one copy', async () => {
    const child = fork(new URL('./zstd-bounded-child.ts', import.meta.url).pathname, [FINDING, String(MAX_MESSAGE)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const m = await new Promise<{ bytes: number; allA: boolean; peakKiB: number }>((resolve, reject) => {
      child.once('message', (x) => resolve(x as never));
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`child exited ${code} without a report`)));
    });
    child.kill();
    assert.equal(m.bytes, MAX_MESSAGE);
    assert.ok(m.allA, 'the output is the 400 RLE blocks of "A"');
    // One copy is 51 200 KiB; the slices and their concatenation were 2 × that (~101 MiB).
    assert.ok(m.peakKiB < 1.3 * (MAX_MESSAGE / 1024), `peak RSS grew by ${(m.peakKiB / 1024).toFixed(0)} MiB for a 50 MiB output`);
  });

  it('the bomb is refused as too large one byte under max_message', () => {
    assert.equal(codeOf(() => zstdDecompressBounded(bombBody(), MAX_MESSAGE - 1)), 'ERR_BODY_TOO_LARGE');
  });
});
