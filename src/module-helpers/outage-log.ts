// How a module reports a dependency it cannot reach during scans (a store down or not answering,
// DNS lookups failing). The check is skipped or gets its _FAIL symbol and the scan goes on
// (a dependency failure is a result, never a crash); at hundreds of scans a second a log line per scan would bury everything else,
// so the outage is logged once per period, with how many failures the period saw, and each scan
// only at debug level.

import type { Logger, Task } from '../plugin-api/index.js';

/** One warning per module and kind of outage per this period while the failures go on. */
export const OUTAGE_LOG_MS = 30_000;

/** Reports one failure seen by a scan. */
export type OutageLog = (task: Task, extra: Record<string, unknown>) => void;

export function outageLog(log: Logger, message: string, everyMs = OUTAGE_LOG_MS): OutageLog {
  let last = 0;
  let unlogged = 0;
  return (task, extra) => {
    task.log.debug(message, extra);
    const now = Date.now();
    if (now - last < everyMs) {
      unlogged++;
      return;
    }
    last = now;
    log.warn(message, { ...extra, ...(unlogged > 0 ? { failuresSinceLastLog: unlogged } : {}) });
    unlogged = 0;
  };
}

/** A store failure seen by a scan: what was skipped, and the store's error. */
export type StoreOutage = (task: Task, skipped: string, err: unknown) => void;

export function storeOutageLog(log: Logger, module: string, everyMs = OUTAGE_LOG_MS): StoreOutage {
  const report = outageLog(log, `${module}: store unavailable, check skipped`, everyMs);
  return (task, skipped, err) => report(task, { skipped, error: err instanceof Error ? err.message : String(err) });
}

/** A store's own failure (down, not answering, refused), as opposed to a bug in the caller. */
export function isStoreError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'STORE_UNAVAILABLE' || code === 'STORE_FAILED';
}
