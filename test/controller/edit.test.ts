// /actions, /symbols, /saveactions, /savesymbols against a real controller: golden replays of
// Rspamd 3.4's exchanges, bad input saving nothing, and saved values reaching a scan on
// another worker (own engine, own store connection) within a second.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { openStores } from '../../src/storage/index.js';
import { readDynamicConf, startDynamicSync } from '../../src/workers/dynamic-config.js';
import { readGolden } from './edit-fixtures.js';
import { ENABLE_PASS, quietLog, rawRequest, READ_PASS, scanV2, startRig, type Rig } from './edit-harness.js';

let rig: Rig;

before(async () => {
  rig = await startRig({ worker: true });
});
after(async () => {
  await rig.close();
});

const MESSAGE = 'From: a@spammer.example\r\nTo: b@example.net\r\nSubject: hello\r\nDate: Sun, 22 Nov 2026 02:00:00 +0000\r\nMessage-ID: <t1@spammer.example>\r\n\r\nHello there.\r\n';
const SCAN_HEADERS = { From: 'a@spammer.example', IP: '198.51.100.7', Rcpt: 'b@example.net' };

async function replay(name: string, compareBody = true): Promise<void> {
  const g = readGolden(name);
  const r = await rawRequest(rig.controllerPort, g.method, g.path, g.headers, g.body);
  assert.equal(r.status, g.status, `${name}: status`);
  assert.equal(r.reason, g.reason, `${name}: reason phrase`);
  assert.equal(r.headers.get('content-type'), g.replyHeaders.get('content-type'), `${name}: content type`);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  if (compareBody && g.replyBody !== undefined) assert.equal(r.body.toString(), g.replyBody, `${name}: body`);
}

/** Polls a scan on the worker until `ok`; returns the time it took. */
async function untilScan(ok: (r: Awaited<ReturnType<typeof scanV2>>) => boolean, limitMs: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const r = await scanV2(rig.workerPort!, MESSAGE, SCAN_HEADERS);
    if (ok(r)) return Date.now() - t0;
    if (Date.now() - t0 > limitMs) throw new Error(`not visible within ${limitMs} ms: ${JSON.stringify({ action: r.action, score: r.score })}`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

describe('actions', () => {
  it('/actions matches 3.4 for the stock thresholds', () => replay('actions'));

  it('bad /saveactions bodies are refused as 3.4 does and save nothing', async () => {
    const before = await rig.stores.kv.get('mailsift:dynamic:conf');
    for (const name of ['saveactions_wrong_length', 'saveactions_not_json', 'saveactions_empty_body', 'saveactions_readonly_password']) await replay(name);
    const r = await rawRequest(rig.controllerPort, 'POST', '/saveactions', { Password: ENABLE_PASS }, '[1,2,3,"x",5]');
    assert.equal(r.status, 400);
    const huge = await rawRequest(rig.controllerPort, 'POST', '/saveactions', { Password: ENABLE_PASS }, `[1,2,3,4${' '.repeat(2 * 1024 * 1024)}]`);
    assert.equal(huge.status, 413);
    assert.equal(huge.reason, 'Body too large');
    assert.deepEqual(await rig.stores.kv.get('mailsift:dynamic:conf'), before);
  });

  it('a saved threshold changes the verdict of the other worker within a second', async () => {
    const first = await scanV2(rig.workerPort!, MESSAGE, SCAN_HEADERS);
    assert.ok(first.symbols.LOCAL_FROM_LISTED, 'the test map rule fires');
    // Thresholds are set around whatever this message scores with the shipped rules: greylist
    // just below it, add header and reject well above, so the verdict can only become greylist.
    assert.notEqual(first.action, 'greylist');
    const below = Math.max(0.5, Math.floor(first.score) - 0.5);
    const above = Math.ceil(first.score) + 5;
    const r = await rawRequest(rig.controllerPort, 'POST', '/saveactions', { Password: ENABLE_PASS }, JSON.stringify([above + 5, null, above, below]));
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), '{"success":true}');
    const took = await untilScan((s) => s.action === 'greylist' && s.required_score === above + 5, 1000);
    console.log(`# saveactions visible on the other worker after ${took} ms`);
    assert.ok(took < 1000);
  });

  it('/actions after saving [16,8,7,5] matches 3.4, and the saved values survive a restart', async () => {
    await replay('saveactions_success');
    await replay('actions_after_save');
    const stores = await openStores(rig.cfg, quietLog);
    try {
      const fresh = await createEngine(rig.cfg.engine, builtinModules, { log: quietLog, stores });
      const sync = startDynamicSync({ engine: fresh, kv: stores.kv, log: quietLog });
      await sync.tick();
      sync.stop();
      assert.deepEqual(
        fresh.actions().filter((a) => a.threshold !== null).map((a) => [a.name, a.threshold]),
        [['greylist', 5], ['add header', 7], ['rewrite subject', 8], ['reject', 16]],
      );
      fresh.maps().close();
    } finally {
      await stores.close();
    }
  });

  it('saving the configured values removes the overrides', async () => {
    const r = await rawRequest(rig.controllerPort, 'POST', '/saveactions', { Password: ENABLE_PASS }, '[15,null,6,4]');
    assert.equal(r.status, 200);
    assert.deepEqual((await readDynamicConf(rig.stores.kv)).actions, {});
    await replay('actions');
  });
});

