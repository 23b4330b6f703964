// Setup steps shared by the stateful policy modules (greylist, ratelimit, replies): they keep
// their state in the key-value store and skip listed client networks.
import type { KvStore } from '../plugin-api/index.js';
import type { MapHandle, ModuleContext } from '../plugin-api/index.js';

/**
 * The worker's key-value store, or undefined after switching the module off: without a store a
 * policy module cannot remember anything, so it must not run half-working.
 */
export function kvOrDisable(ctx: ModuleContext<unknown>, module: string): KvStore | undefined {
  const kv = ctx.stores?.kv;
  if (!kv) {
    ctx.log.warn(`${module}: no key-value store; module disabled`);
    ctx.disable('redis');
  }
  return kv;
}

/** A radix map of the configured networks, or undefined when none are listed. */
export async function networksMap(ctx: ModuleContext<unknown>, networks: readonly string[], what: string): Promise<MapHandle | undefined> {
  return networks.length > 0 ? ctx.maps.add({ url: 'static', data: networks, kind: 'radix', description: what }) : undefined;
}
