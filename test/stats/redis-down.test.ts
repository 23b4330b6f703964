// Redis goes away mid-stream: scans still answer without Bayes symbols (the outage is logged,
// not counted as a failed callback), /learnspam answers 503, and both work again once Redis is back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoresSection } from '../../src/storage/config-schema.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/storage/types.js';
import { modulesTable, routesForTable } from '../../src/workers/controller/plugins.js';
import type { ControllerContext } from '../../src/workers/controller/types.js';
import type { LoadedConfig } from '../../src/config/load.js';
import { RequestHeaders, type Request } from '../../src/http/types.js';
import { engineConfig, meta } from '../modules/helpers.js';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from '../storage/redis-servers.js';
import { devMessages } from './corpus.js';
import { BayesClassifier, bayesConfig, tokenDigest, tokenValues } from '../../src/rule-libs/bayes/index.js';
import { parseMessage } from '../../src/message/parse-message.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const skip = haveRedisServer() ? false : 'redis-server is not installed';

let dir: string;
let server: RedisServer;
let stores: Stores;
let engine: Engine;
let ctx: ControllerContext;

function learnRequest(body: Buffer): Request {
  return { method: 'POST', path: '/learnspam', query: new Map(), headers: new RequestHeaders(), body, version: 'HTTP/1.1', peer: { address: '127.0.0.1', port: 1 }, tls: false };
}

before(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), 'mailsift-bayes-redis-down-'));
  server = await startRedisServer(dir, await freePort());
  const sc = StoresSection.parse({ backend: 'redis', redis: { servers: [`127.0.0.1:${server.port}`], connect_timeout: 0.5, command_timeout: 0.5 } });
  stores = await openStores({ dataDir: dir, stores: sc }, silent);
  const modules = { bayes: { min_learns: 2 } };
  engine = await createEngine(engineConfig(modules), builtinModules, { stores, log: silent });
  // Only the parts of the loaded configuration the learn family reads.
  const config = { engine: engineConfig(modules) } as unknown as LoadedConfig;
  ctx = { log: silent, config, engine, stores };
});

after(async () => {
  if (skip) return;
  await stores?.close();
  await server?.kill();
  await rm(dir, { recursive: true, force: true });
});

test('scans degrade and learns answer 503 while Redis is down; both recover', { skip }, async () => {
  // The Bayes module's own endpoint, as the controller routes it.
  const learn = routesForTable(ctx, modulesTable(ctx)).find((r) => r.path === '/learnspam')!;
  const session = { peer: '127.0.0.1', readOnly: false, via: 'secure_ip' as const };
  const c = new BayesClassifier(bayesConfig({}));
  const spam = devMessages('spam-1', 300, 6);
  const ham = devMessages('easy-ham-1', 300, 6).map((m) => c.tokenize(parseMessage(m)));
  // The server keeps nothing on disk: after its restart the statistics are learned again.
  const train = async (): Promise<void> => {
    for (const m of spam) assert.equal((await learn.handler(learnRequest(m), session)).status, 200);
    for (const t of ham) await c.learn(stores.bayes, t, { cls: 'ham', bulk: true });
  };
  await train();
  const probe = spam[0]!;
  const up = await engine.scan(probe, meta());
  assert.ok(up.symbols.some((s) => s.name === 'BAYES_SPAM'), 'classified while Redis is up');

  await server.kill();
  const t0 = performance.now();
  const down = await engine.scan(probe, meta());
  assert.ok(performance.now() - t0 < 3000, 'the scan did not wait for Redis');
  assert.ok(!down.symbols.some((s) => s.name.startsWith('BAYES_')));
  assert.equal(engine.errorCounts().get('BAYES_SPAM'), undefined, 'a store outage is a skipped check, not a failed callback');
  const refused = await learn.handler(learnRequest(devMessages('spam-1', 310, 1)[0]!), session);
  assert.equal(refused.status, 503);
  assert.match(refused.reason ?? '', /^Cannot push learned results to the backend/);

  await server.restart();
  let back = false;
  for (let i = 0; i < 40 && !back; i++) {
    back = await Promise.resolve(learn.handler(learnRequest(spam[0]!), session)).then((r) => r.status === 200, () => false);
    if (!back) await new Promise((res) => setTimeout(res, 100));
  }
  assert.ok(back, 'learning works again after Redis restarted');
  await stores.bayes.unlearn(c.scope(''), tokenDigest(c.tokenize(parseMessage(spam[0]!))), tokenValues(c.tokenize(parseMessage(spam[0]!))));
  await train();
  const again = await engine.scan(probe, meta());
  back = again.symbols.some((s) => s.name === 'BAYES_SPAM');
  assert.ok(back, 'classification is back after Redis restarted');
});
