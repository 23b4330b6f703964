// The engine: builds the symbol registry from the modules and the config, then scans
// messages. `createEngine` is the EngineFactory of contract.ts; the returned Engine is a
// Scanner plus the listings the controller needs.

import { messageTask, type SelectorTask } from '../selectors/index.js';
import type { ActionName, Learner, Logger, ModuleDefinition, ScanMeta, ScanResult } from '../plugin-api/index.js';
import { buildBaseActions, milterAttributes, normaliseActionName, requiredScore, spamLimit } from './actions.js';
import type { ActionEntry } from './actions.js';
import { compileComposites } from './composites.js';
import type { CompiledComposite } from './composites.js';
import type { EngineConfig, EngineFactory, Scanner } from './contract.js';
import type { EngineCore } from './core.js';
import { Registry } from './registry.js';
import type { ItemInfo, ModuleEndpoint, RegistryInput } from './registry.js';
import { buildResult } from './result.js';
import { runScan } from './scheduler.js';
import type { GroupLimit } from './scoring.js';
import { createSettingsResolver, defaultSettings } from './settings.js';
import type { CompiledSettings, SettingsResolver } from './settings.js';
import { DEFAULT_SUBJECT_TEMPLATE } from './subject.js';
import { ScanTask } from './task.js';
import { clientFromMessage } from './received-client.js';
import { CpuTurns } from './cpu-turns.js';
import { createNetServices } from '../net/index.js';
import type { NetServices } from '../net/index.js';
import { actionState, ScoreOverrides, type RuntimeOverrides } from './overrides.js';
import { createMapRegistry, type MapRegistry } from '../maps/index.js';
import type { Stores } from '../storage/types.js';

export { EngineError } from './errors.js';
export type { RuntimeOverrides } from './overrides.js';
export type { EngineErrorCode } from './errors.js';
export type { ModuleEndpoint } from './registry.js';

/** Rspamd's task_timeout default, in seconds. */
export const DEFAULT_TASK_TIMEOUT = 8;

export interface EngineOptions {
  log?: Logger;
  /** The worker's resolver and Redis clients; made from config.dns when absent (tests pass their own to close them). */
  net?: NetServices;
  /** The worker's stores, handed to modules as ctx.stores (Bayes, fuzzy, …). */
  stores?: Stores;
  /** The process's map registry (shared with the controller's map endpoints); a private one otherwise. */
  maps?: MapRegistry;
  /** Names of the modules that are users' plugins: their mistakes disable them instead of failing the engine. */
  localModules?: ReadonlySet<string>;
}

export interface SymbolListing {
  name: string;
  score: number;
  group: string;
  description?: string;
  module?: string;
  /** Disabled in config or by its module. */
  disabled: boolean;
}

export interface GroupListing {
  name: string;
  description?: string;
  maxScore?: number;
  minScore?: number;
  symbols: string[];
}

export interface ActionListing {
  name: ActionName;
  threshold: number | null;
  milter?: string;
}

export interface Engine extends Scanner {
  symbols(): SymbolListing[];
  groups(): GroupListing[];
  actions(): ActionListing[];
  /** Symbol → number of exceptions its callback raised since start. */
  errorCounts(): ReadonlyMap<string, number>;
  /** Module → reason, for modules that are switched off. */
  disabledModules(): ReadonlyMap<string, string>;
  /** Controller endpoints the modules registered, in module order. */
  endpoints(): readonly ModuleEndpoint[];
  /** Learners the modules registered (what an endpoint's task.learn asks). */
  learners(): readonly Learner[];
  /** Whether a module is a user's plugin (its endpoints are the local layer of the override rule). */
  isLocalModule(name: string): boolean;
  /** The maps the modules declared (controller /maps, /getmap, /savemap, /plugins/maps/*). */
  maps(): MapRegistry;
  /** Replace the runtime overrides (dynamic config from the controller); applies to the next scan. */
  applyOverrides(overrides: RuntimeOverrides): void;
  /** The overrides in force (what applyOverrides was last given). */
  overrides(): RuntimeOverrides;
  /** Threshold from the configuration alone (null: no threshold), ignoring runtime overrides. */
  configuredThreshold(action: string): number | null;
  /** Score from the configuration alone, ignoring runtime overrides; undefined for unknown symbols. */
  configuredScore(symbol: string): number | undefined;
}

const silentLogger: Logger = {
  debug() {},
  info() {},
  warn(msg, extra) {
    process.emitWarning(`${msg}${extra ? ` ${JSON.stringify(extra)}` : ''}`, 'MailsiftEngine');
  },
  error(msg, extra) {
    process.emitWarning(`${msg}${extra ? ` ${JSON.stringify(extra)}` : ''}`, 'MailsiftEngine');
  },
};

