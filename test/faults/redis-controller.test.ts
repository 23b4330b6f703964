// The controller's store-backed endpoints with Redis out (hardening issue, item 3): `mailsift
// serve --single` with every store on a redis-server of the test's own, which is killed
// (connections refused) and then stopped (SIGSTOP: connections open, nothing answered). Every
// endpoint that needs the store answers 503 `{"error":"<store> store unavailable: …"}` within the
// command time-out, never a 500 or a hang; /stat keeps answering with what it has (as Rspamd's
// does); a store outage is logged once per 30 s, not once per request.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from '../storage/redis-servers.js';
import { devMessages } from '../stats/corpus.js';
import { MESSAGES, post, serve, type LogLine, type Served } from './helpers.js';
import { httpCall } from '../helpers/server-process.js';

const PASSWORD = 'outagepass';
/** stores.redis.command_timeout: the longest a controller call may wait on a Redis that hangs. */
const COMMAND_TIMEOUT_S = 1;
/** Slack for a loaded machine on top of the command time-out. */
const SLACK_MS = 2000;
const HASH = 'ab'.repeat(64);

interface Probe {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: Buffer;
  headers?: Record<string, string>;
  /** The store the error text names. */
  store: string;
}

describe('controller endpoints with Redis out', { skip: haveRedisServer() ? false : 'redis-server is not installed' }, () => {
  let dir: string;
  let redis: RedisServer;
  let srv: Served;
  let ctlPort: number;
  const fresh = devMessages('spam-1', 420, 30);

  const probes = (): Probe[] => [
    { name: 'history', method: 'GET', path: '/history', store: 'history' },
    { name: 'historyreset', method: 'GET', path: '/historyreset', store: 'history' },
    { name: 'learnspam', method: 'POST', path: '/learnspam', body: fresh.shift()!, headers: { 'Learn-Type': 'bulk' }, store: 'statistics' },
    { name: 'learnham', method: 'POST', path: '/learnham', body: fresh.shift()!, headers: { 'Learn-Type': 'bulk' }, store: 'statistics' },
    { name: 'fuzzyadd', method: 'POST', path: '/fuzzyadd', body: fresh.shift()!, headers: { Flag: '1', Weight: '1' }, store: 'fuzzy' },
    { name: 'fuzzydel', method: 'POST', path: '/fuzzydel', body: fresh.shift()!, headers: { Flag: '1' }, store: 'fuzzy' },
    { name: 'fuzzydelhash', method: 'GET', path: '/fuzzydelhash', headers: { Flag: '1', Hash: HASH }, store: 'fuzzy' },
    { name: 'saveactions', method: 'POST', path: '/saveactions', body: Buffer.from('[15,null,6,4]'), store: 'configuration' },
    { name: 'savesymbols', method: 'POST', path: '/savesymbols', body: Buffer.from('[{"name":"MIME_GOOD","value":-0.3}]'), store: 'configuration' },
  ];

  const call = (p: Probe) => httpCall(ctlPort, p.method, p.path, p.body, { Password: PASSWORD, ...p.headers }, 20_000);

  /** Every store-backed endpoint: 503 naming its store, within the command time-out. */
  const assertAllUnavailable = async (what: string): Promise<void> => {
    for (const p of probes()) {
      const r = await call(p);
      const body = r.body.toString();
      assert.equal(r.status, 503, `${what}: ${p.name} ${r.status} ${body}`);
      const json = JSON.parse(body) as { error: string };
      // Learning keeps Rspamd's opening ("Cannot push learned results to the backend: …").
      assert.match(json.error, new RegExp(`(^|: )${p.store} store unavailable\\b.+`), `${what}: ${p.name}`);
      assert.ok(r.ms < COMMAND_TIMEOUT_S * 1000 + SLACK_MS, `${what}: ${p.name} answered in ${r.ms.toFixed(0)} ms`);
    }
    // /stat is a status page: it answers, without the figures the store would give.
    const stat = await httpCall(ctlPort, 'GET', '/stat', undefined, { Password: PASSWORD }, 20_000);
    assert.equal(stat.status, 200, `${what}: /stat ${stat.body.toString()}`);
    assert.equal(typeof (JSON.parse(stat.body.toString()) as { scanned?: unknown }).scanned, 'number');
  };

  const outageLines = (store: string): LogLine[] => srv.lines.filter((l) => l.level === 50 && l.msg === `${store} store unavailable or failing`);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-ctl-'));
    await mkdir(join(dir, 'redis'));
    redis = await startRedisServer(join(dir, 'redis'), await freePort());
    const fuzzyPort = await freePort();
    await writeFile(join(dir, 'mailsift.yaml'), [
      'workers:',
      '  normal: { bind: "127.0.0.1:0" }',
      `  controller: { bind: "127.0.0.1:0", enable_password: "${PASSWORD}", auth_fail_limit: 0 }`,
      `  fuzzy: { enabled: true, bind: "127.0.0.1:${fuzzyPort}" }`,
      `data_dir: ${join(dir, 'data')}`,
      `stores: { backend: redis, redis: { servers: ["127.0.0.1:${redis.port}"], prefix: "ctl${process.pid}:", command_timeout: ${COMMAND_TIMEOUT_S}, scan_timeout: 0.3 } }`,
      'logging: { level: info }',
      '',
    ].join('\n'));
    await mkdir(join(dir, 'local.d'));
    await writeFile(join(dir, 'local.d', 'fuzzy_check.yaml'), [
      'timeout: 3',
      'retransmits: 0',
      'rules:',
      '  local:',
      `    servers: "127.0.0.1:${fuzzyPort}"`,
      '    mime_types: ["*"]',
      '    min_bytes: 0',
      '    fuzzy_map: { LOCAL_FUZZY_DENIED: { flag: 1, max_score: 20 } }',
      '',
    ].join('\n'));
    srv = serve(dir, ['--single']);
    const ctl = await srv.waitFor((l) => l.worker === 'controller' && typeof l.port === 'number', 'the controller', 120_000);
    ctlPort = ctl.port!;
    await srv.waitFor((l) => l.worker === 'fuzzy' && /listening/.test(l.msg), 'the fuzzy storage', 60_000).catch(() => undefined);
  });

  after(async () => {
    await srv?.stop();
    await redis?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  test('with Redis answering, the same requests succeed (the probes are valid requests)', async () => {
    // A scan first, so that /history has a row.
    const scan = await post(srv.lines.find((l) => l.worker === 'normal' && typeof l.port === 'number')!.port!, '/checkv2', readFileSync(`${MESSAGES}/spam_message.eml`));
    assert.equal(scan.status, 200);
    for (const p of probes()) {
      const r = await call(p);
      assert.equal(r.status, 200, `${p.name}: ${r.status} ${r.body.toString()}`);
    }
  });

  test('Redis killed: every store-backed endpoint answers 503 naming its store, at once; the outage is logged once', async () => {
    await redis.kill();
    const errorsBefore = srv.lines.filter((l) => l.level === 50).length;
    await assertAllUnavailable('killed');
    // Learning retried in a loop: still one line per store for the period.
    for (let i = 0; i < 8; i++) {
      const r = await httpCall(ctlPort, 'POST', '/learnspam', fresh.shift()!, { Password: PASSWORD, 'Learn-Type': 'bulk' }, 20_000);
      assert.equal(r.status, 503);
      assert.equal((await httpCall(ctlPort, 'GET', '/history', undefined, { Password: PASSWORD })).status, 503);
    }
    await new Promise((r) => setTimeout(r, 200));
    for (const store of ['history', 'statistics', 'fuzzy', 'configuration']) {
      const lines = outageLines(store);
      assert.equal(lines.length, 1, `${store}: ${lines.map((l) => JSON.stringify(l)).join('\n')}`);
      assert.match(String(lines[0]!.error), /ECONNREFUSED|refused|not answering|writeable|closed/i, JSON.stringify(lines[0]));
    }
    const errors = srv.lines.filter((l) => l.level === 50).slice(errorsBefore);
    // Nothing else at error level: the per-request lines of before (one per learn, per /history).
    assert.deepEqual(errors.map((l) => l.msg).sort(), ['configuration', 'fuzzy', 'history', 'statistics'].map((s) => `${s} store unavailable or failing`), errors.map((l) => l.msg).join('\n'));
    assert.equal(srv.lines.filter((l) => /controller handler failed/.test(l.msg)).length, 0);
  });

  test('Redis stopped (SIGSTOP, connections open): 503 within the command time-out, never a hang', async () => {
    await redis.restart();
    // The stores reconnect by themselves; /history answering again says they did.
    const t0 = Date.now();
    for (;;) {
      const r = await httpCall(ctlPort, 'GET', '/history', undefined, { Password: PASSWORD }, 20_000);
      if (r.status === 200) break;
      assert.ok(Date.now() - t0 < 30_000, `the controller did not see Redis again: ${r.status} ${r.body.toString()}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    redis.signal('SIGSTOP');
    try {
      await assertAllUnavailable('stopped');
    } finally {
      redis.signal('SIGCONT');
    }
  });

  test('a learn that meets a Redis pause longer than a scan may wait (0.3 s), shorter than the command time-out, is learned', async () => {
    // Scans give up on a store after stores.redis.scan_timeout; a learn is answered to a client
    // that waits for it, so it uses the command time-out (1 s) and rides out a short pause.
    const t0 = Date.now();
    for (;;) {
      const r = await httpCall(ctlPort, 'GET', '/history', undefined, { Password: PASSWORD }, 20_000);
      if (r.status === 200) break;
      assert.ok(Date.now() - t0 < 30_000, `the controller did not see Redis again: ${r.status}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    redis.signal('SIGSTOP');
    const learn = httpCall(ctlPort, 'POST', '/learnspam', fresh.shift()!, { Password: PASSWORD, 'Learn-Type': 'bulk' }, 20_000);
    await new Promise((res) => setTimeout(res, 500));
    redis.signal('SIGCONT');
    const r = await learn;
    assert.equal(r.status, 200, `${r.status} ${r.body.toString()}`);
  });
});
