// A Redis store whose server hangs (SIGSTOP: the connection stays open, nothing is answered):
// a call made through the scan view fails after the scan time-out, one made through the stores
// after the command time-out; after the first unanswered call every call fails at once, as when
// Redis is down; the stores find out by themselves when the server answers again. The server is
// a redis-server of this test's own, never the shared one.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoresSection } from '../../src/storage/config-schema.js';
import { openStores, type Stores } from '../../src/storage/index.js';
import { PROBE_EVERY_MS } from '../../src/storage/redis/guard.js';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from './redis-servers.js';

const SCAN_TIMEOUT_MS = 200;
const COMMAND_TIMEOUT_MS = 800;
const scope = { classifier: 'bayes', user: '' };

async function timed(p: Promise<unknown>): Promise<{ ms: number; err?: { code?: string; message?: string } }> {
  const t = performance.now();
  try {
    await p;
    return { ms: performance.now() - t };
  } catch (err) {
    return { ms: performance.now() - t, err: err as { code?: string; message?: string } };
  }
}

describe('redis store that stops answering', { skip: haveRedisServer() ? false : 'redis-server is not installed' }, () => {
  let dir: string;
  let server: RedisServer;
  let stores: Stores;
  const logged: Array<{ level: string; msg: string; extra?: Record<string, unknown> }> = [];
  const log = {
    debug() {},
    info(msg: string, extra?: Record<string, unknown>) { logged.push({ level: 'info', msg, ...(extra ? { extra } : {}) }); },
    warn(msg: string, extra?: Record<string, unknown>) { logged.push({ level: 'warn', msg, ...(extra ? { extra } : {}) }); },
    error(msg: string, extra?: Record<string, unknown>) { logged.push({ level: 'error', msg, ...(extra ? { extra } : {}) }); },
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-stalled-'));
    server = await startRedisServer(dir, await freePort());
    const sc = StoresSection.parse({
      backend: 'redis',
      redis: { servers: [`127.0.0.1:${server.port}`], prefix: 'stalled:', scan_timeout: SCAN_TIMEOUT_MS / 1000, command_timeout: COMMAND_TIMEOUT_MS / 1000 },
    });
    stores = await openStores({ dataDir: dir, stores: sc }, log);
  });

  after(async () => {
    try { server.signal('SIGCONT'); } catch { /* not running */ }
    await stores?.close();
    await server?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  for (const when of ['sent', 'queued'] as const) {
    it(`a call ${when} just before the event loop is blocked past the scan time-out is not taken for an unanswered one`, async () => {
      await stores.kv.set('blocked', 'v');
      const pending = timed(stores.scan!.kv.get('blocked'));
      // 'sent': ioredis writes commands on setImmediate; 'queued': the block starts before that.
      if (when === 'sent') await new Promise((r) => setImmediate(r));
      // A long synchronous job (a big message's parse) holds the loop past the scan time-out.
      const end = Date.now() + 3 * SCAN_TIMEOUT_MS;
      while (Date.now() < end) { /* busy */ }
      const r = await pending;
      assert.equal(r.err, undefined, r.err?.message);
      assert.ok(!logged.some((l) => l.msg.startsWith('redis store not answering')), 'no stall recorded');
    });
  }

  it('scan calls give up after the scan time-out, then every call fails at once; the stores recover without a call', async () => {
    const scan = stores.scan!;
    assert.ok(scan, 'openStores gives the scan view');
    await stores.bayes.learn(scope, 'm1', [1n, 2n, 3n], 'spam');
    assert.equal((await scan.bayes.getTokens(scope, [1n])).spam[0], 1, 'the view reads the same data');

    server.signal('SIGSTOP');
    try {
      const first = await timed(scan.kv.get('k'));
      assert.equal(first.err?.code, 'STORE_UNAVAILABLE', String(first.err?.message));
      assert.match(first.err?.message ?? '', new RegExp(`no reply within ${SCAN_TIMEOUT_MS} ms`));
      assert.ok(first.ms >= SCAN_TIMEOUT_MS - 20 && first.ms < SCAN_TIMEOUT_MS + 1500, `first call ${first.ms.toFixed(0)} ms`);

      // Known not to answer: scans and learns alike are refused without asking, every store on that server.
      for (const [what, call] of [
        ['scan bayes.getTokens', () => scan.bayes.getTokens(scope, [1n, 2n])],
        ['scan fuzzy.check', () => scan.fuzzy.check('d'.repeat(128))],
        ['bayes.learn', () => stores.bayes.learn(scope, 'm2', [4n], 'ham')],
        ['fuzzy.add', () => stores.fuzzy.add({ digest: 'e'.repeat(128), flag: 1, weight: 1 }, 60)],
        ['history.push', () => stores.history.push({ unix_time: 1 })],
        ['kv.set', () => stores.kv.set('k', 'v')],
      ] as const) {
        const r = await timed(call());
        assert.equal(r.err?.code, 'STORE_UNAVAILABLE', what);
        assert.match(r.err?.message ?? '', /has not answered for \d+ ms; not asked/, what);
        assert.ok(r.ms < 150, `${what} refused in ${r.ms.toFixed(0)} ms`);
      }
      const warns = logged.filter((l) => l.msg.startsWith('redis store not answering'));
      assert.equal(warns.length, 1, 'the stall is logged once');
      assert.equal(warns[0]!.extra?.redis, `127.0.0.1:${server.port} db 0`);
    } finally {
      server.signal('SIGCONT');
    }

    // Nothing calls the stores now: the probe alone finds the server answering again.
    const t0 = performance.now();
    while (!logged.some((l) => l.msg === 'redis store answering again')) {
      assert.ok(performance.now() - t0 < PROBE_EVERY_MS + COMMAND_TIMEOUT_MS + 5000, 'recovered by the probe');
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await scan.bayes.getTokens(scope, [1n])).spam[0], 1);
    assert.equal(await stores.bayes.learn(scope, 'm3', [5n], 'ham'), 'learned');
  });

  it('a call through the stores (learns, controller) waits up to the command time-out, not the scan time-out', async () => {
    server.signal('SIGSTOP');
    try {
      const r = await timed(stores.bayes.learnedAs(scope, 'x'));
      assert.equal(r.err?.code, 'STORE_UNAVAILABLE');
      assert.ok(r.ms >= COMMAND_TIMEOUT_MS - 20 && r.ms < COMMAND_TIMEOUT_MS + 1500, `${r.ms.toFixed(0)} ms`);
    } finally {
      server.signal('SIGCONT');
    }
    const t0 = performance.now();
    for (;;) {
      const r = await timed(stores.kv.get('k'));
      if (!r.err) break;
      assert.ok(performance.now() - t0 < 10_000, 'recovered');
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  it('the scan view owns nothing: closing it leaves the stores open', async () => {
    await stores.scan!.close();
    await stores.kv.set('still', 'open');
    assert.equal((await stores.scan!.kv.get('still'))?.toString(), 'open');
  });
});
