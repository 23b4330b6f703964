// The symbol registry: every module's symbol table merged with config overrides, every
// registered callback item with its stage, priority and resolved dependencies. Built once
// at engine start by calling each module's setup(); sealed afterwards so the scheduler can
// rely on fixed item ids and precomputed orders.

import { compileSelector } from '../selectors/index.js';
import type { ZodType } from 'zod';
import type {
  CompositeDef,
  Dependency,
  EndpointDef,
  Learner,
  Logger,
  ModuleContext,
  ModuleDefinition,
  ModuleMaps,
  Stage,
  SymbolDef,
  SymbolExpression,
  SymbolFlag,
  SymbolRegistration,
  SymbolTableEntry,
  Task,
} from '../plugin-api/index.js';
import { dataRecord, DEADLINE_PASSED, endpointProblem, STAGES, withDeadline } from '../plugin-api/index.js';
import { scanStores } from '../storage/types.js';
import type { EngineConfig, GroupConfig } from './contract.js';
import { EngineError } from './errors.js';
import { needsAsyncScope } from './net-scope.js';
import { compileSymbolExpression } from './symbol-expression.js';
import type { Stores } from '../storage/types.js';

/** Group name of symbols that declare none (Rspamd's pseudo group). */
export const UNGROUPED = 'ungrouped';
/** The reason a module gives `ctx.disable` when its configuration switches it off or leaves it nothing to do. */
export const OFF_BY_CONFIG = 'config';

export interface SymbolInfo {
  name: string;
  /** Configured weight; 0 when neither a module nor the config gives one. */
  score: number;
  group: string;
  description?: string;
  /** Repeated insertions keep the strongest value instead of accumulating. */
  oneShot: boolean;
  /** Disabled in config: never runs, never inserted. */
  disabled: boolean;
  module?: string;
  /** Callback items that may insert this symbol (its own item first when it is one). */
  items: ItemInfo[];
}

export interface ItemInfo {
  /** Dense index, stable after sealing; used for per-settings run masks. */
  id: number;
  name: string;
  module: string;
  stage: Stage;
  priority: number;
  flags: ReadonlySet<SymbolFlag>;
  /** Symbol names this item may insert (its own name included when it is a result symbol). */
  inserts: string[];
  deps: Dependency[];
  /** Resolved dependency item ids (same or earlier stage). */
  depIds: number[];
  hardDepIds: number[];
  /** Seconds; the item's own budget, capped by the task deadline. */
  timeout?: number;
  /** Runs when a pre-result was set or the reject score is already reached. */
  fine: boolean;
  /** The flags the scheduler tests for every item of every scan, read once here. */
  ignorePassthrough: boolean;
  runsOnEmpty: boolean;
  /** The callback gets a task view that attributes its network calls after an await (net-scope.ts). */
  asyncScope: boolean;
  /** Off for every task (config-disabled symbol, disabled module, missing hard dependency). */
  disabled: boolean;
  check(task: Task): void | Promise<void>;
}

/** A controller endpoint a module registered (ctx.endpoint). */
/** A user's plugin whose setup has not finished by then is switched off (a setup that never settles would hold start-up). */
export const PLUGIN_SETUP_TIMEOUT_MS = 30_000;

export interface ModuleEndpoint {
  module: string;
  plugin: string;
  /** A name under /plugins/{plugin}/, or an absolute path. */
  name: string;
  def: EndpointDef;
}

interface PendingItem {
  reg: SymbolRegistration;
  module: string;
}

export interface RegistryInput {
  config: EngineConfig;
  modules: ReadonlyArray<ModuleDefinition<unknown>>;
  log: Logger;
  /** Handed to modules as ctx.stores. */
  stores?: Stores;
  /** Handed to modules as ctx.maps. */
  maps: ModuleMaps;
  /**
   * Users' plugins (local.d/plugins): a mistake of theirs (a config the schema refuses, a symbol
   * another module registered, an unknown stage) switches that plugin off with the reason
   * instead of stopping the engine. A built-in module's mistake is a bug and still throws.
   */
  localModules?: ReadonlySet<string>;
}

