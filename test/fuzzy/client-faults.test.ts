// The fuzzy client when its storage cannot be reached at all: a connect that fails (no route, a
// host name that does not resolve) is a storage that did not answer, never an exception thrown
// from the socket's callback (which ended the worker).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { exchange } from '../../src/rule-libs/fuzzy/client.js';
import { FUZZY_CHECK, PROTOCOL_VERSION, type FuzzyCommand } from '../../src/rule-libs/fuzzy/wire.js';

const uncaught: unknown[] = [];
const onUncaught = (e: unknown): void => { uncaught.push(e); };
before(() => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
});
after(() => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});

function commands(n: number): FuzzyCommand[] {
  return Array.from({ length: n }, (_, i) => ({ version: PROTOCOL_VERSION, cmd: FUZZY_CHECK, flag: 0, value: 0, tag: i + 1, digest: Buffer.alloc(64, i) }));
}

for (const [what, host] of [['a connect error (broadcast address: EACCES)', '255.255.255.255'], ['a host name that does not resolve', 'nowhere.invalid']] as const) {
  test(`fuzzy exchange with ${what}: no replies, all unanswered, nothing thrown`, async () => {
    const t0 = performance.now();
    const r = await exchange({ host, port: 11335 }, commands(3), { timeoutMs: 5000, retransmits: 2 });
    assert.equal(r.replies.size, 0);
    assert.equal(r.unanswered, 3);
    // (A name lookup may itself wait on the machine's resolver: only the address case is timed.)
    if (host === '255.255.255.255') assert.ok(performance.now() - t0 < 4000, 'ended by the failed connect, not by three 5 s time-outs');
    await new Promise((res) => setTimeout(res, 50));
    assert.deepEqual(uncaught, []);
  });
}
