// reputation through the real engine on the real SQLite and Redis key-value stores: a multimap
// rule (a content rule, standing for the rest of the rules) makes some mail spam; after enough
// verdicts the client address, the sender domain and the linked domain carry the reputation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { multimapModule } from '../../src/modules/multimap/index.js';
import { reputationModule } from '../../src/modules/reputation/index.js';
import type { ScanResult } from '../../src/plugin-api/index.js';
import { engineConfig, meta, symbol } from './helpers.js';
import { BACKENDS, sqliteStores, type PolicyStores } from './policy-stores.js';

let serial = 0;

/** A message with its own Message-ID: a pharmacy pitch (spam) or a project mail (ham). */
function mail(from: string, kind: 'spam' | 'ham', link: string): Buffer {
  serial++;
  const body = kind === 'spam'
    ? `Cheap meds without prescription, 80% off today only.\r\nOrder here: ${link}\r\n`
    : `Hi team,\r\nthe build is green again; notes are at ${link}\r\nSee you at the meeting.\r\n`;
  return Buffer.from(`From: <${from}>\r\nTo: <bob@example.org>\r\nSubject: ${kind === 'spam' ? 'Best prices' : 'Build status'} ${serial}\r\n` +
    `Date: Tue, 20 Aug 2002 10:00:00 +0000\r\nMessage-ID: <m${serial}.${Date.now()}@${from.split('@')[1]}>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n${body}`);
}

function rep(r: ScanResult): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of r.symbols) if (/REP|REPUTATION/.test(s.name)) out[s.name] = s.options ?? [];
  return out;
}

const MODULES = {
  // "Cheap meds" is worth 8 points: spam (spam_score 6); the rest scores 0: ham (under 4).
  multimap: { rules: { PHARMA_PITCH: { type: 'content', filter: 'body', map: ['/cheap\\smeds/i'], regexp: true, score: 8 } } },
  reputation: { enabled: true, lower_bound: 5 },
};

for (const [backend, open] of BACKENDS) {
  describe(`reputation on ${backend}`, () => {
    let st: PolicyStores;
    let engine: Engine;
    before(async () => {
      st = await open('reputation');
      engine = await createEngine(engineConfig(MODULES), [multimapModule, reputationModule], { stores: st.stores });
    });
    after(async () => st.cleanup());

    it('spam from one address, domain and link domain: after the lower bound the next message carries all three', async () => {
      const env = meta({ ip: '203.0.113.7', from: 'deals@pills.example' });
      for (let i = 0; i < 4; i++) {
        const r = await engine.scan(mail('deals@pills.example', 'spam', `http://shop.pills-cheap.example/p${i}`), env);
        assert.ok(symbol(r, 'PHARMA_PITCH'));
        assert.deepEqual(rep(r), {}, `sample ${i + 1}: under the lower bound`);
      }
      await engine.scan(mail('deals@pills.example', 'spam', 'http://shop.pills-cheap.example/p5'), env);
      // Five spam verdicts each: every token is at the bound, all spam.
      const r = await engine.scan(mail('deals@pills.example', 'spam', 'http://shop.pills-cheap.example/p6'), env);
      assert.deepEqual(rep(r), {
        IP_REPUTATION_SPAM: ['203.0.113.7/32: 5/0/5'],
        // No SPF, DKIM or DMARC pass vouched for the domain: counted as unverified.
        SENDER_REP_SPAM: ['pills.example?: 5/0/5'],
        URL_REPUTATION_SPAM: ['pills-cheap.example: 5/0/5'],
      });
      assert.equal(symbol(r, 'IP_REPUTATION_SPAM')?.score, 2);
      // The reputation's own points are not counted: the next verdict is still a spam one, no more.
      assert.ok(r.score >= 8 + 6);
    });

    it('ham from another address and domain: the _HAM symbols; a mixed domain scores by its balance', async () => {
      const env = meta({ ip: '198.51.100.20', from: 'dev@project.example' });
      for (let i = 0; i < 5; i++) await engine.scan(mail('dev@project.example', 'ham', `https://ci.project.example/build/${i}`), env);
      const r = await engine.scan(mail('dev@project.example', 'ham', 'https://ci.project.example/build/9'), env);
      assert.deepEqual(Object.keys(rep(r)).sort(), ['IP_REPUTATION_HAM', 'SENDER_REP_HAM', 'URL_REPUTATION_HAM']);
      assert.equal(symbol(r, 'SENDER_REP_HAM')?.score, -1);
      // A link domain seen in 6 ham and now 3 spam messages: (3 − 6) / 9 = −0.33, still leaning ham.
      const spamEnv = meta({ ip: '192.0.2.99', from: 'x@other.example' });
      for (let i = 0; i < 3; i++) await engine.scan(mail('x@other.example', 'spam', `https://ci.project.example/x${i}`), spamEnv);
      const mixed = await engine.scan(mail('y@third.example', 'ham', 'https://ci.project.example/z'), meta({ ip: '192.0.2.100', from: 'y@third.example' }));
      assert.deepEqual(rep(mixed), { URL_REPUTATION_HAM: ['project.example: 3/6/9'] });
      assert.ok(Math.abs(symbol(mixed, 'URL_REPUTATION_HAM')!.score - -0.5 * (3 / 9)) < 1e-9);
    });

    it('a message scanned again is counted once', async () => {
      const env = meta({ ip: '203.0.113.50', from: 'a@repeat.example' });
      const same = mail('a@repeat.example', 'spam', 'http://repeat-link.example/');
      for (let i = 0; i < 8; i++) await engine.scan(same, env);
      assert.deepEqual(rep(await engine.scan(mail('a@repeat.example', 'spam', 'http://repeat-link.example/2'), env)), {});
    });

    it('authenticated and local senders are neither scored nor counted', async () => {
      for (const env of [meta({ ip: '203.0.113.7', from: 'deals@pills.example', user: 'deals' }), meta({ ip: '10.0.0.5', from: 'deals@pills.example' })]) {
        assert.deepEqual(rep(await engine.scan(mail('deals@pills.example', 'spam', 'http://shop.pills-cheap.example/q'), env)), {});
      }
    });
  });
}

it('a store that fails: REPUTATION_FAIL, and the scan goes on', async () => {
  const st = await sqliteStores();
  const engine = await createEngine(engineConfig(MODULES), [multimapModule, reputationModule], { stores: st.stores });
  await st.cleanup(); // closes the store under the engine
  const r = await engine.scan(mail('deals@pills.example', 'spam', 'http://shop.pills-cheap.example/z'), meta({ ip: '203.0.113.7', from: 'deals@pills.example' }));
  assert.ok(symbol(r, 'PHARMA_PITCH'));
  assert.equal(r.action, 'add header');
  assert.equal(symbol(r, 'REPUTATION_FAIL')?.options?.length, 1);
});

it('is off unless enabled', async () => {
  const st = await sqliteStores();
  try {
    const engine = await createEngine(engineConfig({ multimap: MODULES.multimap }), [multimapModule, reputationModule], { stores: st.stores });
    const env = meta({ ip: '203.0.113.8', from: 'z@off.example' });
    for (let i = 0; i < 12; i++) await engine.scan(mail('z@off.example', 'spam', 'http://off-link.example/'), env);
    assert.deepEqual(rep(await engine.scan(mail('z@off.example', 'spam', 'http://off-link.example/'), env)), {});
    assert.deepEqual(await st.stores.kv.keys('RR:'), []);
  } finally {
    await st.cleanup();
  }
});
