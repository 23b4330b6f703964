// The learn/classify cycle through BayesClassifier against each BayesStore: the in-memory one,
// the real SQLite store and the real Redis on 127.0.0.1:6379 (own key prefix, removed after).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMessage } from '../../src/message/parse-message.js';
import { StoresSection } from '../../src/storage/config-schema.js';
import { openStores } from '../../src/storage/index.js';
import type { BayesStore, Stores } from '../../src/storage/types.js';
import { BayesClassifier, bayesConfig, MemoryBayesStore, verdictOf } from '../../src/rule-libs/bayes/index.js';
import { rspamdMessage } from '../message/fixtures.js';
import { devMessages } from './corpus.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
/** Small enough to keep each store's run to seconds; min_learns is lowered to match. */
const TRAIN = 40;
const TEST = 15;

const spamTrain = devMessages('spam-1', 0, TRAIN).map((b) => parseMessage(b));
const hamTrain = devMessages('easy-ham-1', 0, TRAIN).map((b) => parseMessage(b));
const spamTest = devMessages('spam-1', TRAIN, TEST).map((b) => parseMessage(b));
const hamTest = devMessages('easy-ham-1', TRAIN, TEST).map((b) => parseMessage(b));

function cycle(name: string, open: () => Promise<{ store: BayesStore; close: () => Promise<void> }>) {
  describe(`learn/classify cycle on ${name}`, () => {
    test('learn, classify held-out mail, learn cache, relearn, guards', async () => {
      const { store, close } = await open();
      try {
        const c = new BayesClassifier(bayesConfig({ min_learns: 20, name: `t${process.pid}` }));
        const scope = c.scope('');
        assert.equal(await c.classify(store, c.tokenize(spamTest[0]!), scope), undefined, 'nothing learned: no classification');
        // The corpus holds a few resent copies: those are refused by the learn cache.
        const learned = { spam: 0, ham: 0 };
        const learnOne = async (m: (typeof spamTrain)[number], cls: 'spam' | 'ham'): Promise<void> => {
          try {
            assert.equal(await c.learn(store, c.tokenize(m), { cls, bulk: true }), 'learned');
            learned[cls]++;
          } catch (e) {
            assert.equal((e as { code?: string }).code, 'LEARN_ALREADY_LEARNED');
          }
        };
        for (let i = 0; i < TRAIN; i++) {
          await learnOne(spamTrain[i]!, 'spam');
          await learnOne(hamTrain[i]!, 'ham');
        }
        assert.ok(learned.spam >= TRAIN - 3 && learned.ham >= TRAIN - 3, JSON.stringify(learned));
        const totals = await store.totals(scope);
        assert.equal(totals.learnsSpam, learned.spam);
        assert.equal(totals.learnsHam, learned.ham);
        assert.ok(totals.tokensSpam > 1000 && totals.tokensHam > 1000);

        let right = 0;
        for (const m of spamTest) {
          const r = await c.classify(store, c.tokenize(m), scope);
          if (r && verdictOf(r.prob)?.symbol === 'spam') right++;
        }
        for (const m of hamTest) {
          const r = await c.classify(store, c.tokenize(m), scope);
          if (r && verdictOf(r.prob)?.symbol === 'ham') right++;
        }
        assert.ok(right >= 2 * TEST - 3, `held-out messages classified right: ${right}/${2 * TEST}`);

        // Same message, same class: the learn cache refuses it with Rspamd's text.
        const again = spamTrain[0]!;
        await assert.rejects(c.learn(store, c.tokenize(again), { cls: 'spam', messageId: again.messageId, bulk: true }), (e: Error & { code?: string }) => {
          assert.equal(e.code, 'LEARN_ALREADY_LEARNED');
          assert.equal(e.message, `<${again.messageId}> has been already learned as spam, ignore it`);
          return true;
        });
        // The other class: its tokens move over.
        assert.equal(await c.learn(store, c.tokenize(again), { cls: 'ham', bulk: true }), 'relearned');
        const moved = await store.totals(scope);
        assert.equal(moved.learnsSpam, learned.spam - 1);
        assert.equal(moved.learnsHam, learned.ham + 1);

        // The probability guard: a spam the classifier is sure about is not learned again as spam.
        const sure = spamTest.map((m) => c.tokenize(m));
        let denied = 0;
        for (const t of sure) {
          await c.learn(store, t, { cls: 'spam' }).catch((e: { code?: string }) => {
            if (e.code === 'LEARN_CONDITIONS_DENIED') denied++;
          });
        }
        assert.ok(denied > 0, 'some confident spam was refused');

        const tiny = parseMessage(rspamdMessage('freemail.eml'));
        await assert.rejects(c.learn(store, c.tokenize(tiny), { cls: 'spam' }), (e: Error & { code?: string }) => {
          assert.equal(e.code, 'LEARN_TOO_FEW_TOKENS');
          assert.match(e.message, /^<undef> contains less tokens than required for t\d+ classifier: \d+ < 11$/);
          return true;
        });

        // Per-user statistics keep users apart.
        const pu = new BayesClassifier(bayesConfig({ min_learns: 1, per_user: true, name: `t${process.pid}` }));
        await pu.learn(store, pu.tokenize(spamTrain[1]!), { cls: 'spam', user: 'bob@example.org', bulk: true });
        const bob = await store.totals(pu.scope('bob@example.org'));
        assert.equal(bob.learnsSpam, 1);
        assert.equal((await store.totals(pu.scope('alice@example.org'))).learnsSpam, 0);
      } finally {
        await close();
      }
    });
  });
}

cycle('the in-memory store', async () => {
  const store = new MemoryBayesStore();
  return { store, close: () => store.close() };
});

const dir = mkdtempSync(join(tmpdir(), 'mailsift-bayes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function realStores(backend: 'sqlite' | 'redis'): Promise<Stores> {
  const stores = StoresSection.parse({ backend, redis: { db: 11, prefix: `mailsift-bayes-test-${process.pid}:` } });
  return openStores({ dataDir: dir, stores }, silent);
}

cycle('SQLite', async () => {
  const s = await realStores('sqlite');
  return { store: s.bayes, close: () => s.close() };
});

cycle('Redis', async () => {
  const s = await realStores('redis');
  return {
    store: s.bayes,
    close: async () => {
      // Remove this run's keys before closing.
      const { Redis } = await import('ioredis');
      const r = new Redis({ host: '127.0.0.1', port: 6379, db: 11, lazyConnect: true });
      await r.connect();
      const keys = await r.keys(`mailsift-bayes-test-${process.pid}:*`);
      if (keys.length > 0) await r.del(...keys);
      r.disconnect();
      await s.close();
    },
  };
});
