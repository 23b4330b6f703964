// /maps, /getmap, /savemap on a real controller: golden replays of 3.4's error replies, the
// listing shape, and a saved map used by the next scan on another worker.

import assert from 'node:assert/strict';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_SAVEMAP_BYTES } from '../../src/workers/controller/maps.js';
import { readGolden } from './edit-fixtures.js';
import { ENABLE_PASS, rawRequest, READ_PASS, scanV2, startRig, type Rig } from './edit-harness.js';

let rig: Rig;
before(async () => {
  rig = await startRig({ worker: true });
});
after(async () => {
  await rig.close();
});

interface MapRow {
  map: number;
  description?: string;
  uri: string;
  editable: boolean;
}

async function listMaps(): Promise<MapRow[]> {
  const r = await rawRequest(rig.controllerPort, 'GET', '/maps', { Password: READ_PASS });
  assert.equal(r.status, 200);
  return JSON.parse(r.body.toString()) as MapRow[];
}

async function replay(name: string): Promise<void> {
  const g = readGolden(name);
  const r = await rawRequest(rig.controllerPort, g.method, g.path, g.headers, g.body);
  assert.equal(r.status, g.status, `${name}: status`);
  assert.equal(r.reason, g.reason, `${name}: reason`);
  assert.equal(r.headers.get('content-type'), g.replyHeaders.get('content-type'), `${name}: content type`);
  if (g.replyBody !== undefined) assert.equal(r.body.toString(), g.replyBody, `${name}: body`);
}

describe('/maps and /getmap', () => {
  it('lists the file maps with ids, descriptions and editable flags, keys in 3.4 order', async () => {
    const rows = await listMaps();
    const ip = rows.find((m) => m.uri === join(rig.dir, 'maps/local_ip.map'))!;
    assert.deepEqual(Object.keys(ip), ['map', 'description', 'uri', 'editable']);
    assert.equal(ip.description, 'Local test IP map');
    assert.equal(ip.editable, true);
    assert.ok(Number.isInteger(ip.map) && ip.map >= 0 && ip.map <= 0xffffffff);
    assert.ok(rows.some((m) => m.uri.endsWith('local_from.map')));
    assert.equal(new Set(rows.map((m) => m.map)).size, rows.length, 'ids are distinct');
    const again = await listMaps();
    assert.deepEqual(again.map((m) => m.map), rows.map((m) => m.map), 'ids are stable');
  });

  it('/getmap returns the raw file as text/plain', async () => {
    const ip = (await listMaps()).find((m) => m.uri.endsWith('local_ip.map'))!;
    const r = await rawRequest(rig.controllerPort, 'GET', '/getmap', { Password: READ_PASS, Map: String(ip.map) });
    const golden = readGolden('getmap');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/plain');
    assert.equal(r.body.toString(), await readFile(ip.uri, 'utf8'));
    assert.equal(r.body.toString(), golden.replyBody + '\n', 'the same file as in the recording');
  });

  it('bad /getmap requests get 3.4 errors', async () => {
    for (const name of ['getmap_missing_header', 'getmap_invalid_id', 'getmap_unknown_id']) await replay(name);
    const r = await rawRequest(rig.controllerPort, 'GET', '/getmap', { Map: '1' });
    assert.equal(r.status, 401);
  });
});

describe('/savemap', () => {
  it('bad /savemap requests get 3.4 errors and change nothing', async () => {
    const before = await readFile(join(rig.dir, 'maps/local_from.map'), 'utf8');
    for (const name of ['savemap_empty_body', 'savemap_missing_header', 'savemap_invalid_id', 'savemap_unknown_id', 'savemap_readonly_password']) await replay(name);
    assert.equal(await readFile(join(rig.dir, 'maps/local_from.map'), 'utf8'), before);
  });

  it('a body over the map size cap is refused before anything is written (issue 17 item 5)', async () => {
    const from = (await listMaps()).find((m) => m.uri.endsWith('local_from.map'))!;
    const before = await readFile(from.uri, 'utf8');
    const big = Buffer.alloc(MAX_SAVEMAP_BYTES + 1, 'a');
    const r = await rawRequest(rig.controllerPort, 'POST', '/savemap', { Password: ENABLE_PASS, Map: String(from.map) }, big);
    assert.equal(r.status, 413);
    assert.equal(r.reason, 'Map too large');
    assert.equal(await readFile(from.uri, 'utf8'), before);
    assert.deepEqual((await readdir(join(rig.dir, 'maps'))).filter((f) => f.includes('.new')), [], 'no temporary file left');
  });

  it('a saved map is written atomically and used by the next scan on the other worker', async () => {
    const from = (await listMaps()).find((m) => m.uri.endsWith('local_from.map'))!;
    const msg = 'From: x@fresh.example\r\nTo: y@example.net\r\nSubject: s\r\n\r\nbody\r\n';
    const hdrs = { From: 'x@fresh.example', IP: '198.51.100.9' };
    assert.equal((await scanV2(rig.workerPort!, msg, hdrs)).symbols.LOCAL_FROM_LISTED, undefined);
    const content = '# edited through /savemap\nfresh.example 2\n';
    const r = await rawRequest(rig.controllerPort, 'POST', '/savemap', { Password: ENABLE_PASS, Map: String(from.map) }, content);
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), '{"success":true}');
    assert.equal(await readFile(from.uri, 'utf8'), content);
    assert.deepEqual((await readdir(join(rig.dir, 'maps'))).filter((f) => f.includes('.new')), [], 'no temporary file left');
    const got = await rawRequest(rig.controllerPort, 'GET', '/getmap', { Password: READ_PASS, Map: String(from.map) });
    assert.equal(got.body.toString(), content);
    const t0 = Date.now();
    let sym: { score: number } | undefined;
    while (!sym) {
      sym = (await scanV2(rig.workerPort!, msg, hdrs)).symbols.LOCAL_FROM_LISTED;
      if (!sym && Date.now() - t0 > 1000) assert.fail('the other worker did not use the saved map within a second');
      if (!sym) await new Promise((res) => setTimeout(res, 25));
    }
    console.log(`# savemap used by the other worker after ${Date.now() - t0} ms`);
    assert.equal(sym.score, 7, 'weight 2 from the map × score 3.5');
  });

  it('a map whose file is gone reads as empty (getmap_nonexistent_file) and can be saved again', async () => {
    const ip = (await listMaps()).find((m) => m.uri.endsWith('local_ip.map'))!;
    await rm(ip.uri);
    const g = readGolden('getmap_nonexistent_file');
    const r = await rawRequest(rig.controllerPort, 'GET', '/getmap', { Password: READ_PASS, Map: String(ip.map) });
    assert.equal(r.status, g.status);
    assert.equal(r.headers.get('content-type'), 'text/plain');
    assert.equal(r.headers.get('content-length'), '0');
    assert.equal((await listMaps()).find((m) => m.map === ip.map)?.editable, true, 'still listed: its directory is writable');
    const saved = await rawRequest(rig.controllerPort, 'POST', '/savemap', { Password: ENABLE_PASS, Map: String(ip.map) }, '203.0.113.0/24\n');
    assert.equal(saved.status, 200);
    assert.equal(await readFile(ip.uri, 'utf8'), '203.0.113.0/24\n');
  });
});
