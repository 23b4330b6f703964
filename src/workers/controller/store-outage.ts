// Controller endpoints over a store (history, learning, fuzzy, the saved configuration) when
// that store is down or not answering: the reply is 503 `{"error":"<store> store unavailable:
// <why>"}` at once, and the outage is logged once per OUTAGE_LOG_MS per store, not once per
// request (a client retrying in a loop, or the web UI polling /history, would otherwise flood
// the log and the /errors ring with one line each).

import type { Logger } from '../../plugin-api/index.js';
import { ControllerError } from './json.js';

/** One error line per store and per this period while its calls keep failing. */
export const OUTAGE_LOG_MS = 30_000;

/** Status of a store that is down or did not answer: the request may succeed later. */
export const STORE_UNAVAILABLE_STATUS = 503;

interface OutageState {
  last: number;
  unlogged: number;
}

// Per logger (one per controller): two controllers in one process keep their own periods.
const states = new WeakMap<Logger, Map<string, OutageState>>();

/** A StoreError of a store that is down or not answering (storage/types.ts; matched on code). */
export function isStoreUnavailable(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 'STORE_UNAVAILABLE';
}

function detail(err: unknown): string {
  const e = err as { cause?: unknown; message?: unknown } | undefined;
  // A LearnError wraps the StoreError: its cause says what the store did.
  const inner = (e?.cause as { message?: unknown } | undefined)?.message ?? e?.message;
  return typeof inner === 'string' ? inner : String(err);
}

/** Logs a failure of `store` at error level, at most once per OUTAGE_LOG_MS per store. */
export function logStoreOutage(log: Logger, store: string, err: unknown, now = Date.now()): void {
  let byStore = states.get(log);
  if (!byStore) states.set(log, (byStore = new Map()));
  let s = byStore.get(store);
  if (!s) byStore.set(store, (s = { last: -Infinity, unlogged: 0 }));
  if (now - s.last < OUTAGE_LOG_MS) {
    s.unlogged++;
    log.debug(`${store} store unavailable or failing`, { error: detail(err) });
    return;
  }
  log.error(`${store} store unavailable or failing`, { error: detail(err), ...(s.unlogged > 0 ? { failuresSinceLastLog: s.unlogged } : {}) });
  s.last = now;
  s.unlogged = 0;
}

/** `<store> store unavailable: …` (or `store unavailable: …` when the store is not known). */
function text(store: string, what: 'unavailable' | 'failed', err: unknown): string {
  return `${store ? `${store} ` : ''}store ${what}: ${detail(err)}`;
}

/** The 503 reply for a store that is down, logged (rate-limited) on the way. */
export function storeUnavailable(log: Logger, store: string, err: unknown): ControllerError {
  logStoreOutage(log, store || 'a', err);
  return new ControllerError(STORE_UNAVAILABLE_STATUS, text(store, 'unavailable', err));
}

/**
 * The reply for a StoreError, logged (rate-limited): a store that is down is 503, one that
 * answered with an error (STORE_FAILED: out of memory, a wrong key type) 500 saying so.
 * Undefined for any other error (a bug: the dispatcher's own handling).
 */
export function storeErrorOf(log: Logger, store: string, err: unknown): ControllerError | undefined {
  if (isStoreUnavailable(err)) return storeUnavailable(log, store, err);
  if ((err as { code?: unknown } | undefined)?.code !== 'STORE_FAILED') return undefined;
  logStoreOutage(log, store || 'a', err);
  return new ControllerError(500, text(store, 'failed', err));
}

/** Runs an endpoint's call to `store`, its StoreErrors turned into their replies (storeErrorOf). */
export async function withStore<T>(log: Logger, store: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw storeErrorOf(log, store, err) ?? err;
  }
}