describe('symbols', () => {
  it('/symbols lists every symbol with group, weight and description in the 3.4 shape', async () => {
    const r = await rawRequest(rig.controllerPort, 'GET', '/symbols', { Password: READ_PASS });
    assert.equal(r.status, 200);
    const groups = JSON.parse(r.body.toString()) as Array<{ group: string; rules: Array<Record<string, unknown>> }>;
    const all: Array<Record<string, unknown>> = groups.flatMap((g) => g.rules.map((x) => ({ ...x, group: g.group })));
    assert.equal(all.length, rig.controllerEngine.symbols().length);
    const local = all.find((x) => x.symbol === 'LOCAL_FROM_LISTED')!;
    assert.deepEqual(local, { symbol: 'LOCAL_FROM_LISTED', weight: 3.5, description: 'Sender domain in the local map', frequency: 0, frequency_stddev: 0, time: 0, group: 'local' });
    assert.match(r.body.toString(), /"weight":3\.500000,/, 'doubles keep the 3.4 form');
    // Same key order as 3.4's rule objects.
    const golden = readGolden('symbols').replyBody!;
    const keyOrder = (s: string) => /\{"symbol":[^{}]*\}/.exec(s)![0].match(/"(\w+)":/g)!.join(',');
    assert.equal(keyOrder(r.body.toString()), keyOrder(golden));
  });

  it('bad /savesymbols bodies are refused as 3.4 does', async () => {
    for (const name of ['savesymbols_not_array', 'savesymbols_readonly_password']) await replay(name);
    const e = await rawRequest(rig.controllerPort, 'POST', '/savesymbols', { Password: ENABLE_PASS }, '');
    assert.equal(e.status, 400);
    assert.equal(e.reason, 'Empty body is not permitted');
  });

  it('a saved score reaches the other worker within a second; unchanged values are a 404', async () => {
    await replay('savesymbols_success');
    const r = await rawRequest(rig.controllerPort, 'POST', '/savesymbols', { Password: ENABLE_PASS }, JSON.stringify([{ name: 'LOCAL_FROM_LISTED', value: 9.25 }]));
    assert.equal(r.status, 200);
    const took = await untilScan((s) => s.symbols.LOCAL_FROM_LISTED?.score === 9.25, 1000);
    console.log(`# savesymbols visible on the other worker after ${took} ms`);
    const again = await rawRequest(rig.controllerPort, 'POST', '/savesymbols', { Password: ENABLE_PASS }, JSON.stringify([{ name: 'LOCAL_FROM_LISTED', value: 9.25 }]));
    assert.equal(again.status, 404);
    assert.equal(again.reason, 'No symbols to save');
    assert.equal(again.body.toString(), '{"error":"No symbols to save"}');
    // Back to the configured score: the override is dropped everywhere.
    const back = await rawRequest(rig.controllerPort, 'POST', '/savesymbols', { Password: ENABLE_PASS }, JSON.stringify([{ name: 'LOCAL_FROM_LISTED', value: 3.5 }]));
    assert.equal(back.status, 200);
    assert.equal((await readDynamicConf(rig.stores.kv)).scores.LOCAL_FROM_LISTED, undefined);
    await untilScan((s) => s.symbols.LOCAL_FROM_LISTED?.score === 3.5, 1000);
  });
});

