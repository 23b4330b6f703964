// The stores through Redis Sentinel: a master and a Sentinel started on loopback by the test;
// the client asks the Sentinel for the master by name.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStores } from '../../src/storage/index.js';
import { deletePrefix, quietLog, storesConfig, uniquePrefix } from './helpers.js';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from './redis-servers.js';

describe('redis sentinel', { skip: haveRedisServer() ? false : 'redis-server is not installed' }, () => {
  let dir: string;
  let master: RedisServer;
  let sentinel: RedisServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-sentinel-'));
    master = await startRedisServer(dir, await freePort());
    const conf = join(dir, 'sentinel.conf');
    // Sentinel rewrites its config file, so it must be writable and its own.
    await writeFile(conf, `sentinel monitor mailsift-test 127.0.0.1 ${master.port} 1\n`);
    sentinel = await startRedisServer(dir, await freePort(), ['--sentinel'], conf);
  });
  after(async () => {
    await sentinel?.kill();
    await master?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('finds the master through the Sentinel and learns into it', async () => {
    const prefix = uniquePrefix('sentinel');
    const s = await openStores(
      {
        dataDir: dir,
        stores: storesConfig({ backend: 'redis', redis: { sentinels: [`127.0.0.1:${sentinel.port}`], name: 'mailsift-test', prefix } }),
      },
      quietLog,
    );
    try {
      const scope = { classifier: 'bayes', user: '' };
      assert.equal(await s.bayes.learn(scope, 'm', [5n, 6n], 'spam'), 'learned');
      assert.deepEqual([...(await s.bayes.getTokens(scope, [5n, 6n, 7n])).spam], [1, 1, 0]);
      await s.kv.set('k', 'v');
      assert.equal((await s.kv.get('k'))?.toString(), 'v');
    } finally {
      await s.close();
      await deletePrefix([{ host: '127.0.0.1', port: master.port }], prefix, false);
    }
  });
});
