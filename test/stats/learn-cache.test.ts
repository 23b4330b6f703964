// The learn cache is bounded: each store keeps the digests of the last `learn_cache` learns per
// scope, so a recent message learned twice in the same class is still refused and a relearn
// still moves its tokens, while the oldest entries are forgotten instead of growing forever.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parseMessage } from '../../src/message/parse-message.js';
import { StoresSection } from '../../src/storage/config-schema.js';
import { openStores } from '../../src/storage/index.js';
import type { BayesStore } from '../../src/storage/types.js';
import { BayesClassifier, bayesConfig, MemoryBayesStore, tokenDigest } from '../../src/rule-libs/bayes/index.js';
import { devMessages } from './corpus.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const BOUND = 3;
const REDIS_PREFIX = `mailsift-learncache-test-${process.pid}:`;
// Distinct messages (the first ones of the folder are no resent copies of each other).
const msgs = devMessages('easy-ham-1', 0, 6).map((b) => parseMessage(b));

const dir = mkdtempSync(join(tmpdir(), 'mailsift-learncache-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function refusedAsDuplicate(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (e) {
    if ((e as { code?: string }).code === 'LEARN_ALREADY_LEARNED') return true;
    throw e;
  }
}

function bounded(name: string, open: () => Promise<{ store: BayesStore; close: () => Promise<void> }>) {
  describe(`learn cache bound on ${name}`, () => {
    test('recent learns are remembered, the oldest are forgotten, a relearn refreshes its entry', async () => {
      const { store, close } = await open();
      try {
        const c = new BayesClassifier(bayesConfig({ name: `lc${process.pid}` }));
        const scope = c.scope('');
        const toks = msgs.map((m) => c.tokenize(m));
        for (let i = 0; i < 5; i++) assert.equal(await c.learn(store, toks[i]!, { cls: 'ham', bulk: true }), 'learned');
        // Five learns, three kept: messages 2, 3, 4.
        assert.equal(await store.learnedAs(scope, tokenDigest(toks[0]!)), undefined);
        assert.equal(await store.learnedAs(scope, tokenDigest(toks[1]!)), undefined);
        for (const i of [2, 3, 4]) assert.equal(await store.learnedAs(scope, tokenDigest(toks[i]!)), 'ham', `message ${i}`);
        assert.ok(await refusedAsDuplicate(c.learn(store, toks[4]!, { cls: 'ham', bulk: true })), 'a recent message is refused');

        // Relearning message 2 as spam moves its tokens and makes it the most recent entry ...
        assert.equal(await c.learn(store, toks[2]!, { cls: 'spam', bulk: true }), 'relearned');
        const t = await store.totals(scope);
        assert.deepEqual([t.learnsSpam, t.learnsHam], [1, 4]);
        // ... so a new learn evicts message 3, not message 2.
        assert.equal(await c.learn(store, toks[5]!, { cls: 'ham', bulk: true }), 'learned');
        assert.equal(await store.learnedAs(scope, tokenDigest(toks[3]!)), undefined);
        assert.equal(await store.learnedAs(scope, tokenDigest(toks[2]!)), 'spam');
        assert.ok(await refusedAsDuplicate(c.learn(store, toks[2]!, { cls: 'spam', bulk: true })));
      } finally {
        await close();
      }
    });
  });
}

bounded('the in-memory store', async () => {
  const store = new MemoryBayesStore({ learnCacheSize: BOUND });
  return { store, close: () => store.close() };
});

bounded('SQLite (stores.bayes.learn_cache)', async () => {
  const s = await openStores({ dataDir: dir, stores: StoresSection.parse({ backend: 'sqlite', bayes: { learn_cache: BOUND } }) }, silent);
  return { store: s.bayes, close: () => s.close() };
});

bounded('Redis (stores.bayes.learn_cache)', async () => {
  const s = await openStores({ dataDir: dir, stores: StoresSection.parse({ backend: 'redis', redis: { db: 11, prefix: REDIS_PREFIX }, bayes: { learn_cache: BOUND } }) }, silent);
  return {
    store: s.bayes,
    close: async () => {
      const { Redis } = await import('ioredis');
      const r = new Redis({ host: '127.0.0.1', port: 6379, db: 11, lazyConnect: true });
      await r.connect();
      const keys = await r.keys(`${REDIS_PREFIX}*`);
      if (keys.length > 0) await r.del(...keys);
      r.disconnect();
      await s.close();
    },
  };
});

