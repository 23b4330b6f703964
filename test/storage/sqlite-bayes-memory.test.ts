// The Bayes token counts a process holds in memory (sqlite/bayes-memory.ts) read exactly what
// SQLite holds: after learns, relearns and unlearns made through another connection or another
// process (replayed from the change log), after an import and after more learns than the log
// keeps (read again from the file), and a scope over the budget is read from SQLite.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStores, type Stores } from '../../src/storage/index.js';
import { signedDecimal, toSigned } from '../../src/storage/tokens.js';
import { MIN_CAPACITY, TokenCountTable } from '../../src/storage/token-table.js';
import { CHANGE_LOG_KEEP } from '../../src/storage/sqlite/bayes-memory.js';
import type { BayesScope, BayesStore } from '../../src/storage/types.js';
import type { Logger } from '../../src/plugin-api/index.js';
import { quietLog, storesConfig } from './helpers.js';
import { tokensFrom } from './contract.js';

const LEARN_WORKER = fileURLToPath(new URL('./learn-worker.ts', import.meta.url));
const scope: BayesScope = { classifier: 'bayes', user: '' };

function pairsOf(tokens: readonly bigint[]): { length: number; hi: Uint32Array; lo: Uint32Array } {
  return {
    length: tokens.length,
    hi: Uint32Array.from(tokens, (t) => Number((t >> 32n) & 0xffffffffn)),
    lo: Uint32Array.from(tokens, (t) => Number(t & 0xffffffffn)),
  };
}

/** A logger that keeps the messages of info lines. */
function recordingLog(): Logger & { infos: string[] } {
  const infos: string[] = [];
  return { ...quietLog, infos, info: (msg: string) => void infos.push(msg) };
}

const HELD = 'bayes: token counts held in memory';

async function open(dir: string, log: Logger, bayes: Record<string, unknown> = {}, synchronous?: 'normal'): Promise<Stores> {
  return openStores({ dataDir: dir, stores: storesConfig({ bayes, ...(synchronous ? { sqlite: { synchronous } } : {}) }) }, log);
}

type RecordingLog = ReturnType<typeof recordingLog>;

/**
 * `body` with a reader that `openReader` opens (its log recorded) and a writer on a second
 * connection to the same file, as another worker has; in a fresh directory, removed afterwards.
 */
