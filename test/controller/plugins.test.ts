// Plugin endpoints on a real controller: the shipped maps plugin (golden shapes of 3.4), the
// override rules for local.d/controller.{mjs,ts}, parameters from the query string, an
// urlencoded body or the raw body, and handler failures answered without a crash.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readGolden } from './edit-fixtures.js';
import { ENABLE_PASS, rawRequest, READ_PASS, startRig, type Rig } from './edit-harness.js';

// A local file replacing nothing but adding `example`, and one replacing `override_me` whole.
const LOCAL_MJS = `
export function plugins(api) {
  return {
    example: {
      hello: { handler(task, conn, params) { conn.send_ucl({ hello: params.name ?? null, task_bytes: task.get_content().length }); } },
      form: { handler(_t, conn, params) { conn.sendUcl({ a: params.a, b: params.b }); } },
      raw: { need_task: true, handler(task, conn) { conn.send_ucl({ bytes: task.content.length, subject: task.message().headers.get?.('subject') ?? null }); } },
      priv: { enable: true, version: 3, handler(_t, conn) { conn.send_string('{"privileged":true}'); } },
      boom: { handler() { throw new Error('kaput'); } },
      boom_async: { async handler() { await new Promise((r) => setTimeout(r, 5)); throw new Error('later'); } },
      store_down: { handler(_t, conn) { conn.send_error(503, 'store unavailable'); } },
      silent: { handler() {} },
      twice: { handler(_t, conn) { conn.send_error(404, 'first'); conn.send_ucl({ second: true }); } },
      maps_seen: { handler(_t, conn) { conn.send_ucl(api.maps.list().map((m) => m.alias)); } },
    },
    override_me: { only_local: { handler(_t, conn) { conn.send_ucl({ from: 'local' }); } } },
    'bad name!': { x: { handler() {} } },
    nohandler: { x: { enable: true } },
  };
}
`;
const DEFAULT_OVERRIDE_ME = `
export const plugins = {
  override_me: {
    only_default: { handler(_t, conn) { conn.send_ucl({ from: 'default' }); } },
    shared: { handler(_t, conn) { conn.send_ucl({ from: 'default' }); } },
  },
};
`;
const LOCAL_TS = `
import type { PluginTable } from '${join(process.cwd(), 'src/config/controller-plugin-types.js')}';
export const plugins: PluginTable = {
  typed: { ping: { handler(_t, conn) { conn.sendString('"typed pong"'); } } },
};
`;

let rig: Rig;
before(async () => {
  rig = await startRig({
    files: {
      'controller/maps.mjs': await readFile('conf/controller/maps.mjs', 'utf8'),
      'controller/other.mjs': DEFAULT_OVERRIDE_ME,
      'local.d/controller.mjs': LOCAL_MJS,
      'local.d/controller.ts': LOCAL_TS,
    },
  });
});
after(async () => {
  await rig.close();
});

const get = (path: string, pass = READ_PASS, headers: Record<string, string> = {}) => rawRequest(rig.controllerPort, 'GET', path, { Password: pass, ...headers });
const json = (b: Buffer): unknown => JSON.parse(b.toString());