class EngineImpl implements Engine, EngineCore {
  readonly registry: Registry;
  readonly composites: readonly CompiledComposite[];
  // Not readonly: runtime overrides (applyOverrides) swap them; a task reads them once at start.
  baseActions: readonly ActionEntry[];
  baseRequiredScore: number;
  baseSpamLimit: number;
  readonly milterAttrs: Map<string, string>;
  readonly groupLimits: ReadonlyMap<string, GroupLimit>;
  readonly subjectTemplate: string;
  readonly taskTimeoutMs: number;
  readonly log: Logger;
  readonly defaultSettings: CompiledSettings;
  /** Set by createEngineWith right after construction (network calls of tasks). */
  net!: NetServices;
  readonly turns = new CpuTurns();
  readonly #resolver: SettingsResolver;
  readonly #errors = new Map<string, number>();
  readonly #config: EngineConfig;
  readonly #maps: MapRegistry;
  readonly #localModules: ReadonlySet<string>;
  readonly #scoreOverrides: ScoreOverrides;
  #overrides: RuntimeOverrides = {};
  #effectiveActions: EngineConfig['actions'];

  constructor(config: EngineConfig, registry: Registry, log: Logger, maps: MapRegistry, localModules: ReadonlySet<string>) {
    this.#config = config;
    this.#localModules = localModules;
    this.#maps = maps;
    this.#scoreOverrides = new ScoreOverrides(registry);
    this.#effectiveActions = config.actions;
    this.registry = registry;
    this.log = log;
    this.composites = compileComposites(registry);
    this.baseActions = buildBaseActions(config.actions);
    this.baseRequiredScore = requiredScore(this.baseActions);
    this.baseSpamLimit = spamLimit(this.baseActions);
    this.milterAttrs = milterAttributes(config.actions);
    const limits = new Map<string, GroupLimit>();
    for (const [name, g] of Object.entries(config.groups)) {
      if (g.maxScore !== undefined || g.minScore !== undefined) {
        const l: GroupLimit = {};
        if (g.maxScore !== undefined) l.maxScore = g.maxScore;
        if (g.minScore !== undefined) l.minScore = g.minScore;
        limits.set(name, l);
      }
    }
    this.groupLimits = limits;
    this.subjectTemplate = config.subjectTemplate || DEFAULT_SUBJECT_TEMPLATE;
    this.taskTimeoutMs = (config.taskTimeout > 0 ? config.taskTimeout : DEFAULT_TASK_TIMEOUT) * 1000;
    this.defaultSettings = defaultSettings(registry);
    this.#resolver = createSettingsResolver(registry, config.settings);
  }

  recordError(item: ItemInfo, err: unknown, messageId: string): void {
    this.#errors.set(item.name, (this.#errors.get(item.name) ?? 0) + 1);
    const e = err instanceof Error ? err : new Error(String(err));
    // A module that throws is a bug to fix (a failed check is a result, never an exception): the
    // line names module, symbol and message so it can be found, by an operator in /errors (the
    // text and `id` are what the ring keeps) and by the fuzzer in the log.
    this.log.error(`symbol callback failed: ${item.module}/${item.name}: ${e.name}: ${e.message}`, {
      symbol: item.name,
      module: item.module,
      messageId,
      id: messageId,
      error: e.message,
      errorName: e.name,
      stack: e.stack,
    });
  }

  async scan(message: Buffer, requestMeta: ScanMeta): Promise<ScanResult> {
    // A request without a client IP takes it from the top Received header before settings and
    // rules see it (received-client.ts); the message parsed for that is the scan's.
    const { meta, parsed } = clientFromMessage(requestMeta, message);
    // Selector conditions of settings rules read the message: parsed then, once, for the scan too.
    let early: SelectorTask | undefined;
    const lazy = (): SelectorTask => (early ??= messageTask(message, meta, undefined, parsed));
    const settings = this.#resolver.resolve(meta, (msg, extra) => this.log.warn(msg, extra), lazy) ?? this.defaultSettings;
    const task = new ScanTask(this, message, meta, settings);
    if (early) task.adoptMessage(early.message);
    else if (parsed) task.adoptMessage(parsed);
    try {
      await runScan(task);
    } catch (err) {
      // The scheduler contains callback failures; reaching here is an engine bug, still answered.
      // The item running when it failed, if any, is the first place to look.
      const item = task.runningItem;
      this.log.error('scan failed inside the engine', { error: (err as Error).message, stage: task.stage, ...(item ? { module: item.module, symbol: item.name } : {}), stack: (err as Error).stack });
    }
    const result = buildResult(task);
    if (requestMeta.ip === undefined && meta.ip !== undefined) result.clientIp = meta.ip;
    task.finished = true;
    task.abort('task finished');
    return result;
  }

