// The context the core families (status, metrics, history, graph, scan) run with: the shared
// ControllerContext with its optional parts filled in by index.ts.

import { createHash } from 'node:crypto';
import { DEFAULT_SERVER_NAME } from '../../http/server-name.js';
import type { LoadedConfig } from '../../config/load.js';
import type { ScanObserver } from '../../observability/scan-observer.js';
import type { ControllerContext, ControllerStats } from './types.js';

export interface CoreContext extends ControllerContext {
  stats: ControllerStats;
  startedAt: number;
  /** Reported as `version` (the mailsift release). */
  version: string;
  /** Checksum of the effective configuration (`config_id`). */
  configId: string;
  /** Counts a scan made on the controller and appends its history row. */
  observeScan: ScanObserver;
}

export const VERSION = DEFAULT_SERVER_NAME.slice(DEFAULT_SERVER_NAME.indexOf('/') + 1);

/** A stable id of what the configuration means (not of the files' formatting). */
export function configIdOf(config: LoadedConfig): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ engine: config.engine, workers: config.workers }));
  return h.digest('hex');
}