export class Registry {
  readonly symbols = new Map<string, SymbolInfo>();
  readonly items: ItemInfo[] = [];
  readonly itemsByName = new Map<string, ItemInfo>();
  /** Items of each stage in execution order. */
  readonly stageOrder = new Map<Stage, ItemInfo[]>();
  readonly groups = new Map<string, GroupConfig & { symbols: string[] }>();
  readonly composites: CompositeDef[] = [];
  /** Module name → reason, for modules that switched themselves off. */
  readonly disabledModules = new Map<string, string>();
  /** Endpoints of every module whose setup completed (a module that disabled itself keeps them). */
  readonly endpoints: ModuleEndpoint[] = [];
  /** Learners of the modules that are on. */
  readonly learners: Learner[] = [];
  #sealed = false;

  get sealed(): boolean {
    return this.#sealed;
  }

  static async build(input: RegistryInput): Promise<Registry> {
    const reg = new Registry();
    await reg.#setupModules(input);
    reg.#applyConfig(input.config);
    reg.#seal(input.log);
    return reg;
  }

  async #setupModules({ config, modules, log, stores, maps, localModules }: RegistryInput): Promise<void> {
    const pending: PendingItem[] = [];
    const offByConfig: string[] = [];
    const pendingNames = new Map<string, string>();
    for (const mod of modules) {
      if (config.disabledModules.includes(mod.name)) {
        this.disabledModules.set(mod.name, 'disabled in config');
        log.info('module disabled in config', { module: mod.name });
        this.#addModuleSymbols(mod, mod.symbols);
        continue;
      }
      const local = localModules?.has(mod.name) === true;
      let modConfig: unknown;
      try {
        modConfig = validateModuleConfig(mod.name, mod.config, config.modules[mod.name]);
      } catch (err) {
        if (!local) throw err;
        const reason = `setup failed: ${(err as Error).message}`;
        this.disabledModules.set(mod.name, reason);
        log.error('plugin disabled', { module: mod.name, error: (err as Error).message });
        this.#addModuleSymbols(mod, mod.symbols);
        continue;
      }
      const mine: PendingItem[] = [];
      const myComposites: CompositeDef[] = [];
      // Names a module declares may come from its config (multimap `symbol:`): no prototype.
      const declared = dataRecord<SymbolDef>();
      const myEndpoints: ModuleEndpoint[] = [];
      const myLearners: Learner[] = [];
      let disabledReason: string | undefined;
      const registry = this;
      const open = (what: string): void => {
        if (registry.#sealed) throw new EngineError('ENGINE_SEALED', `module ${mod.name}: ${what} registered after setup (registry is sealed)`);
      };
      const ctx: ModuleContext<unknown> = {
        config: modConfig,
        log: moduleLogger(log, mod.name),
        hostname: config.hostname,
        // Modules run inside scans: they get the stores' scan view (calls bounded by the scan time-out).
        ...(stores ? { stores: scanStores(stores), learnStores: stores } : {}),
        maps,
        symbol(r: SymbolRegistration): void {
          if (registry.#sealed) {
            throw new EngineError('ENGINE_SEALED', `module ${mod.name}: symbol ${r.name} registered after setup (registry is sealed)`);
          }
          mine.push({ reg: r, module: mod.name });
        },
        composite(def: CompositeDef): void {
          if (registry.#sealed) {
            throw new EngineError('ENGINE_SEALED', `module ${mod.name}: composite ${def.name} registered after setup (registry is sealed)`);
          }
          myComposites.push(def);
        },
        declareSymbol(name: string, def: SymbolDef): void {
          if (registry.#sealed) {
            throw new EngineError('ENGINE_SEALED', `module ${mod.name}: symbol ${name} declared after setup (registry is sealed)`);
          }
          declared[name] = def;
        },
        disable(reason: string): void {
          disabledReason = reason;
        },
        symbolTable(): readonly SymbolTableEntry[] {
          if (!registry.#sealed) {
            throw new EngineError('ENGINE_NOT_SEALED', `module ${mod.name}: symbolTable() called during setup (call it from a callback)`);
          }
          return registry.#symbolTable();
        },
        endpoint(plugin: string, name: string, def: EndpointDef): void {
          open(`endpoint ${String(plugin)}/${String(name)}`);
          // A user's plugin is plain JavaScript at run time: its mistakes are named here.
          const problem = endpointProblem(plugin, name, def);
          if (problem) throw new EngineError('ENGINE_BAD_ENDPOINT', `module ${mod.name}: ${problem}`);
          myEndpoints.push({ module: mod.name, plugin, name, def });
        },
        learner(l: Learner): void {
          open(`learner ${String(l?.name)}`);
          if (typeof l?.name !== 'string' || typeof l.learn !== 'function') throw new EngineError('ENGINE_BAD_ENDPOINT', `module ${mod.name}: a learner needs a name and a learn function`);
          myLearners.push(l);
        },
        expression(text: string): SymbolExpression {
          open(`expression ${String(text)}`);
          return compileSymbolExpression(String(text), (group) => registry.groups.get(group)?.symbols);
        },
        selector(text, opts) {
          const maps = opts?.maps;
          return compileSelector(text, { hostname: config.hostname, map: (name) => (maps && Object.hasOwn(maps, name) ? maps[name] : undefined) });
        },
      };
      let threw = false;
      try {
        if (!local) await mod.setup(ctx);
        else if ((await withDeadline(Promise.resolve().then(() => mod.setup(ctx)), PLUGIN_SETUP_TIMEOUT_MS)) === DEADLINE_PASSED) {
          throw new Error(`setup did not finish within ${PLUGIN_SETUP_TIMEOUT_MS / 1000} s`);
        }
      } catch (err) {
        threw = true;
        const message = (err as Error)?.message ?? String(err);
        disabledReason = `setup failed: ${message}`;
        log.error('module setup failed', { module: mod.name, error: message });
      }
      // A plugin's symbols are checked against the others' now, so a clash disables the plugin
      // (the built-ins' clashes still throw below, in #addItem).
      const clash = local && !threw ? itemProblem(mine, pendingNames) : undefined;
      if (clash) {
        threw = true;
        disabledReason = `setup failed: ${clash}`;
        log.error('module setup failed', { module: mod.name, error: clash });
      }
      if (!threw) this.endpoints.push(...myEndpoints);
      this.#addModuleSymbols(mod, mod.symbols);
      this.#addModuleSymbols(mod, declared);
      if (disabledReason !== undefined) {
        this.disabledModules.set(mod.name, disabledReason);
        // Off by configuration is the normal state of several modules (their defaults): one info
        // line below lists them; any other reason is a problem worth a warning of its own.
        if (disabledReason === OFF_BY_CONFIG) offByConfig.push(mod.name);
        else log.warn('module disabled', { module: mod.name, reason: disabledReason });
        continue;
      }
      pending.push(...mine);
      for (const p of mine) pendingNames.set(p.reg.name, p.module);
      this.composites.push(...myComposites);
      this.learners.push(...myLearners);
    }
    for (const p of pending) this.#addItem(p);
    if (offByConfig.length > 0) log.info(`modules off by configuration: ${offByConfig.join(', ')}`, { modules: offByConfig });
  }