describe('the shipped maps plugin', () => {
  it('/plugins lists every plugin with its version and paths', async () => {
    const r = await get('/plugins');
    assert.equal(r.status, 200);
    const list = json(r.body) as Record<string, { version: number; paths: string[] }>;
    assert.deepEqual(list.maps!.paths.sort(), ['/plugins/maps/list', '/plugins/maps/query', '/plugins/maps/query_json', '/plugins/maps/query_specific']);
    assert.equal(list.maps!.version, 0);
    assert.equal(list.example!.version, 3);
    assert.deepEqual(Object.keys(readGolden('plugins').replyBody ? (json(Buffer.from(readGolden('plugins').replyBody!)) as Record<string, object>).maps! : {}), Object.keys(list.maps!));
  });

  it('query: a hit in the 3.4 shape', async () => {
    const r = await get('/plugins/maps/query?value=10.1.2.3');
    assert.equal(r.status, 200);
    const body = json(r.body) as { success: boolean; results: Array<Record<string, unknown>> };
    const golden = json(Buffer.from(readGolden('plugins_maps_query').replyBody!)) as typeof body;
    assert.equal(body.success, true);
    assert.deepEqual(body.results, [{ map: join(rig.dir, 'maps/local_ip.map'), alias: 'local_ip.map', key: '10.1.2.3', value: '1', hit: true }]);
    assert.deepEqual(Object.keys(body.results[0]!).sort(), Object.keys(golden.results[0]!).sort());
  });

  it('values, report_misses, no hit, list, query_specific, query_json', async () => {
    const v = json((await get('/plugins/maps/query?values=spammer.example,192.0.2.1')).body) as { results: Array<{ key: string; alias: string }> };
    assert.deepEqual(v.results.map((x) => [x.key, x.alias]), [['spammer.example', 'local_from.map'], ['192.0.2.1', 'local_ip.map']]);
    const miss = json((await get('/plugins/maps/query?value=nobody.example&report_misses')).body) as { success: boolean; results: Array<{ hit: boolean; value?: string }> };
    assert.equal(miss.results.length, 2);
    assert.ok(miss.results.every((x) => x.hit === false && !('value' in x)));
    assert.deepEqual(json((await get('/plugins/maps/query?value=nobody.example')).body), { success: false, results: [] });
    const list = json((await get('/plugins/maps/list')).body) as { maps: string[]; aliases: Record<string, string> };
    assert.equal(list.aliases['local_ip.map'], join(rig.dir, 'maps/local_ip.map'));
    assert.equal(list.maps.length, 2);
    const spec = json((await get('/plugins/maps/query_specific?maps=local_ip.map&values=192.0.2.1,spammer.example')).body) as { results: unknown[] };
    assert.equal(spec.results.length, 1);
    const nosuch = await get('/plugins/maps/query_specific?maps=nope.map&value=x');
    assert.equal(nosuch.status, 404);
    assert.equal(nosuch.reason, 'no such map: nope.map');
    const qj = await rawRequest(rig.controllerPort, 'POST', '/plugins/maps/query_json', { Password: READ_PASS }, JSON.stringify({ values: ['weighted.example'], maps: ['local_from.map'] }));
    assert.deepEqual((json(qj.body) as { results: Array<{ value: string }> }).results.map((x) => x.value), ['2']);
    const bad = await rawRequest(rig.controllerPort, 'POST', '/plugins/maps/query_json', { Password: READ_PASS }, '{"values":"nope"}');
    assert.equal(bad.status, 400);
    assert.equal(bad.reason, 'field "values": expected an array of strings');
    const empty = await rawRequest(rig.controllerPort, 'POST', '/plugins/maps/query_json', { Password: READ_PASS });
    assert.equal(empty.status, 400);
    assert.equal(empty.reason, 'Empty body is not permitted');
    assert.equal((await get('/plugins/maps/query?value=x', 'wrong')).status, 401);
  });
});

describe('plugin files and override rules', () => {
  it('a same-named plugin later in the order replaces the earlier one whole', async () => {
    assert.deepEqual(json((await get('/plugins/override_me/only_local')).body), { from: 'local' });
    for (const p of ['/plugins/override_me/only_default', '/plugins/override_me/shared']) {
      const r = await get(p);
      assert.equal(r.status, 404, `${p} went with the default plugin`);
      assert.equal(r.body.toString(), 'Not found');
    }
  });

  it('malformed definitions are skipped; a .ts local file loads; new plugins are added', async () => {
    const list = json((await get('/plugins')).body) as Record<string, unknown>;
    assert.ok(!('bad name!' in list));
    assert.deepEqual(list.nohandler, { version: 0, paths: [] });
    assert.equal((await get('/plugins/typed/ping')).body.toString(), '"typed pong"');
    assert.deepEqual(json((await get('/plugins/example/maps_seen')).body), ['local_from.map', 'local_ip.map']);
  });

  it('parameters: query string, urlencoded body, raw body with need_task', async () => {
    assert.deepEqual(json((await get('/PLUGINS/example/hello?name=%22bob%22')).body), { hello: 'bob', task_bytes: 0 });
    const form = await rawRequest(rig.controllerPort, 'POST', '/plugins/example/form?b=q', { Password: READ_PASS, 'Content-Type': 'application/x-www-form-urlencoded' }, 'a=1+2&b=body');
    assert.deepEqual(json(form.body), { a: '1 2', b: 'q' });
    const msg = 'Subject: test subject\r\nFrom: a@b.example\r\n\r\nbody\r\n';
    const raw = await rawRequest(rig.controllerPort, 'POST', '/plugins/example/raw', { Password: READ_PASS }, msg);
    assert.equal((json(raw.body) as { bytes: number }).bytes, Buffer.byteLength(msg));
    const none = await rawRequest(rig.controllerPort, 'POST', '/plugins/example/raw', { Password: READ_PASS });
    assert.equal(none.status, 400);
  });

  it('levels: enable endpoints need the enable password', async () => {
    assert.equal((await get('/plugins/example/priv')).status, 401);
    const ok = await get('/plugins/example/priv', ENABLE_PASS);
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'application/json');
    assert.equal(ok.body.toString(), '{"privileged":true}');
  });

  it('handler failures become error replies and the controller keeps serving', async () => {
    const boom = await get('/plugins/example/boom');
    assert.equal(boom.status, 500);
    assert.equal(boom.reason, 'Cannot run callback: kaput');
    assert.equal((await get('/plugins/example/boom_async')).reason, 'Cannot run callback: later');
    const down = await get('/plugins/example/store_down');
    assert.equal(down.status, 503);
    assert.equal(down.body.toString(), '{"error":"store unavailable"}');
    const silent = await get('/plugins/example/silent');
    assert.equal(silent.status, 500);
    assert.deepEqual(json((await get('/plugins/example/twice')).body), { second: true }, 'the last reply wins');
    assert.equal((await get('/plugins/maps/list')).status, 200);
  });
});