async function withReaderAndWriter(
  openReader: (dir: string, log: RecordingLog) => Promise<Stores>,
  body: (reader: Stores, writer: Stores, log: RecordingLog) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-bayesmem-'));
  const log = recordingLog();
  const reader = await openReader(dir, log);
  const writer = await open(dir, quietLog, {}, 'normal');
  try {
    await body(reader, writer, log);
  } finally {
    await Promise.all([reader.close(), writer.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

/** Reads until the in-memory table of the scope is built (its log line), at most 5 s. */
async function untilHeld(store: BayesStore, log: { infos: string[] }, times: number, probe: readonly bigint[]): Promise<void> {
  const deadline = Date.now() + 5000;
  while (log.infos.filter((m) => m === HELD).length < times) {
    assert.ok(Date.now() < deadline, `the table was built ${times} time(s) within 5 s: ${JSON.stringify(log.infos)}`);
    await store.getTokenPairs!(scope, pairsOf(probe));
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Memory and SQLite give the same counts for `tokens`. */
async function assertSame(reader: BayesStore, sqlOnly: BayesStore, tokens: readonly bigint[], what: string): Promise<void> {
  const mem = await reader.getTokenPairs!(scope, pairsOf(tokens));
  const sql = await sqlOnly.getTokens(scope, tokens);
  assert.deepEqual([...mem.spam], [...sql.spam], `${what}: spam counts`);
  assert.deepEqual([...mem.ham], [...sql.ham], `${what}: ham counts`);
  // The learn counts read with the table's revision (when the table answered) are the file's.
  if (mem.learns) {
    const t = await sqlOnly.totals(scope);
    assert.deepEqual(mem.learns, { learnsSpam: t.learnsSpam, learnsHam: t.learnsHam }, `${what}: learn counts`);
  }
}

function runLearnWorker(dir: string, tag: string, count: number, first: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', LEARN_WORKER, dir, tag, String(count), String(first)], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdout.once('data', () => child.stdin.write('go\n'));
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

describe('signedDecimal', () => {
  it('writes the same text as BigInt for edge and random halves', () => {
    const halves = [0, 1, 9999, 10000, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff];
    const cases: [number, number][] = [];
    for (const h of halves) for (const l of halves) cases.push([h, l]);
    let x = 0x2545f491;
    for (let i = 0; i < 2000; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      const h = x >>> 0;
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      cases.push([h, x >>> 0]);
    }
    for (const [h, l] of cases) assert.equal(signedDecimal(h, l), toSigned((BigInt(h) << 32n) | BigInt(l)).toString(), `${h}/${l}`);
  });
});

describe('TokenCountTable', () => {
  it('keeps every token through growth, as a Map of the same moves does', () => {
    const table = new TokenCountTable();
    const ref = new Map<string, [number, number]>();
    const tokens = tokensFrom(7, 5000);
    const pair = new Uint32Array(2);
    tokens.forEach((t, i) => {
      const hi = Number(t >> 32n);
      const lo = Number(t & 0xffffffffn);
      const add = ((i % 3) as 0 | 1 | 2);
      const sub = (((i >> 2) % 3) as 0 | 1 | 2);
      for (let k = 0; k < 1 + (i % 4); k++) {
        table.move(hi, lo, add, sub);
        const r = ref.get(String(t)) ?? [0, 0];
        if (sub === 1 && r[0] > 0) r[0]--;
        else if (sub === 2 && r[1] > 0) r[1]--;
        if (add === 1) r[0]++;
        else if (add === 2) r[1]++;
        ref.set(String(t), r);
      }
    });
    assert.equal(table.size, 5000);
    for (const t of tokens) {
      table.get(Number(t >> 32n), Number(t & 0xffffffffn), pair);
      assert.deepEqual([...pair], ref.get(String(t)));
    }
    table.get(1, 2, pair);
    assert.deepEqual([...pair], [0, 0], 'an absent token reads 0/0');
  });

  it('holds counts past 16 bits, through moves across the boundary and growth', () => {
    const table = new TokenCountTable();
    const pair = new Uint32Array(2);
    table.set(7, 9, 65_535, 3);
    table.move(7, 9, 1, 0);
    table.get(7, 9, pair);
    assert.deepEqual([...pair], [65_536, 3], 'one spam learn past the narrow count');
    table.set(1, 1, 70_000, 4_000_000_000);
    // Growth rehashes every slot: the wide counts move with their tokens.
    for (let k = 0; k < 300; k++) table.move(1000 + k, k, 2, 0);
    table.get(1, 1, pair);
    assert.deepEqual([...pair], [70_000, 4_000_000_000]);
    table.move(7, 9, 0, 1);
    table.get(7, 9, pair);
    assert.deepEqual([...pair], [65_535, 3], 'an unlearn brings it back into the slot');
    table.move(7, 9, 2, 0);
    table.get(7, 9, pair);
    assert.deepEqual([...pair], [65_535, 4]);
    table.get(1000, 0, pair);
    assert.deepEqual([...pair], [0, 1]);
    assert.equal(table.size, 302);
  });
});

describe('sqlite: Bayes token counts held in memory', () => {
  it('stays equal to the file through learns of another connection and another process, an import and a pruned log', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailsift-bayesmem-'));
    const log = recordingLog();
    const reader = await open(dir, log);
    // A second connection to the same file (another synchronous mode gets its own), as another worker has.
    const writer = await open(dir, quietLog, {}, 'normal');
    const sqlOnly = await open(dir, quietLog, { memory_tokens: 0 }, 'normal');
    try {
      const probe = tokensFrom(1, 50);
      for (let i = 0; i < 20; i++) await writer.bayes.learn(scope, `w-${i}`, [...probe, ...tokensFrom(500 + i, 30)], i % 2 ? 'ham' : 'spam');
      await untilHeld(reader.bayes, log, 1, probe);
      const all = (): bigint[] => [...probe, ...Array.from({ length: 20 }, (_, i) => tokensFrom(500 + i, 30)).flat(), ...tokensFrom(9, 40)];
      await assertSame(reader.bayes, sqlOnly.bayes, all(), 'after the build');

      // Relearn into the other class, unlearn, and a learn of new tokens, from the other connection.
      assert.equal(await writer.bayes.learn(scope, 'w-3', [...probe, ...tokensFrom(503, 30)], 'spam'), 'relearned');
      assert.equal(await writer.bayes.unlearn(scope, 'w-4', [...probe, ...tokensFrom(504, 30)]), true);
      await writer.bayes.learn(scope, 'new', tokensFrom(9, 40), 'ham');
      await assertSame(reader.bayes, sqlOnly.bayes, all(), 'after a relearn, an unlearn and a learn');

      // Another process learns 100 messages (learn-worker.ts: 50 shared tokens and 50 of its own each).
      assert.equal(await runLearnWorker(dir, 'child', 100, 0), 0);
      const childTokens = [...tokensFrom(1, 50), ...Array.from({ length: 100 }, (_, i) => tokensFrom(1000 + i, 50)).flat()];
      await assertSame(reader.bayes, sqlOnly.bayes, [...all(), ...childTokens], 'after another process learned');
      assert.equal(log.infos.filter((m) => m === HELD).length, 1, 'every change so far was replayed from the log, not read again');

      // An import raises the revision without a log row: the table is read again.
      async function* rows(): AsyncIterable<{ token: bigint; spam: number; ham: number }> {
        for (const t of tokensFrom(11, 10)) yield { token: t, spam: 5, ham: 6 };
      }
      const t = await writer.bayes.totals(scope);
      await writer.bayes.importTokens(scope, rows(), { learnsSpam: t.learnsSpam, learnsHam: t.learnsHam });
      await untilHeld(reader.bayes, log, 2, probe);
      await assertSame(reader.bayes, sqlOnly.bayes, [...all(), ...tokensFrom(11, 10)], 'after an import');

      // More learns than the log keeps while the reader reads nothing: read again, still equal.
      for (let i = 0; i < CHANGE_LOG_KEEP + 5; i++) await writer.bayes.learn(scope, `bulk-${i}`, [...probe.slice(0, 5), ...tokensFrom(20_000 + i, 3)], 'spam');
      await untilHeld(reader.bayes, log, 3, probe);
      await assertSame(reader.bayes, sqlOnly.bayes, [...all(), ...tokensFrom(20_000, 3), ...tokensFrom(20_000 + CHANGE_LOG_KEEP, 3)], 'after a pruned log');
    } finally {
      await Promise.all([reader.close(), writer.close(), sqlOnly.close()]);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('holds nothing for a process that asks for no table (the controller), and reads SQLite', async () => {
    await withReaderAndWriter((dir, log) => openStores({ dataDir: dir, stores: storesConfig({}) }, log, { bayesMemory: false }), async (reader, writer, log) => {
      const probe = tokensFrom(1, 80);
      await writer.bayes.learn(scope, 'a', probe, 'spam');
      // Long enough for a table to be built if one were (untilHeld above sees it within tens of ms).
      for (let i = 0; i < 30; i++) {
        const c = await reader.bayes.getTokenPairs!(scope, pairsOf(probe));
        assert.ok(c.spam.every((n) => n === 1) && c.ham.every((n) => n === 0), 'counts read from SQLite');
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(log.infos, []);
    });
  });

  it('counts each table at least at its smallest size, so many tiny scopes cannot outgrow the budget', async () => {
    // Room for two of the smallest tables; three scopes of 5 tokens each (per-user statistics).
    await withReaderAndWriter((dir, log) => open(dir, log, { memory_tokens: MIN_CAPACITY * 2 }), async (reader, writer, log) => {
      const users: BayesScope[] = ['u1', 'u2', 'u3'].map((user) => ({ classifier: 'bayes', user }));
      for (const [i, s] of users.entries()) await writer.bayes.learn(s, `m-${i}`, tokensFrom(100 + i, 5), 'spam');
      const deadline = Date.now() + 5000;
      while (log.infos.filter((m) => m === HELD).length < 2 || !log.infos.some((m) => m.startsWith('bayes: scope too big'))) {
        assert.ok(Date.now() < deadline, `two tables and one refusal within 5 s: ${JSON.stringify(log.infos)}`);
        for (const [i, s] of users.entries()) await reader.bayes.getTokenPairs!(s, pairsOf(tokensFrom(100 + i, 5)));
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(log.infos.filter((m) => m === HELD).length, 2);
      for (const [i, s] of users.entries()) {
        const c = await reader.bayes.getTokenPairs!(s, pairsOf(tokensFrom(100 + i, 5)));
        assert.deepEqual([...c.spam], [1, 1, 1, 1, 1], `scope ${s.user}: its counts, from memory or SQLite`);
      }
    });
  });

  it('gives a table back when learns grow it past the budget, and reads SQLite', async () => {
    await withReaderAndWriter((dir, log) => open(dir, log, { memory_tokens: 100 }), async (reader, writer, log) => {
      const first = tokensFrom(1, 70);
      await writer.bayes.learn(scope, 'a', first, 'spam');
      await untilHeld(reader.bayes, log, 1, first);
      // 40 more tokens: 110 held would be over the budget of 100.
      const more = tokensFrom(2, 40);
      await writer.bayes.learn(scope, 'b', more, 'ham');
      const c = await reader.bayes.getTokenPairs!(scope, pairsOf([...first, ...more]));
      assert.ok(log.infos.some((m) => m.startsWith('bayes: scope too big')), JSON.stringify(log.infos));
      assert.deepEqual([...c.spam], [...first.map(() => 1), ...more.map(() => 0)]);
      assert.deepEqual([...c.ham], [...first.map(() => 0), ...more.map(() => 1)]);
    });
  });

  it('reads a scope over the budget from SQLite, and says so', async () => {
    await withReaderAndWriter((dir, log) => open(dir, log, { memory_tokens: 100 }), async (reader, writer, log) => {
      const probe = tokensFrom(1, 80);
      await writer.bayes.learn(scope, 'a', probe, 'spam');
      await writer.bayes.learn(scope, 'b', probe, 'ham');
      const deadline = Date.now() + 5000;
      while (!log.infos.some((m) => m.startsWith('bayes: scope too big'))) {
        assert.ok(Date.now() < deadline, 'the refusal is logged');
        await reader.bayes.getTokenPairs!(scope, pairsOf(probe));
        await new Promise((r) => setTimeout(r, 10));
      }
      const c = await reader.bayes.getTokenPairs!(scope, pairsOf(probe));
      assert.ok(c.spam.every((n) => n === 1) && c.ham.every((n) => n === 1), 'counts read from SQLite');
      assert.ok(!log.infos.includes(HELD));
    });
  });
});
