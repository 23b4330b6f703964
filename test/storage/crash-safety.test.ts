// A process killed with SIGKILL in the middle of a stream of learns: after reopening, every
// learn that had resolved is there, and counters and token counts agree (no half-applied learn).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openStores } from '../../src/storage/index.js';
import { openSqlite, quietLog, storesConfig } from './helpers.js';
import { tokensFrom } from './contract.js';

const WORKER = fileURLToPath(new URL('./crash-worker.ts', import.meta.url));
/** Learns confirmed before the kill; enough to land the kill inside a busy stream. */
const KILL_AFTER = 40;

describe('sqlite: crash safety', () => {
  it('keeps every confirmed learn and stays consistent after SIGKILL', async () => {
    const base = await openSqlite();
    try {
      const confirmed = new Map<string, string>();
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', WORKER, base.dir], { stdio: ['ignore', 'pipe', 'inherit'] });
        let buf = '';
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const [, digest, cls] = buf.slice(0, nl).split(' ');
            buf = buf.slice(nl + 1);
            if (digest && cls) confirmed.set(digest, cls);
            if (confirmed.size === KILL_AFTER) child.kill('SIGKILL');
          }
        });
        child.once('error', reject);
        child.once('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`worker exited by itself (${String(signal)})`))));
      });
      assert.ok(confirmed.size >= KILL_AFTER);

      const s = await openStores({ dataDir: base.dir, stores: storesConfig({}) }, quietLog);
      try {
        const scope = { classifier: 'bayes', user: '' };
        for (const [digest, cls] of confirmed) assert.equal(await s.bayes.learnedAs(scope, digest), cls, `${digest} survived`);
        const t = await s.bayes.totals(scope);
        const learns = t.learnsSpam + t.learnsHam;
        // At most one more learn (the one in flight) may have committed without being confirmed.
        assert.ok(learns >= confirmed.size && learns <= confirmed.size + 1, `learns ${learns}, confirmed ${confirmed.size}`);
        const shared = await s.bayes.getTokens(scope, tokensFrom(1, 20));
        assert.ok(shared.spam.every((n) => n === t.learnsSpam), 'spam token counts match the spam learn counter');
        assert.ok(shared.ham.every((n) => n === t.learnsHam), 'ham token counts match the ham learn counter');
        assert.equal(t.revision, learns);
      } finally {
        await s.close();
      }
    } finally {
      await base.cleanup();
    }
  });
});
