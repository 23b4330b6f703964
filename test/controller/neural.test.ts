// /plugins/neural/learn on a real controller: bad bodies are 400 with the reason, a good one is
// {"success":true}; the network it trains lands in the store and the normal worker (its own
// engine and store connection) applies it to scans.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { METATOKEN_COUNT } from '../../src/modules/neural/vector.js';
import { ENABLE_PASS, rawRequest, READ_PASS, scanV2, startRig, type Rig } from './edit-harness.js';

// A fixed profile: the vector is the metatokens, then these three symbols (sorted).
const PROFILE = ['LOCAL_FROM_LISTED', 'LOCAL_IP_LISTED', 'MIME_GOOD'];
const N = METATOKEN_COUNT + PROFILE.length;

function vec(symbols: string[], noise: number): number[] {
  const v = new Array<number>(N).fill(0);
  v[0] = 0.25 + noise; // size bucket, varies a little
  for (const s of symbols) v[METATOKEN_COUNT + PROFILE.indexOf(s)] = 1;
  return v;
}

const SPAM = 'From: bad@spammer.example\r\nTo: user@example.net\r\nSubject: offer\r\nMessage-ID: <n1@spammer.example>\r\n\r\nBuy now.\r\n';
const HAM = 'From: friend@example.org\r\nTo: user@example.net\r\nSubject: lunch\r\nMessage-ID: <n2@example.org>\r\n\r\nSee you at noon.\r\n';

describe('/plugins/neural/learn', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig({
      worker: true,
      files: { 'local.d/neural.yaml': `watch_interval: 0.1\nrules:\n  default:\n    profile: [${PROFILE.join(', ')}]\n    train: { max_trains: 40 }\n` },
    });
  });
  after(async () => rig?.close());

  const learn = (body: string, password = ENABLE_PASS) => rawRequest(rig.controllerPort, 'POST', '/plugins/neural/learn', { Password: password }, body);

  it('refuses bodies that are not JSON or not the schema, with 400 and the reason', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /Empty body/],
      ['{"spam_vec": [[1,2]', /cannot parse JSON/],
      ['[]', /invalid request/],
      ['{"spam_vec": [], "ham_vec": "x"}', /ham_vec/],
      ['{"spam_vec": [[1, "a"]], "ham_vec": []}', /spam_vec\.0\.1/],
      ['{"spam_vec": [], "ham_vec": [], "extra": 1}', /invalid request/],
      [JSON.stringify({ spam_vec: [[1, 2, 3]], ham_vec: [] }), new RegExp(`spam_vec\\.0: 3 values, the rule's vectors have ${N}`)],
      [JSON.stringify({ spam_vec: [vec([], 0)], ham_vec: [], rule: 'other' }), /unknown rule: other/],
      [JSON.stringify({ spam_vec: [vec([], 0)], ham_vec: [vec([], 0)] }), /not enough vectors: 2, at least 20 needed/],
    ];
    for (const [body, re] of cases) {
      const r = await learn(body);
      assert.equal(r.status, 400, `${body} → ${r.status} ${r.body}`);
      assert.match(r.body.toString(), re, body);
    }
    const readOnly = await learn('{}', READ_PASS);
    assert.equal(readOnly.status, 401, 'learning needs the enable password');
  });

  it('trains from valid vectors; the worker applies the new network', async () => {
    const before = await scanV2(rig.workerPort!, SPAM, { Password: READ_PASS, From: 'bad@spammer.example', IP: '192.0.2.1' });
    assert.ok(before.symbols['LOCAL_FROM_LISTED']);
    assert.equal(before.symbols['NEURAL_SPAM'], undefined);
    const spamVec = Array.from({ length: 30 }, (_, i) => vec(i % 3 === 0 ? ['LOCAL_FROM_LISTED', 'LOCAL_IP_LISTED'] : ['LOCAL_FROM_LISTED'], i / 1000));
    const hamVec = Array.from({ length: 30 }, (_, i) => vec(i % 2 === 0 ? ['MIME_GOOD'] : [], i / 1000));
    const r = await learn(JSON.stringify({ spam_vec: spamVec, ham_vec: hamVec, rule: 'default' }));
    assert.equal(r.status, 200, r.body.toString());
    assert.deepEqual(JSON.parse(r.body.toString()), { success: true });
    let spam: Awaited<ReturnType<typeof scanV2>> | undefined;
    for (let i = 0; i < 200 && !spam?.symbols['NEURAL_SPAM']; i++) {
      await sleep(50);
      spam = await scanV2(rig.workerPort!, SPAM, { Password: READ_PASS, From: 'bad@spammer.example', IP: '192.0.2.1' });
    }
    assert.ok(spam?.symbols['NEURAL_SPAM'], JSON.stringify(spam?.symbols));
    const ham = await scanV2(rig.workerPort!, HAM, { Password: READ_PASS, From: 'friend@example.org', IP: '198.51.100.7' });
    assert.ok(ham.symbols['NEURAL_HAM'], JSON.stringify(ham.symbols));
    assert.equal(ham.symbols['NEURAL_SPAM'], undefined);
  });
});
