// Opening stores for the storage tests: SQLite in a temp dir, Redis under a key prefix of the
// test's own, removed afterwards (on every master of a Cluster).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { openStores, type Stores } from '../../src/storage/index.js';
import type { StoresConfigValue } from '../../src/storage/config-schema.js';
import type { Logger } from '../../src/plugin-api/index.js';
import { CONTRACT_HISTORY_ROWS, type ContractStores } from './contract.js';

export const REDIS_URL_HOST = '127.0.0.1';
export const REDIS_PORT = 6379;

export const quietLog: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export function storesConfig(over: Partial<StoresConfigValue>): StoresConfigValue {
  return { backend: 'sqlite', sqlite: {}, redis: {}, bayes: {}, fuzzy: { expire: 172800 }, history: {}, kv: {}, ...over };
}

export async function openSqlite(): Promise<ContractStores & { dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-store-'));
  const stores = await openStores({ dataDir: dir, stores: storesConfig({}), workers: { controller: { historyRows: CONTRACT_HISTORY_ROWS } } }, quietLog);
  return {
    dir,
    stores,
    async cleanup() {
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

let seq = 0;
/** A key prefix no other test run uses. */
export function uniquePrefix(tag: string): string {
  return `mailsift-test:${tag}:${process.pid}:${Date.now().toString(36)}:${seq++}:`;
}

/** Deletes every key under `prefix` on every master reachable through `seeds`. */
export async function deletePrefix(seeds: { host: string; port: number }[], prefix: string, cluster: boolean): Promise<void> {
  const nodes = cluster ? seeds : seeds.slice(0, 1);
  for (const n of nodes) {
    const r = new Redis({ host: n.host, port: n.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await r.connect();
      let cursor = '0';
      do {
        const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000);
        cursor = next;
        // Per key: in a Cluster, one DEL may not span slots.
        for (const k of keys) await r.del(k);
      } while (cursor !== '0');
    } finally {
      r.disconnect();
    }
  }
}

export async function openRedis(opts: { seeds: { host: string; port: number }[]; cluster: boolean; tag: string }): Promise<ContractStores> {
  const prefix = uniquePrefix(opts.tag);
  const stores: Stores = await openStores(
    {
      dataDir: tmpdir(),
      stores: storesConfig({
        backend: 'redis',
        redis: { servers: opts.seeds.map((s) => `${s.host}:${s.port}`), cluster: opts.cluster, prefix },
      }),
      workers: { controller: { historyRows: CONTRACT_HISTORY_ROWS } },
    },
    quietLog,
  );
  return {
    stores,
    async cleanup() {
      await stores.close();
      await deletePrefix(opts.seeds, prefix, opts.cluster);
    },
  };
}

