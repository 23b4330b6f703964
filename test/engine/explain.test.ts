// The verdict explanation the engine attaches to a result (ScanResult.explain), which history
// rows keep for the web UI: group limits that cut a contribution, composites and the symbols
// they consumed, and the settings that applied.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineModule } from '../../src/plugin-api/index.js';
import { buildHistoryRow } from '../../src/observability/history-row.js';
import { engineWith, fixtureMessage, meta } from './helpers.js';

const CRLF = fixtureMessage('crlf-simple.eml');

const mod = defineModule({
  name: 'explained',
  symbols: {
    H1: { score: 5, group: 'hdr' },
    H2: { score: 5, group: 'hdr' },
    B1: { score: 1, group: 'body' },
    B2: { score: 2, group: 'body' },
  },
  setup(ctx) {
    ctx.symbol({ name: 'ALL', inserts: ['H1', 'H2', 'B1', 'B2'], check: (t) => { for (const s of ['H1', 'H2', 'B1', 'B2']) t.insert(s); } });
  },
});

test('a group limit, a composite and settings are named; a plain scan has no explanation', async () => {
  const engine = await engineWith([mod], {
    groups: { hdr: { maxScore: 8 } },
    composites: [{ name: 'BOTH_BODY', expression: 'B1 & B2', score: 4 }],
  });
  const r = await engine.scan(CRLF, meta({ settings: { scores: { H1: 6 }, actions: { reject: 20 } } }));
  assert.deepEqual(r.explain?.cappedGroups, ['hdr']);
  assert.deepEqual(r.explain?.composites, { BOTH_BODY: ['B1', 'B2'] });
  assert.deepEqual(r.explain?.settings, { actions: { reject: 20 }, scores: ['H1'] });
  // The composite took B1 and B2's weight: 6 + 2 (hdr capped at 8) + 4.
  assert.equal(r.score, 12);

  const row = buildHistoryRow(r, meta(), CRLF, Date.now());
  const explain = row.explain as Record<string, unknown>;
  assert.deepEqual(explain.capped_groups, ['hdr']);
  assert.deepEqual({ ...(explain.composites as object) }, { BOTH_BODY: ['B1', 'B2'] });
  assert.deepEqual(explain.settings, { actions: { reject: 20 }, scores: ['H1'] });
  assert.deepEqual(explain.thresholds, { reject: 20, 'add header': 6, greylist: 4 });
  assert.equal((row.symbols as Record<string, { group?: string }>).H1!.group, 'hdr');

  const plain = await (await engineWith([mod])).scan(CRLF, meta());
  assert.equal(plain.explain, undefined);
  assert.deepEqual(buildHistoryRow(plain, meta(), CRLF, Date.now()).explain, { thresholds: { reject: 15, 'add header': 6, greylist: 4 } });
});
