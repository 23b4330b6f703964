// /fuzzyadd, /fuzzydel, /fuzzydelhash replayed from the Rspamd 3.4 captures (fixtures/controller)
// against our controller, whose fuzzy_check rule writes to our storage worker over UDP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { startFuzzyServer } from '../../src/fuzzy-storage/storage-server.js';
import { readFixture, request, startTestController, type Fixture, type RawReply } from '../controller/harness.js';
import { MemoryFuzzyStore } from './memory-store.js';

const MAIN = '{ bind: "127.0.0.1:0", password: readpass, enable_password: enablepass, secure_ip: "192.0.2.254", auth_fail_limit: 0 }';
const HAM_DIGEST = 'ccc0c41478dcca7dc898c94c2e2d0778b629b4272ffee8d7f0ba92b30d6acb20356794065ddd81cf9ba7e410dfde1fe1b3bff3748675da80138bdb6bfebe930b';
/** Replies whose hashes come from English text, which we hash exactly as 3.4 does: compared byte for byte. */
const EXACT = new Set(['fuzzyadd_webui_lowercase', 'fuzzyadd_for_delhash', 'fuzzydelhash_success', 'fuzzydelhash_bad_hash', 'fuzzydelhash_multiple']);

function fuzzyYaml(port: number): string {
  return [
    'rules:',
    '  local:',
    `    servers: "127.0.0.1:${port}"`,
    '    mime_types: ["*"]',
    '    max_score: 20',
    '    fuzzy_map:',
    '      LOCAL_FUZZY_DENIED: { flag: 1, max_score: 20 }',
    '      LOCAL_FUZZY_PROB: { flag: 2, max_score: 10 }',
    '      LOCAL_FUZZY_WHITE: { flag: 3, max_score: 2 }',
    '',
  ].join('\n');
}

function check(fx: Fixture, r: RawReply): void {
  const where = `${fx.name}: ${fx.request.method} ${fx.request.path}`;
  assert.equal(r.statusLine, `HTTP/1.1 ${fx.status} ${fx.reason}`, where);
  assert.deepEqual(r.headers.map(([k]) => k), fx.headers.map(([k]) => k), `${where}: header order`);
  const ours = r.body.toString();
  if (fx.body === undefined) return;
  if (EXACT.has(fx.name) || fx.status !== 200) {
    assert.equal(ours, fx.body, `${where}: body`);
    return;
  }
  const a = JSON.parse(ours) as { success: boolean; hashes: string[] };
  assert.equal(a.success, true, where);
  assert.ok(a.hashes.length > 0 && a.hashes.every((h) => /^[0-9a-f]{128}$/.test(h)), `${where}: ${ours}`);
}

test('golden: fuzzy learn endpoints answer as Rspamd 3.4 and reach the storage', async () => {
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, bind: '127.0.0.1:0' });
  const ctl = await startTestController(MAIN, { 'local.d/fuzzy_check.yaml': fuzzyYaml(srv.address.port) });
  try {
    const run = async (name: string) => {
      const fx = readFixture(name);
      check(fx, await request(ctl.port, fx.request));
    };
    await run('fuzzyadd_success');
    assert.equal(store.entries.size > 0, true);
    assert.ok([...store.entries.values()].every((e) => e.flag === 1 && e.value === 10));
    await run('fuzzyadd_webui_lowercase');
    assert.equal(store.entries.get(HAM_DIGEST)?.flag, 2);
    await run('fuzzydel_success');
    assert.deepEqual([...store.entries.keys()], [HAM_DIGEST], 'only the ham hash is left');
    for (const name of ['fuzzyadd_empty_body', 'fuzzyadd_no_flag', 'fuzzyadd_readonly_password', 'fuzzyadd_unknown_flag']) await run(name);
    await run('fuzzyadd_for_delhash');
    assert.equal(store.entries.get(HAM_DIGEST)?.value, 6, 'weight 1 then 5 on the same list');
    await run('fuzzydelhash_success');
    assert.equal(store.entries.has(HAM_DIGEST), false);
    for (const name of ['fuzzydel_symbol_header', 'fuzzydelhash_bad_hash', 'fuzzydelhash_multiple', 'fuzzydelhash_no_flag', 'fuzzydelhash_no_hash']) await run(name);

    // Helper endpoints of the fuzzy controller plugin.
    const storages = await request(ctl.port, { method: 'GET', path: '/plugins/fuzzy/storages', headers: [['Password', 'readpass']] });
    assert.equal(storages.status, 200);
    assert.deepEqual(JSON.parse(storages.body.toString()).storages.local.flags, { LOCAL_FUZZY_DENIED: 1, LOCAL_FUZZY_PROB: 2, LOCAL_FUZZY_WHITE: 3 });
    const fx = readFixture('fuzzyadd_for_delhash');
    const hashes = await request(ctl.port, { method: 'POST', path: '/plugins/fuzzy/hashes?flag=2', headers: [['Password', 'readpass']], body: fx.request.body! });
    assert.deepEqual(JSON.parse(hashes.body.toString()), { success: true, hashes: { local: [HAM_DIGEST] } });
  } finally {
    await ctl.close();
    await srv.close();
  }
});

