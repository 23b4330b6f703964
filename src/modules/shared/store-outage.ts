// How a module reports a store it cannot reach during scans. A check whose store is down or not
// answering is skipped (the scan goes on, DESIGN point 8); at hundreds of scans a second a log
// line per scan would bury everything else, so the outage is logged once per period, with how
// many failures the period saw, and each scan only at debug level.

import type { Logger, Task } from '../../plugin-api/index.js';

/** One warning per module per this period while its store keeps failing. */
export const STORE_OUTAGE_LOG_MS = 30_000;

/** A store failure seen by a scan: what was skipped, and the store's error. */
export type StoreOutage = (task: Task, skipped: string, err: unknown) => void;

export function storeOutageLog(log: Logger, module: string, everyMs = STORE_OUTAGE_LOG_MS): StoreOutage {
  let last = 0;
  let unlogged = 0;
  return (task, skipped, err) => {
    const error = err instanceof Error ? err.message : String(err);
    task.log.debug(`${module}: store unavailable, ${skipped}`, { error });
    const now = Date.now();
    if (now - last < everyMs) {
      unlogged++;
      return;
    }
    last = now;
    log.warn(`${module}: store unavailable, ${skipped}`, { error, ...(unlogged > 0 ? { failuresSinceLastLog: unlogged } : {}) });
    unlogged = 0;
  };
}

/** A store's own failure (down, not answering, refused), as opposed to a bug in the caller. */
export function isStoreError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'STORE_UNAVAILABLE' || code === 'STORE_FAILED';
}