describe('save validation (issue 17 item 5): a bad body is a 400 naming the problem and saves nothing', () => {
  const post = (path: string, body: string) => rawRequest(rig.controllerPort, 'POST', path, { Password: ENABLE_PASS }, body);
  const stored = () => rig.stores.kv.get('mailsift:dynamic:conf');
  const listed = async () => (await rawRequest(rig.controllerPort, 'GET', '/actions', { Password: READ_PASS })).body.toString();

  it('/saveactions refuses non-numbers, infinities, negatives, absurd values and inverted orders', async () => {
    const before = [await stored(), await listed()];
    const scoreBefore = (await scanV2(rig.workerPort!, MESSAGE, SCAN_HEADERS)).required_score;
    const cases: Array<[string, string]> = [
      ['["x",null,6,4]', 'Invalid threshold for reject: expected a number or null, got a string'],
      ['["15",null,6,4]', 'Invalid threshold for reject: expected a number or null, got a string'],
      ['[true,null,6,4]', 'Invalid threshold for reject: expected a number or null, got a boolean'],
      ['[15,null,{},4]', 'Invalid threshold for add header: expected a number or null, got an object'],
      // JSON.parse reads these as ±Infinity.
      ['[1e309,null,6,4]', 'Invalid threshold for reject: not a finite number'],
      ['[15,null,6,-1e309]', 'Invalid threshold for greylist: not a finite number'],
      ['[15,null,6,-1]', 'Invalid threshold for greylist: -1 is negative'],
      ['[1e7,null,6,4]', 'Invalid threshold for reject: 10000000 is beyond +-1000000'],
      ['[4,5,6,15]', 'Invalid thresholds: rewrite subject (5) is above reject (4); set thresholds must be reject >= rewrite subject >= add header >= greylist'],
      // A switched-off action is skipped: add header is compared with reject.
      ['[15,null,16,4]', 'Invalid thresholds: add header (16) is above reject (15); set thresholds must be reject >= rewrite subject >= add header >= greylist'],
      ['[null,null,6,7]', 'Invalid thresholds: greylist (7) is above add header (6); set thresholds must be reject >= rewrite subject >= add header >= greylist'],
    ];
    for (const [body, reason] of cases) {
      const r = await post('/saveactions', body);
      assert.equal(r.status, 400, body);
      assert.equal(r.reason, reason, body);
      assert.deepEqual(JSON.parse(r.body.toString()), { error: reason }, `${body}: the error body is valid JSON`);
    }
    assert.deepEqual([await stored(), await listed()], before, 'nothing saved, nothing applied');
    await new Promise((res) => setTimeout(res, 600));
    assert.equal((await scanV2(rig.workerPort!, MESSAGE, SCAN_HEADERS)).required_score, scoreBefore, 'the other worker still scans with the old thresholds');
  });

  it('/saveactions takes what the 3.4 web UI sends: numbers, null for an emptied field, equal thresholds', async () => {
    for (const body of ['[15,null,6,4]', '[15,15,6,4]', '[20.5,12,6,0]', '[null,null,null,null]']) {
      const r = await post('/saveactions', body);
      assert.equal(r.status, 200, body);
      assert.equal(r.body.toString(), '{"success":true}');
    }
    assert.deepEqual((await readDynamicConf(rig.stores.kv)).actions, { reject: null, 'add header': null, greylist: null });
    assert.equal((await post('/saveactions', '[15,null,6,4]')).status, 200);
    assert.deepEqual((await readDynamicConf(rig.stores.kv)).actions, {});
  });

  it('/savesymbols refuses unknown names, missing or non-numeric scores and conflicts, whole', async () => {
    const before = await stored();
    const ok = { name: 'LOCAL_FROM_LISTED', value: 4.5 };
    const cases: Array<[unknown, string]> = [
      [[ok, { name: 'NO_SUCH_SYMBOL', value: 3 }], 'Unknown symbol: NO_SUCH_SYMBOL'],
      [[ok, { name: 'bad"name', value: 3 }], 'Unknown symbol: entry 2'],
      [[{ name: 7, value: 3 }], 'Invalid symbol entry 1: name must be a non-empty string, got number'],
      [[{ value: 3 }], 'Invalid symbol entry 1: name must be a non-empty string, got nothing'],
      // The 3.4 web UI sends null for an emptied field; 3.4 saved 0.
      [[ok, { name: 'LOCAL_IP_LISTED', value: null }], 'Invalid score for LOCAL_IP_LISTED: expected a number, got null'],
      [[{ name: 'LOCAL_IP_LISTED' }], 'Invalid score for LOCAL_IP_LISTED: expected a number, got nothing'],
      [[{ name: 'LOCAL_IP_LISTED', value: '2' }], 'Invalid score for LOCAL_IP_LISTED: expected a number, got a string'],
      [[{ name: 'LOCAL_IP_LISTED', value: 2e6 }], 'Invalid score for LOCAL_IP_LISTED: 2000000 is beyond +-1000000'],
      [[ok, { name: 'LOCAL_FROM_LISTED', value: 5 }], 'Invalid symbols: LOCAL_FROM_LISTED is listed twice with different scores (4.5 and 5)'],
    ];
    for (const [body, reason] of cases) {
      const r = await post('/savesymbols', JSON.stringify(body));
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.reason, reason, JSON.stringify(body));
    }
    for (const body of ['[{"name":"LOCAL_IP_LISTED","value":1e309}]', '[{"name":"LOCAL_IP_LISTED","value":-1e309}]']) {
      const r = await post('/savesymbols', body);
      assert.equal(r.status, 400, body);
      assert.equal(r.reason, 'Invalid score for LOCAL_IP_LISTED: not a finite number');
    }
    assert.deepEqual(await stored(), before, 'the valid entries of refused requests were not saved either');
    assert.equal(rig.controllerEngine.symbols().find((x) => x.name === 'LOCAL_FROM_LISTED')?.score, 3.5);
    // Negative scores are normal (whitelists); a name listed twice with one value is fine.
    const r = await post('/savesymbols', JSON.stringify([{ name: 'LOCAL_FROM_LISTED', value: -2 }, { name: 'LOCAL_FROM_LISTED', value: -2 }]));
    assert.equal(r.status, 200);
    assert.equal((await readDynamicConf(rig.stores.kv)).scores.LOCAL_FROM_LISTED, -2);
    assert.equal((await post('/savesymbols', JSON.stringify([{ name: 'LOCAL_FROM_LISTED', value: 3.5 }]))).status, 200);
  });
});
