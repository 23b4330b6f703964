// How each process of `mailsift serve` gets its stores and its link to the statistics hub:
// the supervisor (cluster primary) owns the hub and persists it; workers open their own stores
// (SQLite and Redis are both safe with several processes) and talk to the hub over IPC. With
// --single the one process owns the hub and talks to it directly.

import type { Worker } from 'node:cluster';
import type { LoadedConfig } from '../config/load.js';
import type { PrimaryConfig } from './process-common.js';
import type { Logger } from '../plugin-api/index.js';
import { setErrorSink } from '../observability/error-ring.js';
import { createScanObserver, type ScanObserver } from '../observability/scan-observer.js';
import { createScanLogger } from '../observability/scan-log.js';
import { StatsHub, type HealthInfo, type StatsSink, type StatsView } from '../observability/stats-hub.js';
import { handleStatsMessage, ipcStatsSink, ipcStatsView } from '../observability/stats-ipc.js';
import { StatsRecorder } from '../observability/stats-recorder.js';
import { openStores } from '../storage/index.js';
import type { Stores } from '../storage/types.js';

export interface ProcessServices {
  stores: Stores;
  recorder: StatsRecorder;
  view: StatsView;
  observeScan: ScanObserver;
  /** Flushes pending counts and closes the stores. */
  close(): Promise<void>;
}

/**
 * A worker's services. `hub` given: this process aggregates (--single); otherwise over IPC.
 * `taskLog` receives each scan's log line (none: no line).
 */
export async function openProcessServices(cfg: LoadedConfig, log: Logger, type: string, hub?: StatsHub, taskLog?: Logger): Promise<ProcessServices> {
  // The controller classifies only to learn and for the web UI's scans: no in-memory Bayes table.
  const stores = await openStores(cfg, log, { bayesMemory: type !== 'controller' });
  const ipc = hub ? undefined : ipcStatsSink();
  const sink: StatsSink = hub ?? ipc!;
  const view: StatsView = hub ?? ipcStatsView();
  if (!hub) setErrorSink((e) => sink.error(e), type);
  const recorder = new StatsRecorder(sink);
  return {
    stores,
    recorder,
    view,
    observeScan: createScanObserver({ recorder, log, ...(taskLog ? { scanLine: createScanLogger(taskLog, cfg.logging.format, cfg.logging.level) } : {}) }),
    async close() {
      recorder.flush();
      // The last counts must reach the supervisor before this process exits.
      await ipc?.settled();
      await stores.close();
    },
  };
}

export interface PrimaryStats {
  hub: StatsHub;
  /** Routes a worker's statistics messages to the hub. */
  attach(worker: Worker): void;
  /** Persists the aggregate and closes the store. */
  stop(): Promise<void>;
}

/** The aggregating side, in the supervisor (or the --single process). */
export async function startPrimaryStats(cfg: PrimaryConfig, log: Logger, health: () => HealthInfo): Promise<PrimaryStats> {
  const stores = await openStores(cfg, log);
  const hub = new StatsHub({ kv: stores.kv, history: stores.history, errorElts: cfg.workers.controller.errorElts, log, health });
  await hub.start();
  setErrorSink((e) => hub.error(e), 'main');
  let stopping: Promise<void> | undefined;
  return {
    hub,
    attach(worker) {
      const pid = worker.process.pid;
      worker.on('message', (m: unknown) => {
        handleStatsMessage(hub, m, (reply) => {
          if (worker.isConnected()) worker.send(reply);
        });
      });
      worker.on('exit', () => {
        if (pid !== undefined) hub.forgetProcess(pid);
      });
    },
    stop() {
      stopping ??= (async () => {
        setErrorSink(undefined);
        await hub.stop();
        await stores.close();
      })();
      return stopping;
    },
  };
}
