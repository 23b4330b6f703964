// `mailsift stats export|import`: SQLite → JSON lines → Redis keeps every token count, the learn
// totals and the fuzzy hashes; the command line round-trips the same file.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { exportStats, importStats } from '../../src/cli/stats.js';
import { loadConfig } from '../../src/config/load.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { openStores } from '../../src/storage/index.js';
import type { BayesScope, Stores } from '../../src/storage/types.js';
import { BayesClassifier, bayesConfig } from '../../src/rule-libs/bayes/index.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { devMessages } from './corpus.js';

const run = promisify(execFile);
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const PREFIX = `mailsift-stats-test-${process.pid}:`;
const REDIS_DB = 12;

const dirs: string[] = [];
after(async () => {
  const r = new Redis({ host: '127.0.0.1', port: 6379, db: REDIS_DB });
  const keys = await r.keys(`${PREFIX}*`);
  if (keys.length > 0) await r.del(...keys);
  r.disconnect();
  for (const d of dirs) await removeConfDir(d);
});

async function confDir(backend: 'sqlite' | 'redis'): Promise<string> {
  const d = await makeConfDir({
    'mailsift.yaml': `data_dir: data\nstores:\n  backend: ${backend}\n  redis: { db: ${REDIS_DB}, prefix: "${PREFIX}${backend}:" }\n`,
  });
  dirs.push(d);
  return d;
}

async function open(dir: string): Promise<Stores> {
  const cfg = await loadConfig(dir);
  return openStores({ dataDir: cfg.dataDir, stores: cfg.stores }, silent);
}

async function rows(stores: Stores, scope: BayesScope): Promise<Map<string, string>> {
  const m = new Map<string, string>();
  for await (const r of stores.bayes.exportTokens(scope)) m.set(r.token.toString(), `${r.spam}/${r.ham}`);
  return m;
}

async function collect(stream: PassThrough): Promise<string[]> {
  let text = '';
  for await (const c of stream) text += String(c);
  return text.split('\n').filter((l) => l !== '');
}

test('SQLite → JSON lines → Redis, in the library and through `mailsift stats`', async () => {
  const src = await open(await confDir('sqlite'));
  const c = new BayesClassifier(bayesConfig({ per_user: true }));
  const scopes: BayesScope[] = [c.scope(''), c.scope('bob@example.org')];
  for (const m of devMessages('spam-1', 200, 3)) await c.learn(src.bayes, c.tokenize(parseMessage(m)), { cls: 'spam', bulk: true });
  for (const m of devMessages('easy-ham-1', 200, 2)) await c.learn(src.bayes, c.tokenize(parseMessage(m)), { cls: 'ham', bulk: true, user: 'bob@example.org' });
  await src.fuzzy.add({ digest: 'ab'.repeat(32), flag: 1, weight: 5, shingles: Array.from({ length: 32 }, (_, i) => BigInt(i) * 1_000_003n + 18_000_000_000_000_000_000n) }, 3600);

  const out = new PassThrough();
  const lines = collect(out);
  const counts = await exportStats(src, out);
  out.end();
  const text = await lines;
  assert.equal(counts.scopes, 2);
  assert.equal(counts.fuzzy, 1);
  assert.equal(text.length, counts.scopes + counts.tokens + counts.fuzzy);

  const dst = await open(await confDir('redis'));
  try {
    const back = await importStats(dst, (async function* () { yield* text; })());
    assert.deepEqual(back, counts);
    for (const s of scopes) {
      const a = await src.bayes.totals(s);
      const b = await dst.bayes.totals(s);
      assert.equal(b.learnsSpam, a.learnsSpam);
      assert.equal(b.learnsHam, a.learnsHam);
      assert.deepEqual(await rows(dst, s), await rows(src, s));
    }
    const fz = [];
    for await (const f of dst.fuzzy.exportAll()) fz.push(f);
    assert.equal(fz.length, 1);
    assert.equal(fz[0]!.value, 5);
    assert.equal(fz[0]!.shingles?.[31], 31n * 1_000_003n + 18_000_000_000_000_000_000n);
  } finally {
    await dst.close();
  }

  // The command line: export the SQLite stores to a file, import it into a second Redis prefix.
  await src.close();
  const srcDir = dirs[0]!;
  const file = join(srcDir, 'stats.jsonl');
  const cli = join(process.cwd(), 'src/cli/mailsift.ts');
  const e = await run(process.execPath, ['--import', 'tsx', cli, 'stats', 'export', '-c', srcDir, '-o', file]);
  assert.match(e.stderr, /^exported 2 Bayes statfile scopes, \d+ tokens, 1 fuzzy hashes$/m);
  assert.deepEqual((await readFile(file, 'utf8')).split('\n').filter(Boolean), text);
  const dst2 = await confDir('redis');
  const i = await run(process.execPath, ['--import', 'tsx', cli, 'stats', 'import', '-c', dst2, '-i', file]);
  assert.equal(i.stderr.replace('imported', 'exported'), e.stderr);
});
