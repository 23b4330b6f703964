// The verdict as a scan builds it: what a module may force (a pre-result) and what the engine
// has decided so far. Selectors and idempotent symbols read it, so it lives below both.

import type { ActionName, SymbolResult } from './scan-types.js';

export interface PreResult {
  action: ActionName;
  /** Text for `messages.smtp_message`. */
  message?: string;
  module: string;
  /** Score to report; defaults to the action's threshold. */
  score?: number;
  /** Only raise the action floor, do not stop processing. */
  least?: boolean;
  /**
   * Decide the action (unlike `least`) but let the remaining symbols run (Rspamd's `process_all`
   * flag): the reply then lists every symbol, the action is still this one.
   */
  processAll?: boolean;
  /** Precedence among pre-results: low 0, normal 1 (default), high 2, critical 3 (GTUBE). */
  priority?: number;
}

/** The verdict as it stands: what idempotent symbols (milter_headers, history) read. */
export interface Verdict {
  score: number;
  requiredScore: number;
  action: ActionName;
  symbols: readonly SymbolResult[];
  preResult?: PreResult;
  subject?: string;
}
