// Stores for the policy module tests (ratelimit, greylist, replies): the real SQLite KvStore in
// a temp dir, or the real Redis on 127.0.0.1:6379 under a key prefix removed afterwards.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/plugin-api/index.js';
import { deletePrefix, quietLog, storesConfig, uniquePrefix } from '../storage/helpers.js';

export interface PolicyStores {
  stores: Stores;
  cleanup(): Promise<void>;
}

export async function sqliteStores(): Promise<PolicyStores> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-policy-'));
  const stores = await openStores({ dataDir: dir, stores: storesConfig({}) }, quietLog);
  return {
    stores,
    async cleanup() {
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function redisStores(tag: string): Promise<PolicyStores> {
  const prefix = uniquePrefix(tag);
  const stores = await openStores(
    { dataDir: tmpdir(), stores: storesConfig({ backend: 'redis', redis: { servers: ['127.0.0.1:6379'], prefix } }) },
    quietLog,
  );
  return {
    stores,
    async cleanup() {
      await stores.close();
      await deletePrefix([{ host: '127.0.0.1', port: 6379 }], prefix, false);
    },
  };
}

export const BACKENDS: Array<[string, (tag: string) => Promise<PolicyStores>]> = [
  ['sqlite', () => sqliteStores()],
  ['redis', (tag) => redisStores(tag)],
];
