// The override rule for every plugin, built-in or not (interface.md "Plugin endpoints" 4): a
// local plugin with the name of a default one replaces it whole, new names are added. Local
// `fuzzy` endpoints (a controller plugin file, which used to stop start-up with "registered
// twice") and local `maps` endpoints (a user's plugin) replace the defaults; a user's plugin
// named `gtube` replaces the built-in module; a new plugin name is added. In-process controller.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { emptyMeta } from '../../src/plugin-api/index.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/storage/types.js';
import { startControllerWorker, type RunningController } from '../../src/workers/controller/index.js';
import { loadServerModules } from '../../src/workers/server-modules.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { recordingLogger } from '../controller/harness.js';
import { httpCall } from '../helpers/server-process.js';

const MAIN = 'workers:\n  normal: { bind: "127.0.0.1:0" }\n  controller: { bind: "127.0.0.1:0", password: readpass, enable_password: enablepass }\nlogging: { level: silent }\ndata_dir: data\n';
const FUZZY_FILE = `export const plugins = {\n  fuzzy: { hashes: { handler(_t, conn) { conn.send_ucl({ from: 'local fuzzy' }); } } },\n};\n`;
const MAPS_PLUGIN = `
export const plugin = {
  name: 'my_maps',
  setup(ctx: any) {
    ctx.endpoint('maps', 'query', { enable: false, handler(_t: unknown, conn: any, params: Record<string, string>) { conn.sendUcl({ from: 'local maps', value: params.value ?? null }); } });
    ctx.endpoint('extra', 'hi', { enable: true, handler(_t: unknown, conn: any) { conn.send_string('"hi"'); } });
  },
};
`;
const GTUBE_PLUGIN = `
export function plugin({ defineModule }: any) {
  return defineModule({
    name: 'gtube',
    symbols: { LOCAL_GTUBE: { score: 1, group: 'local' } },
    setup(ctx: any) {
      ctx.symbol({ name: 'LOCAL_GTUBE', check(task: any) { if (task.raw.includes('GTUBE')) task.insert('LOCAL_GTUBE'); } });
    },
  });
}
`;

let dir: string;
let stores: Stores;
let engine: Engine;
let ctl: RunningController;
const { log, lines } = recordingLogger();

before(async () => {
  dir = await makeConfDir({
    'mailsift.yaml': MAIN,
    'controller/maps.mjs': await readFile('conf/controller/maps.mjs', 'utf8'),
    'local.d/controller.mjs': FUZZY_FILE,
    'local.d/plugins/my_maps.ts': MAPS_PLUGIN,
    'local.d/plugins/gtube.ts': GTUBE_PLUGIN,
  });
  const set = await loadServerModules(dir);
  assert.deepEqual(set.failures, []);
  const config = await loadConfig(dir, { modules: set.modules });
  stores = await openStores(config, log);
  engine = await createEngine(config.engine, set.modules, { log, stores, localModules: set.local });
  ctl = await startControllerWorker({ host: '127.0.0.1', port: 0, log, context: { log, config, engine, stores } });
});

after(async () => {
  await ctl?.close();
  await stores?.close();
  await removeConfDir(dir);
});

const get = (path: string, pass = 'enablepass') => httpCall(ctl.port, 'GET', path, undefined, { Password: pass });
const post = (path: string, body: string) => httpCall(ctl.port, 'POST', path, Buffer.from(body), { Password: 'enablepass' });

test('a local fuzzy plugin file replaces every endpoint of the fuzzy module, /fuzzyadd included', async () => {
  const r = await get('/plugins/fuzzy/hashes');
  assert.equal(r.status, 200, r.body.toString());
  assert.deepEqual(JSON.parse(r.body.toString()), { from: 'local fuzzy' });
  assert.equal((await get('/plugins/fuzzy/storages')).status, 404);
  assert.equal((await post('/fuzzyadd', 'Subject: x\r\n\r\nbody\r\n')).status, 404);
  assert.ok(lines.some((l) => l.msg === 'plugin endpoints replaced' && l.extra?.plugin === 'fuzzy'), JSON.stringify(lines));
});

test("a user's plugin registering maps endpoints replaces the shipped maps plugin whole", async () => {
  const r = await get('/plugins/maps/query?value=x', 'readpass');
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.body.toString()), { from: 'local maps', value: 'x' });
  assert.equal((await get('/plugins/maps/list')).status, 404);
});

test('a new plugin name is added; the endpoints nobody replaced stay', async () => {
  assert.equal((await get('/plugins/extra/hi', 'readpass')).status, 401);
  const hi = await get('/plugins/extra/hi');
  assert.equal(hi.status, 200);
  assert.equal(hi.body.toString(), '"hi"');
  const classifiers = await get('/bayes/classifiers', 'readpass');
  assert.equal(classifiers.status, 200, 'the Bayes module keeps its endpoints');
});

test("a user's plugin named like a built-in module replaces the module", async () => {
  const r = await engine.scan(Buffer.from('Subject: t\r\n\r\nXJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X\r\n'), emptyMeta());
  const names = r.symbols.map((s) => s.name);
  assert.ok(names.includes('LOCAL_GTUBE'), names.join(' '));
  assert.ok(!names.includes('GTUBE'), 'the built-in gtube module is gone');
  assert.notEqual(r.action, 'reject');
});