  symbols(): SymbolListing[] {
    const out: SymbolListing[] = [];
    for (const s of this.registry.symbols.values()) {
      const itemsOff = s.items.length > 0 && s.items.every((i) => i.disabled || this.registry.disabledModules.has(i.module));
      const moduleOff = s.module !== undefined && this.registry.disabledModules.has(s.module);
      const l: SymbolListing = { name: s.name, score: s.score, group: s.group, disabled: s.disabled || itemsOff || moduleOff };
      if (s.description !== undefined) l.description = s.description;
      if (s.module !== undefined) l.module = s.module;
      out.push(l);
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  groups(): GroupListing[] {
    const out: GroupListing[] = [];
    for (const [name, g] of this.registry.groups) {
      const l: GroupListing = { name, symbols: [...g.symbols].sort() };
      if (g.description !== undefined) l.description = g.description;
      if (g.maxScore !== undefined) l.maxScore = g.maxScore;
      if (g.minScore !== undefined) l.minScore = g.minScore;
      out.push(l);
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  actions(): ActionListing[] {
    const out: ActionListing[] = this.baseActions.map((a) => {
      const l: ActionListing = { name: a.name, threshold: Number.isFinite(a.threshold) ? a.threshold : null };
      if (a.milter !== undefined) l.milter = a.milter;
      return l;
    });
    for (const [name, ac] of Object.entries(this.#effectiveActions)) {
      if (ac.threshold === null && !out.some((a) => a.name === name)) {
        const l: ActionListing = { name, threshold: null };
        if (ac.milter !== undefined) l.milter = ac.milter;
        out.push(l);
      }
    }
    return out;
  }

  errorCounts(): ReadonlyMap<string, number> {
    return this.#errors;
  }

  disabledModules(): ReadonlyMap<string, string> {
    return this.registry.disabledModules;
  }

  maps(): MapRegistry {
    return this.#maps;
  }

  endpoints(): readonly ModuleEndpoint[] {
    return this.registry.endpoints;
  }

  learners(): readonly Learner[] {
    return this.registry.learners;
  }

  isLocalModule(name: string): boolean {
    return this.#localModules.has(name);
  }

  applyOverrides(overrides: RuntimeOverrides): void {
    const st = actionState(this.#config.actions, overrides.actions);
    this.#scoreOverrides.apply(overrides.scores);
    this.#effectiveActions = st.actions;
    this.baseActions = st.baseActions;
    this.baseRequiredScore = st.baseRequiredScore;
    this.baseSpamLimit = st.baseSpamLimit;
    this.#overrides = overrides;
  }

  overrides(): RuntimeOverrides {
    return this.#overrides;
  }

  configuredThreshold(action: string): number | null {
    const st = actionState(this.#config.actions, undefined);
    const e = st.baseActions.find((a) => a.name === normaliseActionName(action));
    return e && Number.isFinite(e.threshold) ? e.threshold : null;
  }

  configuredScore(symbol: string): number | undefined {
    return this.#scoreOverrides.configuredScore(symbol);
  }
}

/** Build the engine: set up every module, seal the registry, compile composites and settings. */
export async function createEngineWith(config: EngineConfig, modules: ReadonlyArray<ModuleDefinition<any>>, options: EngineOptions = {}): Promise<Engine> { // eslint-disable-line @typescript-eslint/no-explicit-any -- modules carry heterogeneous config types
  const log = options.log ?? silentLogger;
  const maps = options.maps ?? createMapRegistry({ baseDir: process.cwd(), log });
  const localModules = options.localModules ?? new Set<string>();
  const registry = await Registry.build({ config, modules, log, maps, localModules, ...(options.stores ? { stores: options.stores } : {}) });
  const engine = new EngineImpl(config, registry, log, maps, localModules);
  engine.net = options.net ?? createNetServices({ ...(config.dns ? { dns: config.dns } : {}), log });
  return engine;
}

/** The EngineFactory of contract.ts; `options.log` is an extra the factory type does not require. */
export function createEngine(config: EngineConfig, modules: ReadonlyArray<ModuleDefinition<any>>, options?: EngineOptions): Promise<Engine> { // eslint-disable-line @typescript-eslint/no-explicit-any -- modules carry heterogeneous config types
  return createEngineWith(config, modules, options);
}

// Compile-time check that createEngine satisfies the shared contract.
const factoryCheck: EngineFactory = createEngine;
void factoryCheck;
