// What the engine needs from configuration and what it offers to the layers above
// (protocol, workers, cli). Config loading (src/config/) produces an EngineConfig;
// the protocol layer only ever calls Scanner.scan.

import type { CompositeDef, ModuleDefinition, ScanMeta, ScanResult } from '../plugin-api/index.js';

export interface GroupConfig {
  description?: string;
  /** Cap on the sum of positive scores of the group's symbols. */
  maxScore?: number;
  /** Cap on the sum of negative scores (a negative number). */
  minScore?: number;
  /** Hidden from `groups` output when public_groups_only is set. */
  public?: boolean;
}

export interface SymbolConfig {
  score?: number;
  group?: string;
  description?: string;
  /** Disabled in config: never runs. */
  disabled?: boolean;
}

/** One configured settings rule. Only `id` selection is required for now. */
export interface SettingsRule {
  id: string;
  priority?: number;
  /** The apply object, same shape as the `Settings` request header. */
  apply: Record<string, unknown>;
  /** Conditions for automatic matching; a rule without conditions is only selectable by Settings-ID. */
  conditions?: {
    ip?: string[];
    from?: string[];
    rcpt?: string[];
    user?: string[];
    authenticated?: boolean;
    requestHeader?: Record<string, string>;
    /** Selector texts: the condition holds when one yields a value (checked at config load). */
    selector?: string[];
  };
}

export interface ActionConfig {
  /** Threshold, or null: action disabled. */
  threshold: number | null;
  /** `discard` / `quarantine`: how a milter should carry out the action (reply `reject` field). */
  milter?: string;
}

export interface EngineConfig {
  /** Wire action names (`add header`, not `add_header`) → configuration. Defaults: reject 15, add header 6, greylist 4. */
  actions: Record<string, ActionConfig>;
  /** Subject template for rewrite subject (`%s`, `%d`, `%%`). */
  subjectTemplate: string;
  groups: Record<string, GroupConfig>;
  /** Symbol score/group/description overrides over the modules' own defaults. */
  symbols: Record<string, SymbolConfig>;
  composites: CompositeDef[];
  settings: SettingsRule[];
  /** Per-task deadline in seconds (8 by default); the reply is built from what finished. */
  taskTimeout: number;
  /** Per-module configuration (already merged local.d over defaults); validated by each module's schema. */
  modules: Record<string, Record<string, unknown>>;
  /** Modules switched off in config. */
  disabledModules: string[];
  hostname: string;
  /** The worker's DNS resolver; servers default to /etc/resolv.conf's. */
  dns?: EngineDnsConfig;
}

export interface EngineDnsConfig {
  servers?: string[];
  timeout?: number;
  retransmits?: number;
  maxRequests?: number;
  cacheSize?: number;
}

export interface Scanner {
  /** Scan one message; never throws for bad input (broken MIME yields symbols). */
  scan(message: Buffer, meta: ScanMeta): Promise<ScanResult>;
}

export interface EngineFactory {
  (config: EngineConfig, modules: ReadonlyArray<ModuleDefinition<any>>): Promise<Scanner>; // eslint-disable-line @typescript-eslint/no-explicit-any -- modules carry heterogeneous config types
}
