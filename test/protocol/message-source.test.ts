// Shm and File message sources on a real worker over real sockets (scan-protocol.md §3.2,
// proxy-milter.md §3.7): the message named by `Shm` (a POSIX shared-memory segment, the file
// /dev/shm/<name>) or `File` is what gets scanned; only allowed peers may name one; anything that
// cannot be read is an error reply naming it, never a scan of the empty body.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zstdCompress, zstdDecompressBounded } from '../../src/http/zstd.js';
import fc from 'fast-check';
import { MAX_SHM_NAME_BYTES, SHM_DIR, shmSegmentPath, sourceFilePath } from '../../src/protocol/message-source.js';
import { exchange, FIXTURES, header, parseReply, startRealWorker, type HttpReply } from './harness.js';

const GTUBE_MSG = readFileSync(join(FIXTURES, 'messages', 'gtube.eml'));
const HAM_MSG = readFileSync(join(FIXTURES, 'messages', 'crlf-simple.eml'));
const GTUBE_ID = 'GTUBE1.1010101@example.net';

interface V2Result {
  action: string;
  score: number;
  symbols: Record<string, unknown>;
  'message-id'?: string;
}

/** A request with no body, as Rspamd's proxy sends it (GET, Content-Length: 0). */
function bodiless(path: string, headers: Array<[string, string]>, method = 'GET'): Buffer {
  let head = `${method} ${path} HTTP/1.1\r\nConnection: close\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  return Buffer.from(`${head}Content-Length: 0\r\n\r\n`, 'utf8');
}

function json(r: HttpReply): V2Result {
  return JSON.parse(r.body.toString('utf8')) as V2Result;
}

function errorOf(r: HttpReply): string {
  const e = JSON.parse(r.body.toString('utf8')) as { error: string };
  assert.equal(r.reason, e.error, 'the reason phrase carries the error');
  return e.error;
}

/** Segments and files made by this test, removed at the end. */
const made: string[] = [];
const uniq = (): string => `mailsift-test-${process.pid}-${randomBytes(6).toString('hex')}`;

async function segment(data: Buffer | string): Promise<string> {
  const name = uniq();
  const path = join(SHM_DIR, name);
  await writeFile(path, data, { mode: 0o600 });
  made.push(path);
  return `/${name}`;
}

describe('Shm and File message sources', () => {
  let port = 0;
  let small = 0;
  let strict = 0;
  let none = 0;
  let dir = '';
  const closers: Array<() => Promise<void>> = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-source-'));
    const start = async (opts: Parameters<typeof startRealWorker>[0]): Promise<number> => {
      const w = await startRealWorker(opts);
      closers.push(() => w.close());
      return w.port;
    };
    port = await start({});
    small = await start({ maxMessage: 1024 });
    strict = await start({ fileInputPeers: ['127.0.0.1'] });
    none = await start({ fileInputPeers: [] });
  });
  after(async () => {
    for (const c of closers) await c();
    for (const p of made) await unlink(p).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  const send = async (bytes: Buffer, to = port, localAddress?: string): Promise<HttpReply> =>
    parseReply((await exchange(to, bytes, localAddress ? { localAddress } : {})).data);

  it('a GET with an empty body and Shm scans the segment: GTUBE is rejected', async () => {
    const shm = await segment(GTUBE_MSG);
    const r = await send(bodiless('/checkv2', [['Shm', shm], ['Shm-Offset', '0'], ['Shm-Length', String(GTUBE_MSG.length)]]));
    assert.equal(r.status, 200, r.reason);
    const res = json(r);
    assert.equal(res.action, 'reject');
    assert.ok('GTUBE' in res.symbols);
    assert.equal(res['message-id'], GTUBE_ID);
  });

  it('Shm-Offset and Shm-Length select a window of the segment; without Shm-Length it runs to the end', async () => {
    const pad = Buffer.from('this is not part of the message\r\n');
    const shm = await segment(Buffer.concat([pad, HAM_MSG, pad]));
    const window = json(await send(bodiless('/checkv2', [['Shm', shm], ['Shm-Offset', String(pad.length)], ['Shm-Length', String(HAM_MSG.length)]])));
    const direct = json(parseReply((await exchange(port, Buffer.concat([Buffer.from(`POST /checkv2 HTTP/1.1\r\nConnection: close\r\nContent-Length: ${HAM_MSG.length}\r\n\r\n`), HAM_MSG]))).data));
    assert.equal(window['message-id'], 'fixture-crlf-1@example.com');
    assert.deepEqual(Object.keys(window.symbols).sort(), Object.keys(direct.symbols).sort(), 'the window scans exactly as the message sent inline');
    const tail = await segment(Buffer.concat([pad, GTUBE_MSG]));
    const res = json(await send(bodiless('/checkv2', [['Shm', tail], ['Shm-Offset', String(pad.length)]])));
    assert.equal(res.action, 'reject');
    assert.equal(res['message-id'], GTUBE_ID);
  });

  it('the segment replaces a body sent along (Shm wins, as in Rspamd)', async () => {
    const shm = await segment(GTUBE_MSG);
    const bytes = Buffer.concat([Buffer.from(`POST /checkv2 HTTP/1.1\r\nConnection: close\r\nShm: ${shm}\r\nContent-Length: ${HAM_MSG.length}\r\n\r\n`), HAM_MSG]);
    assert.equal(json(await send(bytes)).action, 'reject');
  });

  it('the legacy v1 routes and the spamc dialect read Shm too', async () => {
    const shm = await segment(GTUBE_MSG);
    for (const path of ['/check', '/symbols', '/scan']) {
      const r = await send(bodiless(path, [['Shm', shm]]));
      assert.equal(r.status, 200, `${path}: ${r.reason}`);
      // The v1 layout nests the verdict under the `default` metric.
      const v1 = JSON.parse(r.body.toString('utf8')) as { default: V2Result };
      assert.equal(v1.default.action, 'reject', path);
    }
    const { data } = await exchange(port, Buffer.from(`SYMBOLS SPAMC/1.2\r\nContent-length: 0\r\nShm: ${shm}\r\n\r\n`));
    // The message in the segment was scanned: GTUBE, a reject, so `True` (legacy_compat: spamd).
    assert.match(data.toString(), /^SPAMD\/1\.1 0 EX_OK\r\n[^]*Spam: True ; 15\.00 \/ 15\.00\r\n\r\nGTUBE\r\n$/, data.toString());
  });

  it('a zstd-compressed segment with Compression: zstd is decompressed before the scan', async () => {
    const shm = await segment(zstdCompress(GTUBE_MSG));
    const r = await send(bodiless('/checkv2', [['Shm', shm], ['Compression', 'zstd']]));
    assert.equal(r.status, 200, r.reason);
    assert.equal(header(r, 'Compression'), 'zstd', 'a compressed request gets a compressed reply');
    const res = JSON.parse(zstdDecompressBounded(r.body, 1 << 24).toString('utf8')) as V2Result;
    assert.equal(res.action, 'reject');
    assert.equal(res['message-id'], GTUBE_ID);
  });

  it('/checkv3 with an empty body takes the whole multipart request from Shm', async () => {
    const b = 'mailsift-shm-v3';
    const form = Buffer.concat([
      Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="metadata"\r\nContent-Type: application/json\r\n\r\n{"from":"a@example.com"}\r\n`),
      Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="message"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      GTUBE_MSG,
      Buffer.from(`\r\n--${b}--\r\n`),
    ]);
    const shm = await segment(form);
    const r = await send(bodiless('/checkv3', [['Shm', shm], ['Content-Type', `multipart/form-data; boundary=${b}`]], 'POST'));
    assert.equal(r.status, 200, r.reason);
    assert.match(r.body.toString('latin1'), /"action":"reject"/);
  });

  it('a missing segment is a 503 naming it, not an empty scan', async () => {
    const name = `/${uniq()}`;
    const r = await send(bodiless('/checkv2', [['Shm', name]]));
    assert.equal(r.status, 503);
    assert.equal(errorOf(r), `Cannot open shm segment (${name}): No such file or directory`);
    assert.equal((JSON.parse(r.body.toString()) as { error_domain: string }).error_domain, 'task-error');
  });

  it('an offset or length outside the segment, or not a number, is a 400 naming the segment', async () => {
    const shm = await segment(HAM_MSG);
    const size = HAM_MSG.length;
    const cases: Array<[Array<[string, string]>, string]> = [
      [[['Shm-Offset', String(size + 1)]], `invalid offset ${size + 1} (${size} available) for shm segment ${shm}`],
      [[['Shm-Length', String(size + 1)]], `invalid length ${size + 1} at offset 0 (${size} available) for shm segment ${shm}`],
      // Each fits alone; together they run past the end (Rspamd 3.4 checked them one by one).
      [[['Shm-Offset', '10'], ['Shm-Length', String(size - 5)]], `invalid length ${size - 5} at offset 10 (${size} available) for shm segment ${shm}`],
      [[['Shm-Offset', '-1']], 'invalid shm segment offset: -1'],
      [[['Shm-Length', '12abc']], 'invalid shm segment length: 12abc'],
      [[['Shm-Length', '99999999999999999999']], 'invalid shm segment length: 99999999999999999999'],
    ];
    for (const [extra, message] of cases) {
      const r = await send(bodiless('/checkv2', [['Shm', shm], ...extra]));
      assert.equal(r.status, 400, JSON.stringify(extra));
      assert.equal(errorOf(r), message);
    }
    const orphan = await send(bodiless('/checkv2', [['Shm-Length', '10']]));
    assert.equal(orphan.status, 400);
    assert.equal(errorOf(orphan), 'Shm-Offset or Shm-Length without Shm');
  });

  it('a segment larger than max_message is a 413; a window within it is scanned', async () => {
    const big = Buffer.concat([HAM_MSG, Buffer.alloc(2048 - HAM_MSG.length, 0x20)]);
    const shm = await segment(big);
    const r = await send(bodiless('/checkv2', [['Shm', shm]]), small);
    assert.equal(r.status, 413);
    assert.equal(errorOf(r), `too large shm segment ${shm}: 2048, maximum is 1024`);
    const ok = await send(bodiless('/checkv2', [['Shm', shm], ['Shm-Length', String(HAM_MSG.length)]]), small);
    assert.equal(ok.status, 200, ok.reason);
    assert.equal(json(ok)['message-id'], 'fixture-crlf-1@example.com');
  });

  it('an empty segment is an error, not an empty scan', async () => {
    const shm = await segment(Buffer.alloc(0));
    const r = await send(bodiless('/checkv2', [['Shm', shm]]));
    assert.equal(r.status, 503);
    assert.equal(errorOf(r), `empty shm segment (${shm})`);
  });

  it('shm names are one component under /dev/shm: paths and symbolic links are refused', async () => {
    for (const name of ['/../etc/passwd', '/a/b', '..', '/', '%2E%2E', `/${'x'.repeat(256)}`]) {
      const r = await send(bodiless('/checkv2', [['Shm', name]]));
      assert.equal(r.status, 400, name);
      assert.match(errorOf(r), /shm segment name/, name);
    }
    const target = join(dir, 'gtube.eml');
    await writeFile(target, GTUBE_MSG);
    const link = uniq();
    await symlink(target, join(SHM_DIR, link));
    made.push(join(SHM_DIR, link));
    const r = await send(bodiless('/checkv2', [['Shm', `/${link}`]]));
    assert.equal(r.status, 503);
    assert.equal(errorOf(r), `Cannot open shm segment (/${link}): Too many levels of symbolic links`);
    const nul = await send(bodiless('/checkv2', [['Shm', '/abc%00def']]));
    assert.equal(nul.status, 400);
    assert.match(errorOf(nul), /invalid character at position 4 in shm segment name/);
  });

  it('File from loopback scans the file; the value may be percent-encoded and quoted, or a query parameter', async () => {
    const path = join(dir, 'the gtube.eml');
    await writeFile(path, GTUBE_MSG);
    for (const value of [path, `"${path}"`, path.replace(/ /g, '%20')]) {
      const r = await send(bodiless('/checkv2', [['File', value]]));
      assert.equal(r.status, 200, `${value}: ${r.reason}`);
      assert.equal(json(r).action, 'reject', value);
    }
    const viaPath = await send(bodiless('/checkv2', [['Path', path]]));
    assert.equal(json(viaPath).action, 'reject');
    const viaQuery = await send(bodiless(`/checkv2?file=${encodeURIComponent(path)}`, []));
    assert.equal(json(viaQuery).action, 'reject');
    const empty = join(dir, 'empty.eml');
    await writeFile(empty, '');
    const e = await send(bodiless('/checkv2', [['File', empty]]));
    assert.equal(e.status, 200, 'an empty file is an empty message, as in Rspamd');
    assert.deepEqual(json(e).symbols, {});
  });

  it('File errors name the file: missing (Rspamd 3.4 text), not regular, relative, over max_message', async () => {
    const missing = await send(bodiless('/checkv2', [['File', '/nonexistent/x.eml']]));
    assert.equal(missing.status, 503);
    assert.equal(errorOf(missing), 'Invalid file (/nonexistent/x.eml): No such file or directory');
    const d = await send(bodiless('/checkv2', [['File', dir]]));
    assert.equal(d.status, 503);
    assert.equal(errorOf(d), `Not a regular file (${dir})`);
    const rel = await send(bodiless('/checkv2', [['File', 'gtube.eml']]));
    assert.equal(rel.status, 400);
    assert.equal(errorOf(rel), 'Invalid file (gtube.eml): the path must be absolute');
    const big = join(dir, 'big.eml');
    await writeFile(big, Buffer.alloc(1025, 0x41));
    const r = await send(bodiless('/checkv2', [['File', big]]), small);
    assert.equal(r.status, 413);
    assert.equal(errorOf(r), `Too large file (${big}): 1025, maximum is 1024`);
  });

  it('a peer outside file_input_peers gets 403 for File and Shm, before anything is opened', async () => {
    const shm = await segment(GTUBE_MSG);
    const file = join(dir, 'peer.eml');
    await writeFile(file, GTUBE_MSG);
    for (const h of [[['Shm', shm]], [['File', file]], [['Shm', `/${uniq()}`]], [['Shm-Offset', '0']]] as Array<Array<[string, string]>>) {
      const r = await send(bodiless('/checkv2', h), strict, '127.0.0.2');
      assert.equal(r.status, 403, JSON.stringify(h));
      assert.equal(errorOf(r), 'File and Shm message sources are not allowed from 127.0.0.2 (workers.normal.file_input_peers)');
    }
    const allowed = await send(bodiless('/checkv2', [['Shm', shm]]), strict, '127.0.0.1');
    assert.equal(json(allowed).action, 'reject', 'the listed peer is served');
    const plain = await send(Buffer.concat([Buffer.from(`POST /checkv2 HTTP/1.1\r\nConnection: close\r\nContent-Length: ${GTUBE_MSG.length}\r\n\r\n`), GTUBE_MSG]), strict, '127.0.0.2');
    assert.equal(json(plain).action, 'reject', 'ordinary scans from other peers are not affected');
    const off = await send(bodiless('/checkv2', [['File', file]]), none);
    assert.equal(off.status, 403, 'an empty list refuses loopback too');
  });

  it('without Shm or File an empty body is scanned as before: an empty message, no symbols', async () => {
    for (const method of ['GET', 'POST']) {
      const r = await send(bodiless('/checkv2', [], method));
      assert.equal(r.status, 200);
      const res = json(r);
      assert.equal(res.action, 'no action');
      assert.equal(res.score, 0);
      assert.deepEqual(res.symbols, {});
    }
  });
});

