// Dead defaults (issue 20, item 6): every default composite names only symbols some module can
// insert, and every symbol of conf/groups.yaml is registered by a module or a composite. Both
// read the registry of a real engine built from the shipped configuration, with the stores
// open so the store-backed modules set up too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import type { EngineCore } from '../../src/engine/core.js';
import type { Registry } from '../../src/engine/registry.js';
import { collectAtoms, parseExpression } from '../../src/rule-libs/expression/composite-expr.js';
import { createMapRegistry } from '../../src/maps/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { openStores } from '../../src/storage/index.js';
import { quietLog, storesConfig } from '../storage/helpers.js';

/**
 * Atoms whose producer is being written in another branch of issue 20 (a stale entry fails
 * below, so the list empties as they merge).
 */
const PENDING: Record<string, string> = {
};

async function shippedRegistry(): Promise<{ registry: Registry; done(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-dead-'));
  const stores = await openStores({ dataDir: dir, stores: storesConfig({}) }, quietLog);
  const cfg = await loadConfig('conf');
  const maps = createMapRegistry({ baseDir: cfg.dir, log: quietLog });
  const engine = await createEngine(cfg.engine, builtinModules, { log: quietLog, maps, stores });
  return {
    registry: (engine as unknown as EngineCore).registry,
    async done() {
      maps.close();
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A symbol something can insert: a callback declares it, a module's table lists it (its module may be off by config), or it is a composite. */
function produced(reg: Registry, composites: ReadonlySet<string>, name: string): boolean {
  const s = reg.symbols.get(name);
  return s !== undefined && (s.items.length > 0 || s.module !== undefined || composites.has(name));
}

test('every atom of every composite is a symbol some module or composite produces', async () => {
  const { registry, done } = await shippedRegistry();
  try {
    const composites = new Set(registry.composites.map((c) => c.name));
    assert.ok(composites.has('FREEMAIL_AFF') && composites.has('LEAKED_PASSWORD_SCAM'));
    const dead: string[] = [];
    const stale: string[] = [];
    for (const c of registry.composites) {
      for (const atom of collectAtoms(parseExpression(c.expression))) {
        if (atom.kind === 'sym') {
          const ok = produced(registry, composites, atom.name);
          if (ok && PENDING[atom.name]) stale.push(atom.name);
          if (!ok && !PENDING[atom.name]) dead.push(`${c.name}: ${atom.name}`);
        } else {
          const g = registry.groups.get(atom.name);
          if (!g?.symbols.some((s) => produced(registry, composites, s))) dead.push(`${c.name}: ${atom.kind}:${atom.name}`);
        }
      }
    }
    assert.deepEqual(dead, [], 'composites naming symbols nothing produces: implement them or drop the composite');
    assert.deepEqual(stale, [], 'produced now: remove from PENDING');
  } finally {
    await done();
  }
});

test('every symbol of conf/groups.yaml is registered by a module or a composite', async () => {
  const { registry, done } = await shippedRegistry();
  try {
    const composites = new Set(registry.composites.map((c) => c.name));
    const table = parse(await readFile('conf/groups.yaml', 'utf8')) as Record<string, { symbols?: Record<string, unknown> }>;
    const listed = Object.values(table).flatMap((g) => Object.keys(g.symbols ?? {}));
    assert.ok(listed.length > 300);
    const orphans = listed.filter((n) => !produced(registry, composites, n));
    assert.deepEqual(orphans, [], 'scored in groups.yaml but nothing inserts them');
  } finally {
    await done();
  }
});

test('the check catches a dead atom: a composite over an unknown symbol is reported', async () => {
  const { registry, done } = await shippedRegistry();
  try {
    const composites = new Set(registry.composites.map((c) => c.name));
    // DCC_BULK: Rspamd's dcc plugin, not implemented (so COMPROMISED_ACCT_BULK is left out).
    assert.ok(!produced(registry, composites, 'DCC_BULK'), 'Rspamd dcc plugin, not implemented');
    assert.ok(produced(registry, composites, 'PHISHED_OPENPHISH') && produced(registry, composites, 'PHISHED_PHISHTANK'));
    assert.ok(produced(registry, composites, 'FORGED_SENDER') && produced(registry, composites, 'FWD_SRS'));
    assert.ok(produced(registry, composites, 'ENVFROM_PRVS') && produced(registry, composites, 'FORGED_SENDER_VERP_SRS'));
    assert.ok(produced(registry, composites, 'MAIL_RU_MAILER') && produced(registry, composites, 'SUBJ_EXCESS_BASE64'));
    assert.ok(produced(registry, composites, 'FREEMAIL_FROM') && produced(registry, composites, 'BITCOIN_ADDR'));
  } finally {
    await done();
  }
});
