// ratelimit through the real engine on the real SQLite and Redis key-value stores: a bucket
// fills, overflows (soft reject, "Ratelimit exceeded"), leaks and accepts mail again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { ratelimitModule } from '../../src/modules/ratelimit/index.js';
import { parseRate } from '../../src/modules/ratelimit/config.js';
import { engineConfig, fixtureMessage, meta, symbol } from './helpers.js';
import { BACKENDS, type PolicyStores } from './policy-stores.js';

const msg = fixtureMessage('lf-simple.eml');
/**
 * 2 messages of burst, leaking one every 2 s: slow enough that the third message still finds the
 * bucket full on a loaded machine (a leak of 4/s freed a slot between two slow scans).
 */
const RATES = {
  to: { selector: 'to', bucket: { burst: 2, rate: 0.5 } },
  ip: { selector: 'ip', bucket: '5 / 1h' },
};

describe('ratelimit rates', () => {
  it('reads "N / period" as messages per second', () => {
    assert.equal(parseRate('60 / 1m'), 1);
    assert.equal(parseRate('10/2s'), 5);
    assert.equal(parseRate(3), 3);
    assert.throws(() => parseRate('ten per minute'), /bad rate/);
  });
});

for (const [backend, open] of BACKENDS) {
  describe(`ratelimit on ${backend}`, () => {
    let st: PolicyStores;
    let engine: Engine;
    before(async () => {
      st = await open('ratelimit');
      engine = await createEngine(engineConfig({ ratelimit: { rates: RATES, whitelisted_ip: ['198.51.100.0/24'] } }), [ratelimitModule], { stores: st.stores });
    });
    after(async () => st.cleanup());

    const to = (rcpt: string, ip = '192.0.2.7') => meta({ ip, from: 'alice@example.com', rcpt: [rcpt] });

    it('soft-rejects once the recipient bucket is full, then recovers as it leaks', async () => {
      const first = await engine.scan(msg, to('bob@example.org'));
      const second = await engine.scan(msg, to('bob@example.org'));
      assert.equal(first.action, 'no action');
      assert.equal(second.action, 'no action');
      const third = await engine.scan(msg, to('bob@example.org'));
      assert.equal(third.action, 'soft reject');
      assert.equal(third.messages['smtp_message'], 'Ratelimit exceeded');
      assert.deepEqual(symbol(third, 'RATELIMITED')?.options, ['to']);
      // A refused message is not counted: still refused right away, accepted after the leak.
      assert.equal((await engine.scan(msg, to('bob@example.org'))).action, 'soft reject');
      // Another recipient has its own bucket; postmaster is never limited.
      assert.equal((await engine.scan(msg, to('carol@example.org'))).action, 'no action');
      for (let i = 0; i < 3; i++) assert.equal((await engine.scan(msg, to('postmaster@example.org'))).action, 'no action');
      await sleep(2_500);
      const later = await engine.scan(msg, to('bob@example.org'));
      assert.equal(later.action, 'no action', 'one slot leaked out after 2 s');
      assert.equal(symbol(later, 'RATELIMITED'), undefined);
    });

    it('limits a client address over all recipients, except whitelisted networks', async () => {
      const ip = '192.0.2.200';
      const actions: string[] = [];
      // Five per hour from one IP; fresh recipients each time so only the ip bucket can fill.
      for (let i = 0; i < 6; i++) actions.push((await engine.scan(msg, to(`user${i}@example.net`, ip))).action);
      assert.deepEqual(actions, ['no action', 'no action', 'no action', 'no action', 'no action', 'soft reject']);
      const white: string[] = [];
      for (let i = 0; i < 6; i++) white.push((await engine.scan(msg, to(`w${i}@example.net`, '198.51.100.9'))).action);
      assert.ok(white.every((a) => a === 'no action'));
    });
  });
}
