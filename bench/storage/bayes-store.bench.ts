// Measures the BayesStore hot paths on both back ends: getTokens for one message's 1 000
// tokens (what a scan costs) and learn throughput (messages per second, each with 300 tokens).
// Run: node --import tsx bench/storage/bayes-store.bench.ts [redis-host:port]
// SQLite uses a temp dir; Redis uses a key prefix of its own and deletes it afterwards.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { openStores, type Stores } from '../../src/storage/index.js';
import type { StoresConfigValue } from '../../src/storage/config-schema.js';

const LEARNS = 300; // messages learned before measuring reads, so lookups hit a populated table
const TOKENS_PER_LEARN = 300;
const READ_TOKENS = 1000;
const READS = 200;
const log = { debug() {}, info() {}, warn() {}, error: console.error };

function tokens(seed: number, n: number): bigint[] {
  let x = BigInt(seed) * 0x9e3779b97f4a7c15n + 1n;
  const out: bigint[] = [];
  const mask = (1n << 64n) - 1n;
  for (let i = 0; i < n; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & mask;
    out.push(x);
  }
  return out;
}

function cfg(over: Partial<StoresConfigValue>): StoresConfigValue {
  return { backend: 'sqlite', sqlite: {}, redis: {}, bayes: {}, fuzzy: { expire: 172800 }, history: {}, kv: {}, ...over };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

async function measure(name: string, s: Stores): Promise<void> {
  const scope = { classifier: 'bench', user: '' };
  const msgs = Array.from({ length: LEARNS }, (_, i) => tokens(i % 50, TOKENS_PER_LEARN / 2).concat(tokens(1000 + i, TOKENS_PER_LEARN / 2)));
  let t = performance.now();
  for (let i = 0; i < LEARNS; i++) await s.bayes.learn(scope, `m${i}`, msgs[i] as bigint[], i % 2 ? 'spam' : 'ham');
  const learnS = (performance.now() - t) / 1000;
  // Read a mix of known and unknown tokens, as a new message would.
  const lat: number[] = [];
  for (let r = 0; r < READS; r++) {
    const q = tokens(r % 50, READ_TOKENS / 2).concat(tokens(50_000 + r, READ_TOKENS / 2));
    t = performance.now();
    await s.bayes.getTokens(scope, q);
    lat.push(performance.now() - t);
  }
  console.log(
    `${name}: learn ${(LEARNS / learnS).toFixed(0)} msg/s (${TOKENS_PER_LEARN} tokens each); getTokens(${READ_TOKENS}) p50 ${pct(lat, 50).toFixed(2)} ms, p99 ${pct(lat, 99).toFixed(2)} ms`,
  );
}

const dir = await mkdtemp(join(tmpdir(), 'mailsift-bench-'));
try {
  for (const sync of ['full', 'normal'] as const) {
    const s = await openStores({ dataDir: join(dir, sync), stores: cfg({ sqlite: { synchronous: sync } }) }, log);
    await measure(`sqlite (synchronous=${sync})`, s);
    await s.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const server = process.argv[2] ?? '127.0.0.1:6379';
const prefix = `mailsift-bench:${process.pid}:`;
const s = await openStores({ dataDir: tmpdir(), stores: cfg({ backend: 'redis', redis: { servers: [server], prefix } }) }, log);
try {
  await measure(`redis ${server}`, s);
} finally {
  await s.close();
  const [host, port] = server.split(':');
  const r = new Redis({ host: host as string, port: Number(port ?? 6379) });
  let cursor = '0';
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await r.del(...keys);
  } while (cursor !== '0');
  r.disconnect();
}
