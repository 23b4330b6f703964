// A Redis store that is down answers StoreError('STORE_UNAVAILABLE') within about a second,
// never hangs, and works again by itself once the server is back.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStores, type Stores } from '../../src/storage/index.js';
import { quietLog, storesConfig, uniquePrefix, deletePrefix } from './helpers.js';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from './redis-servers.js';

/** The brief's bar for "fails fast". */
const FAST_MS = 1000;

async function timed(p: Promise<unknown>): Promise<{ ms: number; err: unknown }> {
  const t = performance.now();
  try {
    await p;
    return { ms: performance.now() - t, err: undefined };
  } catch (err) {
    return { ms: performance.now() - t, err };
  }
}

function assertUnavailable(r: { ms: number; err: unknown }, what: string): void {
  assert.ok(r.err, `${what} failed`);
  assert.equal((r.err as { code?: unknown }).code, 'STORE_UNAVAILABLE', `${what}: ${String(r.err)}`);
  assert.ok(r.ms < FAST_MS, `${what} failed in ${r.ms.toFixed(0)} ms`);
}

/** One call of every store, as a scan or a learn would make them. */
function everyStore(s: Stores): [string, () => Promise<unknown>][] {
  const scope = { classifier: 'bayes', user: '' };
  return [
    ['bayes.getTokens', () => s.bayes.getTokens(scope, [1n, 2n, 3n])],
    ['bayes.learn', () => s.bayes.learn(scope, 'm', [1n, 2n], 'spam')],
    ['fuzzy.check', () => s.fuzzy.check('d', new Array<bigint>(32).fill(1n))],
    ['fuzzy.add', () => s.fuzzy.add({ digest: 'd', flag: 1, weight: 1 }, 60)],
    ['history.push', () => s.history.push({ unix_time: 1 })],
    ['kv.incrBy', () => s.kv.incrBy('k', 1)],
  ];
}

describe('redis store unavailable', () => {
  it('opens quickly on a port where nothing listens, and every call fails fast', async () => {
    const port = await freePort();
    const t = performance.now();
    const s = await openStores({ dataDir: tmpdir(), stores: storesConfig({ backend: 'redis', redis: { servers: [`127.0.0.1:${port}`] } }) }, quietLog);
    try {
      assert.ok(performance.now() - t < 2 * FAST_MS, 'openStores does not wait for a dead Redis');
      for (const [what, call] of everyStore(s)) assertUnavailable(await timed(call()), what);
    } finally {
      await s.close();
    }
  });

  it('a port where something else answers (HTTP) is named as not Redis, not as an ioredis bug', async () => {
    const http = await import('node:http');
    const srv = http.createServer((_req, res) => res.end('hello'));
    // ioredis's first command gets an HTTP/1.1 400 back for its RESP bytes.
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const warnings: string[] = [];
    const log = { ...quietLog, warn: (msg: string, f?: Record<string, unknown>) => warnings.push(`${msg} ${String(f?.error ?? '')}`) };
    const s = await openStores({ dataDir: tmpdir(), stores: storesConfig({ backend: 'redis', redis: { servers: [`127.0.0.1:${port}`] } }) }, log as typeof quietLog);
    try {
      const r = await timed(s.kv.incrBy('k', 1));
      assert.ok(r.err, 'the call fails');
      const text = `${String(r.err)} ${warnings.join(' ')}`;
      assert.match(text, /does not speak Redis/);
      assert.doesNotMatch(text, /Please report this/);
    } finally {
      await s.close();
      srv.close();
    }
  });

  describe('a server that goes away and comes back', { skip: haveRedisServer() ? false : 'redis-server is not installed' }, () => {
    let dir: string;
    let server: RedisServer;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-'));
      server = await startRedisServer(dir, await freePort());
    });
    after(async () => {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
    });

    it('fails fast while it is down and recovers without reopening', async () => {
      const prefix = uniquePrefix('outage');
      const s = await openStores(
        { dataDir: tmpdir(), stores: storesConfig({ backend: 'redis', redis: { servers: [`127.0.0.1:${server.port}`], prefix } }) },
        quietLog,
      );
      try {
        const scope = { classifier: 'bayes', user: '' };
        assert.equal(await s.bayes.learn(scope, 'before', [1n, 2n], 'spam'), 'learned');
        await server.kill();
        for (const [what, call] of everyStore(s)) assertUnavailable(await timed(call()), what);
        await server.restart();
        // Reconnection back-off is capped at 2 s; allow a few attempts.
        const end = Date.now() + 8000;
        let ok = false;
        while (!ok && Date.now() < end) {
          ok = (await timed(s.bayes.learn(scope, 'after', [3n], 'ham'))).err === undefined;
          if (!ok) await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(ok, 'learning works again once Redis is back');
        assert.deepEqual([...(await s.bayes.getTokens(scope, [3n])).ham], [1]);
      } finally {
        await s.close();
        await deletePrefix([{ host: '127.0.0.1', port: server.port }], prefix, false);
      }
    });
  });
});