const RSPAMC = '/usr/bin/rspamc';

test('the real rspamc fuzzy_add / fuzzy_del work against our controller', { skip: existsSync(RSPAMC) ? false : 'rspamc is not installed' }, async () => {
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, bind: '127.0.0.1:0' });
  const ctl = await startTestController(MAIN, { 'local.d/fuzzy_check.yaml': fuzzyYaml(srv.address.port) });
  try {
    const ham = '/work/shared/fixtures/rspamd-test-messages/ham.eml';
    const run = (args: string[]) => promisify(execFile)(RSPAMC, ['-h', `127.0.0.1:${ctl.port}`, '-P', 'enablepass', ...args, ham], { timeout: 10_000 });
    const add = await run(['fuzzy_add', '-f', '3', '-w', '4']);
    assert.match(add.stdout, /success|OK/i, add.stdout);
    assert.deepEqual({ flag: store.entries.get(HAM_DIGEST)?.flag, value: store.entries.get(HAM_DIGEST)?.value }, { flag: 3, value: 4 });
    await run(['fuzzy_del', '-f', '3']);
    assert.equal(store.entries.has(HAM_DIGEST), false);
  } finally {
    await ctl.close();
    await srv.close();
  }
});

test('fuzzy endpoints without a configured rule answer 500 Module has no rules', async () => {
  const ctl = await startTestController(MAIN);
  try {
    const fx = readFixture('fuzzyadd_webui_lowercase');
    const r = await request(ctl.port, fx.request);
    assert.equal(r.statusLine, 'HTTP/1.1 500 Module has no rules');
  } finally {
    await ctl.close();
  }
});

test('a Weight the 32-bit wire field cannot hold, or that is not a number, is refused and nothing is sent (issue 17 item 5)', async () => {
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, bind: '127.0.0.1:0' });
  const ctl = await startTestController(MAIN, { 'local.d/fuzzy_check.yaml': fuzzyYaml(srv.address.port) });
  try {
    const body = readFixture('fuzzyadd_webui_lowercase').request.body!;
    const add = (weight: string) => request(ctl.port, { method: 'POST', path: '/fuzzyadd', headers: [['Password', 'enablepass'], ['Flag', '2'], ['Weight', weight]], body });
    // 2^32 + 1 used to reach the storage as weight 1, 2^31 as -2^31 (an unlearn).
    for (const w of ['4294967297', '2147483648', '-2147483649', '1.5', 'abc', '1e3']) {
      const r = await add(w);
      assert.equal(r.status, 400, `weight ${w}`);
      assert.equal(r.reason, 'Invalid Weight header: expected an integer between -2147483648 and 2147483647');
    }
    assert.equal(store.entries.size, 0, 'nothing reached the storage');
    assert.equal((await add('2147483647')).status, 200);
    assert.equal(store.entries.get(HAM_DIGEST)?.value, 2147483647);
  } finally {
    await ctl.close();
    await srv.close();
  }
});
