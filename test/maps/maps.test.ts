// The maps framework on real files and a real HTTP server: line format, every kind, file
// reload after an edit, conditional http reloads, inline data, atomic writes.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMapRegistry, mapId, parseMapText, type MapRegistry } from '../../src/maps/index.js';
import type { Logger } from '../../src/plugin-api/index.js';

const warnings: string[] = [];
const log: Logger = { debug() {}, info() {}, warn: (m) => void warnings.push(m), error: (m) => void warnings.push(m) };

let dir: string;
let reg: MapRegistry;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailsift-maps-'));
  reg = createMapRegistry({ baseDir: dir, log, fileCheckMs: 100 });
});
after(async () => {
  reg.close();
  await rm(dir, { recursive: true, force: true });
});

async function waitFor(cond: () => boolean, ms: number): Promise<number> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - t0;
}

describe('map line format', () => {
  it('reads keys, values, comments, escapes, quotes and regexp keys', () => {
    const text = '# header\nexample.com\n  spam.example  5.5 # trailing\r\n"key with space" v\nhash\\#tag x\n\n/^foo.*bar$/i  REGEX\n';
    const plain = parseMapText(text);
    assert.deepEqual(
      plain.map((e) => [e.key, e.value]),
      [['example.com', undefined], ['spam.example', '5.5'], ['key with space', 'v'], ['hash#tag', 'x'], ['/^foo.*bar$/i', 'REGEX']],
    );
    const re = parseMapText(text, { regexpKeys: true });
    assert.deepEqual(re[4]!.regexp, { source: '^foo.*bar$', flags: 'i' });
    assert.equal(re[4]!.line, 7);
  });
});

describe('map kinds', () => {
  it('set and hash: exact keys, default value, first duplicate wins, weights', async () => {
    await writeFile(join(dir, 'h.map'), 'a.example 2.5\nb.example\nb.example other\nc.example word\n');
    const m = await reg.add({ url: 'h.map', kind: 'hash' });
    assert.equal(m.get('a.example'), '2.5');
    assert.equal(m.get('b.example'), '1');
    assert.equal(m.get('A.EXAMPLE'), undefined, 'byte comparison');
    assert.equal(m.weight('a.example'), 2.5);
    assert.equal(m.weight('c.example'), 1);
    assert.equal(m.weight('zzz'), undefined);
    const s = await reg.add({ url: 'set;' + join(dir, 'h.map') });
    assert.equal(s.kind, 'set');
    assert.ok(s.has('c.example'));
  });

  it('regexp, regexp_multi, glob, glob_multi', async () => {
    await writeFile(join(dir, 'r.map'), '/^cheap.*pills$/i PHARMA\n/pills/ ANY\n[invalid( BAD\n');
    const r = await reg.add({ url: 'regexp;r.map' });
    assert.equal(r.get('CHEAP blue PILLS'), 'PHARMA');
    assert.equal(r.get('more pills'), 'ANY');
    assert.equal(r.get('nothing'), undefined);
    assert.ok(warnings.some((w) => w.includes('skipped')), 'the invalid regexp is reported');
    const rm2 = await reg.add({ url: 'r.map', kind: 'regexp_multi' });
    assert.deepEqual(rm2.getAll('cheap pills'), ['PHARMA', 'ANY']);
    await writeFile(join(dir, 'g.map'), '*.example.com GLOB1\nmail?.example.org GLOB2\n*.com ANYCOM\n');
    const g = await reg.add({ url: 'glob;g.map' });
    assert.equal(g.get('a.b.example.com'), 'GLOB1');
    assert.equal(g.get('mail1.example.org'), 'GLOB2');
    assert.equal(g.get('mail12.example.org'), undefined);
    assert.equal(g.get('example.com.evil'), undefined, 'globs are anchored');
    const gm = await reg.add({ url: 'g.map', kind: 'glob_multi' });
    assert.deepEqual(gm.getAll('x.example.com'), ['GLOB1', 'ANYCOM']);
  });

  it('radix: longest prefix, IPv4 and IPv6, bad entries skipped', async () => {
    await writeFile(join(dir, 'ip.map'), '10.0.0.0/8 wide\n10.1.0.0/16 narrow\n192.0.2.1\n2001:db8::/32 v6net\nnot-an-ip x\n10.0.0.0/33 bad\n');
    const ip = await reg.add({ url: 'radix;ip.map' });
    assert.equal(ip.get('10.9.9.9'), 'wide');
    assert.equal(ip.get('10.1.2.3'), 'narrow');
    assert.equal(ip.get('192.0.2.1'), '1');
    assert.equal(ip.get('192.0.2.2'), undefined);
    assert.equal(ip.get('::ffff:10.1.2.3'), 'narrow', 'IPv4-mapped IPv6 finds the IPv4 entry');
    assert.equal(ip.get('2001:db8:1::5'), 'v6net');
    assert.equal(ip.get('2001:db9::1'), undefined);
    assert.equal(ip.get('garbage'), undefined);
    assert.equal(ip.size, 4);
  });

  it('inline data and several sources merged', async () => {
    await writeFile(join(dir, 'one.map'), 'from-file\n');
    const m = await reg.add({ url: ['one.map', 'static'], data: ['inline-a 7', 'inline-b'] });
    assert.equal(m.get('from-file'), '1');
    assert.equal(m.get('inline-a'), '7');
    assert.ok(m.has('inline-b'));
  });
});

