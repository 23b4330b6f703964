// What a task and the scheduler read from the engine: everything precomputed at start so a
// scan allocates only its own state.

import type { Logger } from '../plugin-api/index.js';
import type { NetServices } from '../net/index.js';
import type { ActionEntry } from './actions.js';
import type { CompiledComposite } from './composites.js';
import type { ItemInfo, Registry } from './registry.js';
import type { GroupLimit } from './scoring.js';
import type { CompiledSettings } from './settings.js';
import type { CpuTurns } from './cpu-turns.js';

export interface EngineCore {
  readonly registry: Registry;
  readonly composites: readonly CompiledComposite[];
  readonly baseActions: readonly ActionEntry[];
  readonly baseRequiredScore: number;
  readonly baseSpamLimit: number;
  readonly milterAttrs: Map<string, string>;
  readonly groupLimits: ReadonlyMap<string, GroupLimit>;
  readonly subjectTemplate: string;
  readonly taskTimeoutMs: number;
  readonly log: Logger;
  readonly defaultSettings: CompiledSettings;
  /** The worker's shared resolver and Redis clients (network calls of tasks). */
  readonly net: NetServices;
  /** Which ready scan runs next (the oldest): asked at each stage boundary. */
  readonly turns: CpuTurns;
  /**
   * A callback threw or rejected: log it (error level, with module, symbol and the message's
   * Message-ID) and count it against the symbol.
   */
  recordError(item: ItemInfo, err: unknown, messageId: string): void;
}
