// What selectors read from a message being scanned: a slice of a scan's task (the plugin API's
// Task has every member, so a scan's task works as it is), and the controller's check_message
// can build one from a bare message and its request headers. Spelled out here rather than
// picked from Task because the plugin API sits above selectors and re-exports them.

import type { EmailAddress, Message, ReceivedHop } from '../message/types.js';
import type { ScanMeta, SymbolResult } from '../core/scan-types.js';
import type { Verdict } from '../core/verdict.js';

export interface SelectorTask {
  readonly meta: ScanMeta;
  readonly message: Message;
  readonly received: readonly ReceivedHop[];
  readonly envelopeFrom?: EmailAddress;
  readonly envelopeRcpt: readonly EmailAddress[];
  readonly cache: Map<string, unknown>;
  getRequestHeader(name: string): string | undefined;
  /** Present on a scan's task (the `symbol` extractor). */
  getSymbol?(name: string): SymbolResult | undefined;
  /** Present on a scan's task (the `scan_result` extractor). */
  verdict?(): Verdict;
  /** Task id (the `uid` extractor). */
  readonly uid?: string;
  /** When the connection came in, in ms since the epoch (the `time('connect')` extractor). */
  readonly connectTime?: number;
}

/** Where selectors find their outside facts: named maps and the server's host name. */
export interface SelectorEnv {
  /** A map registered under a selector alias (`filter_map`, `apply_map`, `except_map`). */
  map?(name: string): { get(key: string): string | undefined } | undefined;
  hostname?: string;
}
