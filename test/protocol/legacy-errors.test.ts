// Errors on the spamc and RSPAMC text dialects, on a real worker socket: a coded error keeps its
// text on the error line (what the client did wrong), and a bug (an uncoded exception while
// decoding or scanning) is logged, so it reaches the error ring, and answered as an internal
// error without its details, as the HTTP routes answer 500.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { zstdCompress } from '../../src/http/zstd.js';
import { exchange, startRealWorker, type CapturingLog } from './harness.js';

const MSG = Buffer.from('From: a@example.com\r\nTo: b@example.net\r\nSubject: hi\r\nMessage-ID: <le-1@example.com>\r\n\r\nbody\r\n');

/**
 * A dictionary with zstd's magic and id 5 whose tables are garbage: zstd refuses to load it
 * with a plain Error ("Allocation error"), which nothing codes. configtest refuses such a file
 * (src/config/dictionaries.ts); handed to the worker directly it stands for a bug under the
 * decoder.
 */
const CORRUPT_DICTIONARY = { id: 5, data: Buffer.concat([Buffer.from([0x37, 0xa4, 0x30, 0xec, 5, 0, 0, 0]), Buffer.alloc(100, 0xff)]) };

function textRequest(dialect: 'SPAMC/1.2' | 'RSPAMC/1.3', headers: Array<[string, string]>, body: Buffer): Buffer {
  let head = `SYMBOLS ${dialect}\r\nContent-length: ${body.length}\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`), body]);
}

describe('legacy text dialect errors', () => {
  let port = 0;
  let log: CapturingLog;
  let close: () => Promise<void>;
  let observerBug = false;
  before(async () => {
    const w = await startRealWorker({
      dictionaries: { input: CORRUPT_DICTIONARY },
      onScan: () => {
        if (observerBug) throw new TypeError('observer bug: secret detail');
      },
    });
    port = w.port;
    log = w.log;
    close = w.close;
  });
  after(() => close());

  const errors = () => log.lines.filter((l) => l.level === 'error');

  it('a bug while decoding is logged and answered as an internal error (spamc and RSPAMC)', async () => {
    for (const [dialect, proto] of [['SPAMC/1.2', 'SPAMD/1.0'], ['RSPAMC/1.3', 'RSPAMD/1.3']] as const) {
      const before = errors().length;
      const req = textRequest(dialect, [['Compression', 'zstd'], ['Dictionary', '5']], zstdCompress(MSG));
      const { data } = await exchange(port, req);
      assert.equal(data.toString(), `${proto} 70 internal error\r\n`, dialect);
      const logged = errors().slice(before);
      assert.equal(logged.length, 1, `${dialect}: one error line`);
      assert.match(String(logged[0]!.extra?.err), /Allocation error/, 'the log keeps the details the client does not get');
    }
  });

  it('a bug after the scan (in the scan observer) is logged and answered as an internal error', async () => {
    observerBug = true;
    try {
      const before = errors().length;
      const { data } = await exchange(port, textRequest('SPAMC/1.2', [], MSG));
      assert.equal(data.toString(), 'SPAMD/1.0 70 internal error\r\n');
      assert.ok(errors().slice(before).some((l) => /observer bug: secret detail/.test(String(l.extra?.err))), JSON.stringify(errors()));
    } finally {
      observerBug = false;
    }
  });

  it('a coded error keeps its text and logs nothing', async () => {
    const before = errors().length;
    const { data } = await exchange(port, textRequest('SPAMC/1.2', [['Compression', 'gzip']], MSG));
    assert.equal(data.toString(), 'SPAMD/1.0 76 Invalid compression method\r\n');
    const { data: dict } = await exchange(port, textRequest('RSPAMC/1.3', [['Compression', 'zstd'], ['Dictionary', '6']], zstdCompress(MSG)));
    assert.equal(dict.toString(), 'RSPAMD/1.3 76 Unknown dictionary, invalid dictionary id\r\n');
    assert.deepEqual(errors().slice(before), []);
  });

  it('an ordinary scan still answers EX_OK', async () => {
    const { data } = await exchange(port, textRequest('SPAMC/1.2', [], MSG));
    assert.match(data.toString(), /^SPAMD\/1\.1 0 EX_OK\r\n/);
  });
});