/** Header values built from the characters that matter to path handling, encoded or not. */
const pathish = fc
  .array(fc.constantFrom('/', '.', '..', '%2F', '%2f', '%2E', '%00', '%0a', '+', '%', '"', ' ', '\\', 'a', 'rhm.1', '\u00e9', '\u0000', '\t'), { maxLength: 24 })
  .map((parts) => parts.join(''));

describe('shm and file names (property)', () => {
  const invalid = (err: unknown): boolean => (err as { code?: unknown }).code === 'ERR_SOURCE_INVALID';

  it('a Shm value names one object directly under /dev/shm, or is refused with ERR_SOURCE_INVALID', () => {
    fc.assert(
      fc.property(fc.oneof(pathish, fc.string({ maxLength: 300 })), (value) => {
        let path: Buffer;
        try {
          ({ path } = shmSegmentPath(value));
        } catch (err) {
          return invalid(err);
        }
        const prefix = Buffer.from(`${SHM_DIR}/`);
        const base = path.subarray(prefix.length);
        return (
          path.subarray(0, prefix.length).equals(prefix) &&
          base.length > 0 &&
          base.length <= MAX_SHM_NAME_BYTES &&
          !base.includes(0x2f) &&
          !base.includes(0) &&
          base.toString('latin1') !== '.' &&
          base.toString('latin1') !== '..'
        );
      }),
      { numRuns: 3000 },
    );
  });

  it('a File value is an absolute path without control bytes, or is refused with ERR_SOURCE_INVALID', () => {
    fc.assert(
      fc.property(fc.oneof(pathish, fc.string({ maxLength: 300 })), (value) => {
        let path: Buffer;
        try {
          ({ path } = sourceFilePath(value));
        } catch (err) {
          return invalid(err);
        }
        return path[0] === 0x2f && path.every((c) => c >= 0x20 && c !== 0x7f);
      }),
      { numRuns: 3000 },
    );
  });
});
