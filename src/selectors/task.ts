// What selectors read from a message being scanned: a slice of the plugin API's Task, so a
// scan's task works as it is and the controller's check_message can build one from a bare
// message and its request headers.

import type { Task } from '../plugin-api/index.js';

export type SelectorTask = Pick<Task, 'meta' | 'message' | 'received' | 'envelopeFrom' | 'envelopeRcpt' | 'cache' | 'getRequestHeader'> &
  Partial<Pick<Task, 'getSymbol' | 'verdict'>> & {
    /** Task id (the `uid` extractor). */
    readonly uid?: string;
    /** When the connection came in, in ms since the epoch (the `time('connect')` extractor). */
    readonly connectTime?: number;
  };

/** Where selectors find their outside facts: named maps and the server's host name. */
export interface SelectorEnv {
  /** A map registered under a selector alias (`filter_map`, `apply_map`, `except_map`). */
  map?(name: string): { get(key: string): string | undefined } | undefined;
  hostname?: string;
}