  #addModuleSymbols(mod: ModuleDefinition<unknown>, symbols: Readonly<Record<string, SymbolDef>> | undefined): void {
    if (!symbols) return;
    for (const [name, def] of Object.entries(symbols)) {
      const info = this.#symbol(name);
      info.module ??= mod.name;
      if (def.score !== undefined) info.score = def.score;
      if (def.group !== undefined) info.group = def.group;
      if (def.description !== undefined) info.description = def.description;
      if (def.oneShot === false) info.oneShot = false;
    }
  }

  #symbol(name: string): SymbolInfo {
    let info = this.symbols.get(name);
    if (!info) {
      info = { name, score: 0, group: UNGROUPED, oneShot: true, disabled: false, items: [] };
      this.symbols.set(name, info);
    }
    return info;
  }

  #addItem({ reg, module }: PendingItem): void {
    if (this.itemsByName.has(reg.name)) {
      throw new EngineError('ENGINE_DUPLICATE_SYMBOL', `module ${module}: symbol ${reg.name} is already registered by module ${this.itemsByName.get(reg.name)!.module}`);
    }
    const stage = reg.stage ?? 'filters';
    if (!STAGES.includes(stage)) {
      throw new EngineError('ENGINE_BAD_STAGE', `module ${module}: symbol ${reg.name} has unknown stage ${String(stage)}`);
    }
    const inserts = [...(reg.inserts ?? [])];
    // A callback whose name is a known result symbol inserts itself; ghost-only stages do not score.
    if (!inserts.includes(reg.name) && (this.symbols.has(reg.name) || inserts.length === 0) && stage === 'filters') {
      inserts.unshift(reg.name);
    }
    const flags = new Set(reg.flags ?? []);
    const item: ItemInfo = {
      id: this.items.length,
      name: reg.name,
      module,
      stage,
      priority: reg.priority ?? 0,
      flags,
      inserts,
      deps: (reg.deps ?? []).map((d) => (typeof d === 'string' ? { name: d } : d)),
      depIds: [],
      hardDepIds: [],
      fine: false,
      ignorePassthrough: flags.has('ignore_passthrough'),
      runsOnEmpty: flags.has('empty'),
      asyncScope: needsAsyncScope(flags, reg.check),
      disabled: false,
      check: reg.check,
    };
    if (reg.timeout !== undefined) item.timeout = reg.timeout;
    this.items.push(item);
    this.itemsByName.set(item.name, item);
    for (const s of inserts) this.#symbol(s).items.push(item);
  }

  #applyConfig(config: EngineConfig): void {
    for (const [name, sc] of Object.entries(config.symbols)) {
      const info = this.#symbol(name);
      if (sc.score !== undefined) info.score = sc.score;
      if (sc.group !== undefined) info.group = sc.group;
      if (sc.description !== undefined) info.description = sc.description;
      if (sc.disabled) info.disabled = true;
    }
    this.composites.push(...config.composites);
    for (const c of this.composites) {
      const info = this.#symbol(c.name);
      // Config symbol overrides win over the composite's own defaults.
      const override = config.symbols[c.name];
      if (override?.score === undefined && c.score !== undefined) info.score = c.score;
      if (override?.group === undefined) info.group = c.group ?? 'composite';
      if (override?.description === undefined) info.description = c.description ?? c.expression;
      info.oneShot = true;
    }
    for (const [name, g] of Object.entries(config.groups)) this.groups.set(name, { ...g, symbols: [] });
    for (const info of this.symbols.values()) {
      let g = this.groups.get(info.group);
      if (!g) {
        g = { symbols: [] };
        this.groups.set(info.group, g);
      }
      g.symbols.push(info.name);
    }
  }

  #seal(log: Logger): void {
    for (const item of this.items) {
      for (const dep of item.deps) {
        const target = this.itemsByName.get(dep.name) ?? this.symbols.get(dep.name)?.items[0];
        if (!target) {
          if (!dep.weak) {
            item.disabled = true;
            log.warn('hard dependency on an unknown symbol: symbol disabled', { symbol: item.name, dependency: dep.name });
          }
          continue;
        }
        if (STAGES.indexOf(target.stage) > STAGES.indexOf(item.stage)) {
          log.warn('dependency on a later stage ignored', { symbol: item.name, dependency: dep.name });
          continue;
        }
        if (target === item) continue;
        item.depIds.push(target.id);
        if (!dep.weak) item.hardDepIds.push(target.id);
      }
      const insertedInfos = item.inserts.map((s) => this.symbols.get(s)!);
      if (this.symbols.get(item.name)?.disabled || (insertedInfos.length > 0 && insertedInfos.every((s) => s.disabled))) {
        item.disabled = true;
      }
      // Negative (good) symbols are `fine` in Rspamd: they still run after an early exit.
      item.fine = item.flags.has('fine') || insertedInfos.some((s) => s.score < 0);
    }
    for (const stage of STAGES) this.stageOrder.set(stage, this.#orderStage(stage));
    // Cascade static disabling through hard dependencies (orders are topological).
    for (const stage of STAGES) {
      for (const item of this.stageOrder.get(stage)!) {
        if (!item.disabled && item.hardDepIds.some((id) => this.items[id]!.disabled)) item.disabled = true;
      }
    }
    this.#sealed = true;
  }

  #table: SymbolTableEntry[] | undefined;

  /** What ModuleContext.symbolTable() returns; built once, after sealing. */
  #symbolTable(): SymbolTableEntry[] {
    if (this.#table) return this.#table;
    const composites = new Set(this.composites.map((c) => c.name));
    const out: SymbolTableEntry[] = [];
    for (const s of this.symbols.values()) {
      const flags = new Set<SymbolFlag>();
      const stages = new Set<Stage>();
      for (const i of s.items) {
        for (const f of i.flags) flags.add(f);
        stages.add(i.stage);
      }
      const moduleOff = s.module !== undefined && this.disabledModules.has(s.module);
      const itemsOff = s.items.length > 0 && s.items.every((i) => i.disabled || this.disabledModules.has(i.module));
      out.push({ name: s.name, score: s.score, group: s.group, composite: composites.has(s.name), disabled: s.disabled || moduleOff || itemsOff, flags: [...flags], stages: [...stages] });
    }
    out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#table = out;
    return out;
  }

  /** Topological order inside one stage, ties broken by priority then registration order. */
  #orderStage(stage: Stage): ItemInfo[] {
    const items = this.items.filter((i) => i.stage === stage);
    // Rspamd: prefilters/connfilters/filters highest priority first; postfilters/idempotent lowest first.
    const ascending = stage === 'postfilters' || stage === 'idempotent';
    const cmp = (a: ItemInfo, b: ItemInfo): number =>
      (ascending ? a.priority - b.priority : b.priority - a.priority) || a.id - b.id;
    const inStage = new Set(items.map((i) => i.id));
    const indegree = new Map<number, number>();
    const dependents = new Map<number, ItemInfo[]>();
    for (const i of items) {
      const local = i.depIds.filter((d) => inStage.has(d));
      indegree.set(i.id, local.length);
      for (const d of local) {
        const list = dependents.get(d) ?? [];
        list.push(i);
        dependents.set(d, list);
      }
    }
    const ready = items.filter((i) => indegree.get(i.id) === 0);
    const out: ItemInfo[] = [];
    while (ready.length > 0) {
      ready.sort(cmp);
      const next = ready.shift()!;
      out.push(next);
      for (const dep of dependents.get(next.id) ?? []) {
        const n = indegree.get(dep.id)! - 1;
        indegree.set(dep.id, n);
        if (n === 0) ready.push(dep);
      }
    }
    if (out.length !== items.length) {
      const cyclic = items.filter((i) => indegree.get(i.id)! > 0).map((i) => `${i.name} (${i.module})`);
      throw new EngineError('ENGINE_DEPENDENCY_CYCLE', `dependency cycle in stage ${stage} between: ${cyclic.join(', ')}`);
    }
    return out;
  }
}

