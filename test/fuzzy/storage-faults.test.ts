// The fuzzy storage worker when its store fails (Redis down or not answering in time): it
// answers 500 at once, so a scanner's check reads "not found" without waiting for its retries and
// a learn is refused rather than left unanswered; a success reply is only sent after the store
// has written.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exchange } from '../../src/rule-libs/fuzzy/client.js';
import { FUZZY_STORE_ERROR, startFuzzyServer } from '../../src/fuzzy-storage/storage-server.js';
import { FUZZY_CHECK, FUZZY_DEL, FUZZY_WRITE, PROTOCOL_VERSION, type FuzzyCommand } from '../../src/rule-libs/fuzzy/wire.js';
import { StoreError } from '../../src/storage/types.js';
import { MemoryFuzzyStore } from './memory-store.js';

function command(cmd: FuzzyCommand['cmd'], tag: number): FuzzyCommand {
  return { version: PROTOCOL_VERSION, cmd, flag: 1, value: 1, tag, digest: Buffer.alloc(64, tag) };
}

/** A store whose every call fails as a Redis store does when the server does not answer. */
class StalledStore extends MemoryFuzzyStore {
  override check(): Promise<undefined> { return Promise.reject(new StoreError('STORE_UNAVAILABLE', 'redis check: no reply within 300 ms')); }
  override add(): Promise<void> { return Promise.reject(new StoreError('STORE_UNAVAILABLE', 'redis add: no reply within 1000 ms')); }
  override remove(): Promise<boolean> { return Promise.reject(new StoreError('STORE_UNAVAILABLE', 'redis remove: no reply within 1000 ms')); }
}

test('a failing store: CHECK, WRITE and DEL are answered 500 at once, and the outage is logged once', async () => {
  const warnings: string[] = [];
  const log = { debug() {}, info() {}, warn(msg: string) { warnings.push(msg); }, error() {} };
  const srv = await startFuzzyServer({ store: new StalledStore(), bind: '127.0.0.1:0', log });
  try {
    const t0 = performance.now();
    const r = await exchange(srv.address, [command(FUZZY_CHECK, 1), command(FUZZY_WRITE, 2), command(FUZZY_DEL, 3)], { timeoutMs: 3000, retransmits: 1 });
    assert.ok(performance.now() - t0 < 2500, 'answered, not left to the client time-out');
    assert.deepEqual([1, 2, 3].map((t) => r.replies.get(t)?.value), [FUZZY_STORE_ERROR, FUZZY_STORE_ERROR, FUZZY_STORE_ERROR]);
    assert.ok([1, 2, 3].every((t) => (r.replies.get(t)?.prob ?? 1) === 0), 'no reply claims a match or a stored hash');
    assert.deepEqual(warnings, ['fuzzy storage: store unavailable, answering 500']);
  } finally {
    await srv.close();
  }
});

test('the CHECK store and the write store are separate: a failing scan view does not refuse learns', async () => {
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, checkStore: new StalledStore(), bind: '127.0.0.1:0' });
  try {
    const w = await exchange(srv.address, [command(FUZZY_WRITE, 7)], { timeoutMs: 3000, retransmits: 0 });
    assert.equal(w.replies.get(7)?.value, 0);
    assert.equal(w.replies.get(7)?.prob, 1);
    assert.equal(store.entries.size, 1, 'stored before the success reply');
    const c = await exchange(srv.address, [command(FUZZY_CHECK, 8)], { timeoutMs: 3000, retransmits: 0 });
    assert.equal(c.replies.get(8)?.value, FUZZY_STORE_ERROR);
  } finally {
    await srv.close();
  }
});
