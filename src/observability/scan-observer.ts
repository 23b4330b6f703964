// What happens after every scan, in whichever worker ran it (normal worker or the controller's
// /checkv2): the counters are bumped and a history row is handed to the statistics hub, which
// writes it to the history store (stats-hub.ts). Both are off the reply's path.

import type { Logger } from '../core/logger.js';
import type { ScanMeta, ScanResult } from '../core/scan-types.js';
import { buildHistoryRow } from './history-row.js';
import type { StatsRecorder } from './stats-recorder.js';

export interface ScanInfo {
  result: ScanResult;
  meta: ScanMeta;
  message: Buffer;
  /** Epoch ms the scan started. */
  startedAt: number;
  /** Seconds the scan took. */
  seconds: number;
  /** Rows of legacy `/check`/`/scan` requests carry `is_spam` and symbols without `name`. */
  legacy?: boolean;
}

export type ScanObserver = (info: ScanInfo) => void;

export function createScanObserver(opts: { recorder: StatsRecorder; log: Logger }): ScanObserver {
  const { recorder, log } = opts;
  return (info) => {
    recorder.scan(info.result, info.seconds);
    // Tasks flagged not to be logged are not kept in the history either.
    if (!info.meta.log) return;
    let row;
    try {
      row = buildHistoryRow(info.result, info.meta, info.message, info.startedAt, info.legacy);
    } catch (err) {
      log.warn('could not build a history row', { err: String(err) });
      return;
    }
    recorder.history(row);
  };
}
