// task.redis (the plugin API) when its Redis server hangs (SIGSTOP, a server of this test's own):
// the first command waits its timeout, the next ones are refused at once instead of each waiting
// its own, and commands work again once the server answers.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisResult } from '../../src/plugin-api/index.js';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from '../storage/redis-servers.js';
import { netEngine, meta, MSG } from './helpers.js';

const skip = haveRedisServer() ? false : 'redis-server is not installed';
let dir: string;
let server: RedisServer;

before(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), 'mailsift-task-redis-'));
  server = await startRedisServer(dir, await freePort());
});

after(async () => {
  if (skip) return;
  try { server.signal('SIGCONT'); } catch { /* not running */ }
  await server.kill();
  await rm(dir, { recursive: true, force: true });
});

test('a hung Redis costs a plugin one timeout, then its commands are refused at once; they work again after', { skip }, async () => {
  const params = { servers: `127.0.0.1:${server.port}`, timeout: 0.3 };
  let results: Array<{ r: RedisResult; ms: number }> = [];
  const { engine, net } = await netEngine([
    {
      name: 'PLUGIN_REDIS',
      flags: ['coro'],
      async check(task) {
        for (let i = 0; i < 4; i++) {
          const t0 = performance.now();
          const r = await task.redis.request(params, {}, ['INCR', `task-redis-stall:${process.pid}`]);
          results.push({ r, ms: performance.now() - t0 });
        }
      },
    },
  ], '127.0.0.1:9', { taskTimeout: 10 });
  try {
    await engine.scan(MSG, meta());
    assert.ok(results.every((x) => x.r.ok), JSON.stringify(results));

    results = [];
    server.signal('SIGSTOP');
    try {
      await engine.scan(MSG, meta());
    } finally {
      server.signal('SIGCONT');
    }
    const [first, ...rest] = results;
    assert.equal(first!.r.ok, false);
    assert.match(!first!.r.ok ? first!.r.error : '', /^timeout/);
    assert.ok(first!.ms >= 280, `the first waited its timeout (${first!.ms.toFixed(0)} ms)`);
    for (const x of rest) {
      assert.equal(x.r.ok, false);
      assert.match(!x.r.ok ? x.r.error : '', /has not answered for \d+ ms; command not sent/);
      assert.ok(x.ms < 200, `refused at once (${x.ms.toFixed(0)} ms)`);
    }

    const t0 = performance.now();
    for (;;) {
      results = [];
      await engine.scan(MSG, meta());
      if (results.every((x) => x.r.ok)) break;
      assert.ok(performance.now() - t0 < 10_000, 'commands work again after the server resumed');
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await net.close();
  }
});
