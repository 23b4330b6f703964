// greylist through the real engine on the real SQLite and Redis key-value stores: a multimap
// rule scores the sender into the `greylist` range; the first attempt is deferred, an early
// retry too, a retry after the (shortened) delay passes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { greylistModule } from '../../src/modules/greylist/index.js';
import { maskedIp } from '../../src/modules/greylist/keys.js';
import { GreylistConfig } from '../../src/modules/greylist/config.js';
import { multimapModule } from '../../src/modules/multimap/index.js';
import { engineConfig, fixtureMessage, meta, symbol } from './helpers.js';
import { BACKENDS, type PolicyStores } from './policy-stores.js';

const msg = fixtureMessage('lf-simple.eml');
const DELAY_S = 0.5;

describe('greylist triplet address', () => {
  it('masks IPv4 to /19 and IPv6 to /64 by default', () => {
    const cfg = GreylistConfig.parse({});
    assert.equal(maskedIp('192.0.2.77', cfg), '192.0.0.0/19');
    assert.equal(maskedIp('2001:db8:1:2:3:4:5:6', cfg), '2001:db8:1:2::/64');
  });
});

for (const [backend, open] of BACKENDS) {
  describe(`greylist on ${backend}`, () => {
    let st: PolicyStores;
    let engine: Engine;
    before(async () => {
      st = await open('greylist');
      const modules = {
        // Score 5: the `greylist` action (threshold 4) but not `add header` (6).
        multimap: { rules: { SUSPICIOUS_SENDER: { type: 'from', filter: 'email:domain', map: ['example.com', 'trusted.example'], score: 5 } } },
        greylist: { active: true, timeout: DELAY_S, whitelist_domains: ['trusted.example'] },
      };
      engine = await createEngine(engineConfig(modules), [multimapModule, greylistModule], { stores: st.stores });
    });
    after(async () => st.cleanup());

    const env = (from: string, patch: Record<string, string> = {}) => meta({ ip: '192.0.2.77', from, rcpt: ['bob@example.org'], ...patch });

    it('defers a new triplet, defers an early retry, passes after the delay', async () => {
      const first = await engine.scan(msg, env('alice@example.com'));
      assert.ok(symbol(first, 'SUSPICIOUS_SENDER'));
      assert.equal(first.action, 'soft reject');
      assert.equal(first.messages['smtp_message'], 'Try again later');
      assert.equal(symbol(first, 'GREYLIST_NEW')?.options?.[0], 'greylisted');
      const early = await engine.scan(msg, env('alice@example.com', { ip: '192.0.9.1' }));
      assert.equal(early.action, 'soft reject', 'same /19 network, too early');
      assert.ok(symbol(early, 'GREYLIST'));
      assert.equal(symbol(early, 'GREYLIST_NEW'), undefined);
      await sleep(DELAY_S * 1000 + 150);
      const retry = await engine.scan(msg, env('alice@example.com'));
      assert.deepEqual(symbol(retry, 'GREYLIST_PASS')?.options, ['pass']);
      assert.equal(retry.action, 'no action', 'a passed retry is not deferred again');
      assert.equal(symbol(retry, 'GREYLIST'), undefined);
    });

    it('leaves low-scoring, authenticated, local and whitelisted senders alone', async () => {
      // A body not seen yet: the first test's body already passed (its hash alone would match).
      const other = fixtureMessage('crlf-simple.eml');
      const low = await engine.scan(other, env('someone@elsewhere.example'));
      assert.equal(low.action, 'no action');
      assert.ok(!low.symbols.some((s) => s.name.startsWith('GREYLIST')), 'low: ' + JSON.stringify(low.symbols.map((s) => s.name)));
      for (const m of [env('x@example.com', { user: 'x' }), env('y@example.com', { ip: '10.1.2.3' })]) {
        const r = await engine.scan(other, m);
        assert.equal(r.action, 'greylist', 'score action kept, no deferral');
        assert.ok(!r.symbols.some((s) => s.name.startsWith('GREYLIST')), JSON.stringify(r.symbols.map((s) => s.name)));
      }
      const trusted = await engine.scan(other, env('z@trusted.example'));
      assert.ok(symbol(trusted, 'SUSPICIOUS_SENDER'));
      assert.equal(trusted.action, 'greylist');
      assert.ok(!trusted.symbols.some((s) => s.name.startsWith('GREYLIST')));
    });
  });
}