describe('map reloading', () => {
  it('an edited file is used within the check interval; a missing file is an empty map', async () => {
    const p = join(dir, 'live.map');
    const m = await reg.add({ url: p, kind: 'hash', description: 'live' });
    assert.equal(m.size, 0);
    await writeFile(p, 'new.example\n');
    const took = await waitFor(() => m.has('new.example'), 2000);
    assert.ok(took < 1000, `reloaded in ${took} ms`);
    await writeFile(p, 'other.example\n');
    await waitFor(() => m.has('other.example') && !m.has('new.example'), 2000);
  });

  it('http(s) maps: conditional requests, 304 keeps the data, errors keep the last data', async () => {
    let body = 'http.example 3\n';
    const lastModified = new Date(Date.now() - 60_000).toUTCString();
    const seen: Array<string | undefined> = [];
    let fail = false;
    const srv = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(req.headers['if-modified-since']);
      if (fail) return void res.writeHead(500).end();
      if (req.headers['if-modified-since'] === lastModified) return void res.writeHead(304).end();
      res.writeHead(200, { 'last-modified': lastModified, 'content-type': 'text/plain' }).end(body);
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/list.map`;
      const m = await reg.add({ url, pollInterval: 2 });
      assert.equal(m.get('http.example'), '3');
      assert.equal(seen[0], undefined);
      await waitFor(() => seen.length >= 2, 5000);
      assert.equal(seen[1], lastModified, 'the second fetch is conditional');
      assert.equal(m.get('http.example'), '3', '304 keeps the data');
      const listed = (await reg.sources()).find((s) => s.uri === url)!;
      assert.equal(listed.type, 'http');
      assert.equal(listed.editable, false);
      fail = true;
      body = 'changed\n';
      await waitFor(() => seen.length >= 3, 5000);
      assert.equal(m.get('http.example'), '3', 'a failing source keeps its last data');
    } finally {
      srv.close();
    }
  });
});

describe('writing file maps', () => {
  it('replaces the file atomically, reloads it, and leaves no temporary file', async () => {
    const p = join(dir, 'edit.map');
    await writeFile(p, 'old.example\n');
    const m = await reg.add({ url: p, description: 'editable' });
    const id = mapId(p);
    const src = (await reg.sources()).find((s) => s.id === id)!;
    assert.equal(src.editable, true);
    assert.equal(src.description, 'editable');
    await reg.writeFileMap(id, Buffer.from('fresh.example 2\n'));
    assert.equal(m.get('fresh.example'), '2', 'the new content is used at once in this process');
    assert.equal(m.has('old.example'), false);
    assert.equal(await readFile(p, 'utf8'), 'fresh.example 2\n');
    assert.deepEqual((await readdir(dir)).filter((f) => f.includes('.new')), []);
    await assert.rejects(reg.writeFileMap(12345, Buffer.from('x')), { code: 'MAP_NOT_FOUND' });
  });
});
