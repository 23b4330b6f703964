// What a scan asks Redis for once Bayes has enough learns, counted by the server itself (INFO
// commandstats). Each scan asked for the scope's full totals twice, before and during the
// classification: four commands each time, one of them SMEMBERS of every scope's name, which
// grows with per-user statistics. The learn counts now come back inside the token lookup.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoresSection } from '../../src/storage/config-schema.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/storage/types.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { BayesClassifier, bayesConfig } from '../../src/rule-libs/bayes/index.js';
import { engineConfig, meta } from '../modules/helpers.js';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from '../storage/redis-servers.js';
import { devMessages } from './corpus.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const skip = haveRedisServer() ? false : 'redis-server is not installed';

let dir: string;
let server: RedisServer;
let stores: Stores;

/** Calls per command since the last reset, from the server's own count (scripts' inner calls included). */
function commandCalls(port: number): Map<string, number> {
  const text = execFileSync('redis-cli', ['-p', String(port), 'INFO', 'commandstats'], { encoding: 'utf8' });
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

before(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-scan-requests-'));
  server = await startRedisServer(dir, await freePort());
  const sc = StoresSection.parse({ backend: 'redis', redis: { servers: [`127.0.0.1:${server.port}`] } });
  stores = await openStores({ dataDir: dir, stores: sc }, silent);
});

after(async () => {
  if (skip) return;
  await stores?.close();
  await server?.kill();
  await rm(dir, { recursive: true, force: true });
});

test('a scan with Bayes on Redis makes one token lookup and reads no totals', { skip }, async () => {
  const modules = { bayes: { min_learns: 3 } };
  const c = new BayesClassifier(bayesConfig({}));
  const learn = async (m: Buffer, cls: 'spam' | 'ham'): Promise<void> => {
    // The split holds a few copies of one message; the learn cache refuses the second.
    await c.learn(stores.bayes, c.tokenize(parseMessage(m)), { cls, bulk: true }).catch((err: { code?: string }) => assert.equal(err.code, 'LEARN_ALREADY_LEARNED'));
  };
  for (const m of devMessages('spam-1', 200, 8)) await learn(m, 'spam');
  for (const m of devMessages('easy-ham-1', 200, 8)) await learn(m, 'ham');
  // Per-user scopes that a read of every scope's name would have to fetch on each scan.
  for (let u = 0; u < 20; u++) await stores.bayes.learn({ classifier: 'bayes', user: `user${u}@example.org` }, `d${u}`, [BigInt(u + 1)], 'ham');
  const engine = await createEngine(engineConfig(modules), builtinModules, { stores, log: silent });
  const probes = [...devMessages('spam-1', 260, 5), ...devMessages('easy-ham-1', 260, 5)];
  execFileSync('redis-cli', ['-p', String(server.port), 'CONFIG', 'RESETSTAT']);
  let classified = 0;
  for (const m of probes) {
    const r = await engine.scan(m, meta());
    if (r.symbols.some((s) => s.name === 'BAYES_SPAM' || s.name === 'BAYES_HAM')) classified++;
  }
  const calls = commandCalls(server.port);
  assert.ok(classified >= 8, `the scans were classified (${classified} of ${probes.length}), so the counts below are of real lookups`);
  for (const name of ['smembers', 'hgetall', 'hlen']) assert.equal(calls.get(name), undefined, `no ${name.toUpperCase()} during scans (totals not read)`);
  const scripts = (calls.get('evalsha') ?? 0) + (calls.get('eval') ?? 0);
  assert.ok(scripts >= probes.length && scripts <= probes.length + 1, `one lookup script a scan (${scripts} for ${probes.length}; the first may be loaded again)`);
  // Inside each script: the tokens' counts of both classes and the scope's learn counts (3 HMGETs
  // a scan); outside, a learn-count read a second for the "too few learns" check, and the few reads
  // of other modules' keys.
  assert.ok((calls.get('hmget') ?? 0) <= 3 * probes.length + 5, `HMGET calls: ${calls.get('hmget')}`);
});
