// replies through the real engine on the real SQLite and Redis key-value stores, with the
// messages of Rspamd's own replies test: an authenticated user sends replyto_1_1.eml
// (Message-ID 00020); inc_mail_known_sender.eml answers it, replyto_2_2.eml (thread 0022) does not.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { repliesModule } from '../../src/modules/replies/index.js';
import { engineConfig, meta, symbol, testMessage } from './helpers.js';
import { BACKENDS, type PolicyStores } from './policy-stores.js';

const outbound = testMessage('replyto_1_1.eml');
const known = testMessage('inc_mail_known_sender.eml');
const inbound = meta({ ip: '203.0.113.9', from: 'xxx@abrakadabra.com', rcpt: ['llll@abrakadabra.com'] });

for (const [backend, open] of BACKENDS) {
  describe(`replies on ${backend}`, () => {
    let st: PolicyStores;
    let engine: Engine;
    let withAction: Engine;
    before(async () => {
      st = await open('replies');
      engine = await createEngine(engineConfig({}), [repliesModule], { stores: st.stores });
      withAction = await createEngine(engineConfig({ replies: { action: 'no action', key_prefix: 'rr2', store_local: true } }), [repliesModule], { stores: st.stores });
    });
    after(async () => st.cleanup());

    it('does not mark a reply to a message it never saw', async () => {
      const r = await engine.scan(known, inbound);
      assert.equal(symbol(r, 'REPLY'), undefined);
    });

    it('remembers outbound mail of an authenticated user and marks the answer REPLY', async () => {
      const out = await engine.scan(outbound, meta({ ip: '203.0.113.50', user: 'user@emailbl.com', from: 'user@emailbl.com', rcpt: ['xxx@abrakadabra.com'] }));
      assert.equal(symbol(out, 'REPLY'), undefined, 'outbound mail is not checked');
      const r = await engine.scan(known, inbound);
      const reply = symbol(r, 'REPLY');
      assert.ok(reply, 'REPLY inserted');
      assert.equal(reply.score, -4);
      assert.deepEqual(reply.options, ['00020']);
      assert.equal(r.score, -4);
      const other = await engine.scan(testMessage('replyto_2_2.eml'), inbound);
      assert.equal(symbol(other, 'REPLY'), undefined, 'a reply in another thread (0022) is not ours');
    });

    it('does not store mail from an unauthenticated outside sender', async () => {
      // replyto_1_2.eml has Message-ID 00120; nobody authenticated sent it.
      await engine.scan(testMessage('replyto_1_2.eml'), inbound);
      const answer = Buffer.from(known.toString('latin1').replace('in-reply-to: 00020', 'in-reply-to: 00120'), 'latin1');
      const r = await engine.scan(answer, inbound);
      assert.equal(symbol(r, 'REPLY'), undefined);
    });

    it('forces the configured action on a reply', async () => {
      await withAction.scan(outbound, meta({ ip: '127.0.0.1', from: 'user@emailbl.com', rcpt: ['xxx@abrakadabra.com'] }));
      const r = await withAction.scan(known, inbound);
      assert.ok(symbol(r, 'REPLY'), 'with store_local, mail from a local address counts as outbound');
      assert.equal(r.action, 'no action');
      assert.equal(r.passthroughModule, 'replies');
    });
  });
}