test('a SQLite database from before the bound keeps its entries, then they age out like new ones', async () => {
  const sub = mkdtempSync(join(dir, 'old-'));
  const path = join(sub, 'old.sqlite');
  const c = new BayesClassifier(bayesConfig({ name: 'old' }));
  const scope = c.scope('');
  const toks = msgs.map((m) => c.tokenize(m));
  // The two tables as earlier versions created them (no order column), with one learned message.
  const old = new Database(path);
  old.exec(`CREATE TABLE bayes_scopes (id INTEGER PRIMARY KEY, classifier TEXT NOT NULL, user TEXT NOT NULL,
    learns_spam INTEGER NOT NULL DEFAULT 0, learns_ham INTEGER NOT NULL DEFAULT 0, tokens_spam INTEGER NOT NULL DEFAULT 0,
    tokens_ham INTEGER NOT NULL DEFAULT 0, revision INTEGER NOT NULL DEFAULT 0, UNIQUE (classifier, user))`);
  old.exec('CREATE TABLE bayes_learned (scope INTEGER NOT NULL, digest TEXT NOT NULL, cls TEXT NOT NULL, PRIMARY KEY (scope, digest)) WITHOUT ROWID');
  old.prepare("INSERT INTO bayes_scopes (id, classifier, user, learns_spam, revision) VALUES (1, 'old', '', 1, 50)").run();
  old.prepare("INSERT INTO bayes_learned (scope, digest, cls) VALUES (1, ?, 'spam')").run(tokenDigest(toks[0]!));
  old.close();
  const s = await openStores({ dataDir: sub, stores: StoresSection.parse({ backend: 'sqlite', sqlite: { path }, bayes: { learn_cache: BOUND } }) }, silent);
  try {
    assert.ok(await refusedAsDuplicate(c.learn(s.bayes, toks[0]!, { cls: 'spam', bulk: true })), 'the old entry is still there');
    for (let i = 1; i < BOUND; i++) await c.learn(s.bayes, toks[i]!, { cls: 'ham', bulk: true });
    assert.equal(await s.bayes.learnedAs(scope, tokenDigest(toks[0]!)), 'spam', 'counted as the learn before these');
    await c.learn(s.bayes, toks[BOUND]!, { cls: 'ham', bulk: true });
    assert.equal(await s.bayes.learnedAs(scope, tokenDigest(toks[0]!)), undefined, 'aged out');
  } finally {
    await s.close();
  }
});

test('a Redis learn cache from before the bound keeps its entries, then they age out like new ones', async () => {
  const prefix = `${REDIS_PREFIX}old:`;
  const c = new BayesClassifier(bayesConfig({ name: 'old' }));
  const scope = c.scope('');
  const toks = msgs.map((m) => c.tokenize(m));
  const { Redis } = await import('ioredis');
  const r = new Redis({ host: '127.0.0.1', port: 6379, db: 11, lazyConnect: true });
  await r.connect();
  // The keys as earlier versions wrote them: the cache hash without its order zset.
  const base = `${prefix}bayes:{3:old:}`;
  await r.hset(`${base}:meta`, 'learns_spam', '1', 'revision', '50');
  await r.hset(`${base}:learned`, tokenDigest(toks[0]!), 'spam');
  const s = await openStores({ dataDir: dir, stores: StoresSection.parse({ backend: 'redis', redis: { db: 11, prefix }, bayes: { learn_cache: BOUND } }) }, silent);
  try {
    assert.ok(await refusedAsDuplicate(c.learn(s.bayes, toks[0]!, { cls: 'spam', bulk: true })), 'the old entry is still there');
    for (let i = 1; i < BOUND; i++) await c.learn(s.bayes, toks[i]!, { cls: 'ham', bulk: true });
    assert.equal(await s.bayes.learnedAs(scope, tokenDigest(toks[0]!)), 'spam', 'counted as learned just before the first new learn');
    await c.learn(s.bayes, toks[BOUND]!, { cls: 'ham', bulk: true });
    assert.equal(await s.bayes.learnedAs(scope, tokenDigest(toks[0]!)), undefined, 'aged out');
    assert.equal(await r.hlen(`${base}:learned`), BOUND);
  } finally {
    const keys = await r.keys(`${prefix}*`);
    if (keys.length > 0) await r.del(...keys);
    r.disconnect();
    await s.close();
  }
});
