// What happens after every scan, in whichever worker ran it (normal worker or the controller's
// /checkv2): the counters are bumped and a history row is handed to the statistics hub, which
// writes it to the history store (stats-hub.ts). Both are off the reply's path.

import type { Logger } from '../core/logger.js';
import type { ScanMeta, ScanResult } from '../core/scan-types.js';
import { buildHistoryRow } from './history-row.js';
import { isUnlogged } from './scan-log.js';
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
  /** The To/Cc addresses, when already read (the history row's), for the log line. */
  mimeRcpts?: string[];
}

export type ScanObserver = (info: ScanInfo) => void;

export interface ScanObserverOptions {
  recorder: StatsRecorder;
  log: Logger;
  /** Writes the scan's log line (scan-log.ts createScanLogger); none: no line. */
  scanLine?: (info: ScanInfo) => void;
}

export function createScanObserver(opts: ScanObserverOptions): ScanObserver {
  const { recorder, log, scanLine } = opts;
  return (info) => {
    recorder.scan(info.result, info.seconds);
    // Tasks flagged not to be logged are not kept in the history either.
    if (isUnlogged(info.result, info.meta)) return;
    // The row first: the line takes the MIME recipients the row has read from the header block.
    let row;
    try {
      row = buildHistoryRow(info.result, info.meta, info.message, info.startedAt, info.legacy);
    } catch (err) {
      log.warn('could not build a history row', { err: String(err) });
    }
    try {
      // buildHistoryRow sets rcpt_mime to the To/Cc addresses (a string[]; rows are loosely typed records).
      scanLine?.(row ? { ...info, mimeRcpts: row.rcpt_mime as string[] } : info);
    } catch (err) {
      // A line that cannot be written must not cost the scan its history row or its reply.
      log.warn('could not write the scan log line', { err: String(err) });
    }
    if (!row) return;
    recorder.history(row);
  };
}
