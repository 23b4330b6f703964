// Two processes writing the same SQLite file at once lose nothing: every learn of both is
// counted, token counts add up exactly, counters and the capped history stay consistent.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openStores } from '../../src/storage/index.js';
import { openSqlite, quietLog, storesConfig } from './helpers.js';
import { tokensFrom } from './contract.js';

const WORKER = fileURLToPath(new URL('./learn-worker.ts', import.meta.url));
const PER_PROCESS = 100;

interface Timing {
  started: number;
  firstWrite: number;
  ended: number;
}

interface Worker {
  ready: Promise<void>;
  go(): void;
  exit: Promise<number>;
  timing(): Timing | undefined;
}

function startWorker(dir: string, tag: string, first: number): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, dir, tag, String(PER_PROCESS), String(first)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  return {
    timing: () => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      return line ? (JSON.parse(line) as Timing) : undefined;
    },
    ready: new Promise((resolve, reject) => {
      child.once('error', reject);
      child.stdout?.once('data', () => resolve());
      child.once('exit', () => reject(new Error(`${tag} exited before it was ready`)));
    }),
    go: () => child.stdin?.write('go\n'),
    exit: new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1))),
  };
}

describe('sqlite: several processes', () => {
  it('two processes learning into one file at once lose nothing', async () => {
    const base = await openSqlite();
    try {
      const workers = [startWorker(base.dir, 'p1', 0), startWorker(base.dir, 'p2', PER_PROCESS)];
      await Promise.all(workers.map((w) => w.ready));
      for (const w of workers) w.go();
      const codes = await Promise.all(workers.map((w) => w.exit));
      assert.deepEqual(codes, [0, 0]);
      const s = await openStores({ dataDir: base.dir, stores: storesConfig({}) }, quietLog);
      try {
        const scope = { classifier: 'bayes', user: '' };
        const t = await s.bayes.totals(scope);
        const total = 2 * PER_PROCESS;
        assert.equal(t.learnsSpam + t.learnsHam, total);
        assert.equal(t.learnsSpam, total / 2);
        assert.equal(t.revision, total);
        const shared = await s.bayes.getTokens(scope, tokensFrom(1, 50));
        assert.ok(shared.spam.every((n) => n === total / 2), 'every spam learn of both processes reached the shared tokens');
        assert.ok(shared.ham.every((n) => n === total / 2));
        const own = await s.bayes.getTokens(scope, tokensFrom(1000 + 7, 50));
        assert.deepEqual([...own.ham], new Array(50).fill(1));
        assert.equal(t.tokensSpam, 50 + (total / 2) * 50);
        assert.equal((await s.kv.get('learns'))?.toString(), String(total));
        assert.equal(await s.history.count(), 200);
        // Both processes were writing during the same span of time: each started its loop
        // before the other finished.
        const [a, b] = workers.map((w) => w.timing()) as [Timing, Timing];
        assert.ok(a && b, 'both workers reported their timing');
        assert.ok(a.started < b.ended && b.started < a.ended, `overlapping loops: ${JSON.stringify([a, b])}`);
        for (let i = 0; i < total; i++) assert.ok(await s.bayes.learnedAs(scope, `${i < PER_PROCESS ? 'p1' : 'p2'}-${i}`), `message ${i} is in the learn cache`);
      } finally {
        await s.close();
      }
    } finally {
      await base.cleanup();
    }
  });
});