/** A module's registrations that #addItem would refuse: a name taken, an unknown stage. */
function itemProblem(mine: readonly PendingItem[], taken: ReadonlyMap<string, string>): string | undefined {
  const own = new Set<string>();
  for (const { reg } of mine) {
    if (typeof reg?.name !== 'string' || reg.name === '') return 'a symbol registration has no name';
    if (typeof reg.check !== 'function') return `symbol ${reg.name}: check is not a function`;
    const other = taken.get(reg.name);
    if (other !== undefined || own.has(reg.name)) return `symbol ${reg.name} is already registered by module ${other ?? 'this one'}`;
    own.add(reg.name);
    if (reg.stage !== undefined && !STAGES.includes(reg.stage)) return `symbol ${reg.name} has unknown stage ${String(reg.stage)} (one of: ${STAGES.join(', ')})`;
  }
  return undefined;
}

/** A module's logger: every line names the module (`configtest` blames the module's file by it). */
function moduleLogger(log: Logger, module: string): Logger {
  const tag = (extra?: Record<string, unknown>): Record<string, unknown> => ({ module, ...extra });
  return {
    debug: (msg, extra) => log.debug(msg, tag(extra)),
    info: (msg, extra) => log.info(msg, tag(extra)),
    warn: (msg, extra) => log.warn(msg, tag(extra)),
    error: (msg, extra) => log.error(msg, tag(extra)),
  };
}

/** Validate a module's config with its schema; defaults come from the schema. */
export function validateModuleConfig(module: string, schema: ZodType<unknown> | undefined, raw: Record<string, unknown> | undefined): unknown {
  if (!schema) return raw ?? {};
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const key = first && first.path.length > 0 ? first.path.map(String).join('.') : '(root)';
  const all = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new EngineError('ENGINE_MODULE_CONFIG', `module ${module}: invalid config at key ${key}: ${all}`);
}
