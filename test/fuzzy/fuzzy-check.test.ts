// The fuzzy_check module in a real engine against our storage worker: a learned message and
// its edited copy get the mapped symbol, an unrelated one does not, a storage that does not
// answer costs a symbol and never the scan, whitelisted clients are not checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEngine } from '../../src/engine/index.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { fuzzyCheckModule } from '../../src/modules/fuzzy-check/index.js';
import { emptyMeta } from '../../src/plugin-api/index.js';
import { messageHashes } from '../../src/rule-libs/fuzzy/message-hashes.js';
import { compileRule } from '../../src/rule-libs/fuzzy/rule.js';
import { FuzzyCheckConfig } from '../../src/rule-libs/fuzzy/rule-config.js';
import { startFuzzyServer } from '../../src/fuzzy-storage/storage-server.js';
import { engineConfig } from '../modules/helpers.js';
import { MemoryFuzzyStore } from './memory-store.js';
import { freeUdpPort } from './rspamd-instance.js';

const MSGS = '/work/shared/fixtures/rspamd-test-messages';
const HAM = readFileSync(`${MSGS}/ham.eml`);

function moduleConfig(port: number, extra: Record<string, unknown> = {}) {
  return {
    timeout: 0.3, retransmits: 0, ...extra,
    rules: { local: { servers: `127.0.0.1:${port}`, mime_types: ['*'], max_score: 20, fuzzy_map: { LOCAL_FUZZY_DENIED: { flag: 1 }, LOCAL_FUZZY_WHITE: { flag: 3, max_score: 2 } } } },
  };
}

test('fuzzy_check: learned, edited, unrelated, whitelisted', async () => {
  const store = new MemoryFuzzyStore();
  const srv = await startFuzzyServer({ store, bind: '127.0.0.1:0' });
  try {
    const mod = moduleConfig(srv.address.port, { whitelist: ['192.0.2.0/24'] });
    const cfg = FuzzyCheckConfig.parse(mod);
    for (const h of messageHashes(parseMessage(HAM), compileRule('local', cfg.rules['local']!, cfg))) {
      await store.add({ digest: h.digest.toString('hex'), flag: 1, weight: 20, ...(h.shingles ? { shingles: h.shingles } : {}) }, 60);
    }
    const engine = await createEngine({ ...engineConfig({ fuzzy_check: mod }), symbols: { LOCAL_FUZZY_DENIED: { score: 12 } } }, [fuzzyCheckModule]);
    const hit = (await engine.scan(HAM, emptyMeta())).symbols.find((s) => s.name === 'LOCAL_FUZZY_DENIED');
    assert.ok(hit);
    assert.ok(Math.abs(hit.score - 12 * Math.tanh(Math.E)) < 0.01, String(hit.score));
    const edited = Buffer.from(HAM.toString('latin1').replaceAll('Hi Kenny:', 'Hello Kenny,').replace('very hard', 'rather hard'), 'latin1');
    const e = (await engine.scan(edited, emptyMeta())).symbols.find((s) => s.name === 'LOCAL_FUZZY_DENIED');
    assert.ok(e, 'edited copy matches');
    const other = await engine.scan(readFileSync(`${MSGS}/spam_message.eml`), emptyMeta());
    assert.equal(other.symbols.some((s) => s.name.startsWith('LOCAL_FUZZY')), false);
    const wl = await engine.scan(HAM, { ...emptyMeta(), ip: '192.0.2.7' });
    assert.equal(wl.symbols.some((s) => s.name.startsWith('LOCAL_FUZZY')), false, 'whitelisted client');
  } finally {
    await srv.close();
  }
});

test('fuzzy_check: a storage that does not answer leaves the scan intact', async () => {
  const port = await freeUdpPort();
  const engine = await createEngine(engineConfig({ fuzzy_check: moduleConfig(port) }), [fuzzyCheckModule]);
  const t = Date.now();
  const r = await engine.scan(HAM, emptyMeta());
  assert.ok(Date.now() - t < 3000, 'bounded by the rule timeout');
  assert.equal(r.symbols.some((s) => s.name.startsWith('LOCAL_FUZZY')), false);
  assert.ok(r.action);
});

test('fuzzy_check without rules switches itself off', async () => {
  const engine = await createEngine(engineConfig({ fuzzy_check: {} }), [fuzzyCheckModule]);
  const r = await engine.scan(HAM, emptyMeta());
  assert.equal(r.symbols.some((s) => s.name.includes('FUZZY')), false);
});
