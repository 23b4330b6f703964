// Leaky buckets on the KvStore. A bucket is a hash {l: level in milli-messages, t: last update
// in ms}. Adding is one atomic hincrBy, so concurrent workers never lose a message; two
// updaters racing on the same bucket may both subtract the same leak, which can only make the
// limit slightly more lenient for that instant (Rspamd does it in one Lua script).

import type { KvStore } from '../../plugin-api/index.js';

/** Fixed-point scale: levels are integers in the store. */
const MILLI = 1000;

export interface BucketState {
  level: number;
  last: number;
}

export async function readBucket(kv: KvStore, key: string): Promise<BucketState | undefined> {
  const h = await kv.hgetall(key);
  if (h['t'] === undefined) return undefined;
  return { level: Number(h['l'] ?? 0) / MILLI, last: Number(h['t']) };
}

/** Level after leaking at `rate` per second until `now`. */
export function leaked(state: BucketState | undefined, rate: number, now: number): number {
  if (!state) return 0;
  const elapsed = Math.max(0, now - state.last) / 1000;
  return Math.max(0, state.level - elapsed * rate);
}

/** Add one message to the bucket (after leaking); returns the new level. */
export async function addToBucket(kv: KvStore, key: string, rate: number, now: number, ttlMs: number): Promise<number> {
  const state = await readBucket(kv, key);
  const current = leaked(state, rate, now);
  const dl = Math.round((current + 1 - (state?.level ?? 0)) * MILLI);
  const dt = state ? Math.max(0, now - state.last) : now;
  const r = await kv.hincrBy(key, { l: dl, t: dt }, ttlMs);
  return (r['l'] ?? 0) / MILLI;
}
