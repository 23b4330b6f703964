// The store contract on a Redis Cluster of three masters started on loopback by this test.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { runContract } from './contract.js';
import { openRedis } from './helpers.js';
import { haveRedisServer, startCluster, type TestCluster } from './redis-servers.js';

const skip = haveRedisServer() ? false : 'redis-server and redis-cli are not installed';

describe('redis cluster', { skip }, () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  runContract('redis cluster', () => openRedis({ seeds: (cluster as TestCluster).seeds, cluster: true, tag: 'cluster' }));

  it('spreads per-user Bayes scopes over more than one master', async () => {
    const c = cluster as TestCluster;
    const s = await openRedis({ seeds: c.seeds, cluster: true, tag: 'spread' });
    try {
      for (let i = 0; i < 12; i++) await s.stores.bayes.learn({ classifier: 'bayes', user: `u${i}@example.org` }, 'm', [1n, 2n], 'spam');
      let holding = 0;
      for (const seed of c.seeds) {
        const r = new Redis({ ...seed, maxRetriesPerRequest: 0 });
        try {
          if ((await r.dbsize()) > 0) holding++;
        } finally {
          r.disconnect();
        }
      }
      assert.ok(holding >= 2, `keys on ${holding} master(s)`);
      assert.equal((await s.stores.bayes.totals({ classifier: 'bayes', user: '' })).users, 12);
    } finally {
      await s.cleanup();
    }
  });
});
