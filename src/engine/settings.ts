// Settings: an apply object from the `Settings` header,
// a configured rule chosen by `Settings-ID`, or the legacy maxscore/softscore, compiled into
// what the scheduler and the scoring need: which items run, which symbols may be inserted,
// score and action overrides, and the reply extras. Configured rules are compiled once.

import type { MilterReply, ScanMeta } from '../plugin-api/index.js';
import { setOwn } from '../core/records.js';
import type { SettingsRule } from './contract.js';
import type { Registry } from './registry.js';
import { compileConditionalRules, LOW_SETTINGS_PRIORITY, matchRule } from './settings-match.js';
import { messageTask, type SelectorTask } from '../selectors/index.js';
import { settingsMilterPatch } from './task-milter.js';

export interface InsertedSymbol {
  name: string;
  weight: number;
  options?: string[];
}

export interface CompiledSettings {
  /** Settings-ID of the configured rule, when one applied. */
  id?: string;
  whitelist: boolean;
  /** Action overrides in the order given (null: disabled). */
  actions: Array<[string, number | null]>;
  scores: Map<string, number> | null;
  /** Per item id: 1 = runs for this task. */
  run: Uint8Array;
  /** Symbols that may be inserted; null = every symbol not in `denied`. */
  allowed: Set<string> | null;
  denied: Set<string> | null;
  subject?: string;
  messages?: Record<string, string>;
  addHeaders?: MilterReply['add_headers'];
  removeHeaders?: MilterReply['remove_headers'];
  /** Envelope instructions of the apply's `milter` object (a mailsift extension), checked. */
  milter?: MilterReply;
  flags: string[];
  symbols: InsertedSymbol[];
  plugins?: Record<string, Record<string, unknown>>;
}

/** Keys of the apply object with a meaning; any other numeric key is a legacy score. */
const APPLY_KEYS = new Set([
  'actions',
  'scores',
  'symbols_enabled',
  'symbols_disabled',
  'groups_enabled',
  'groups_disabled',
  'policy',
  'whitelist',
  'want_spam',
  'flags',
  'symbols',
  'subject',
  'messages',
  'add_headers',
  'remove_headers',
  'milter',
  'variables',
  'plugins',
  'default',
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string') return [v];
  if (isObject(v)) return Object.keys(v);
  return [];
}

/** The default run mask: every item not statically disabled. */
export function defaultSettings(registry: Registry): CompiledSettings {
  const run = new Uint8Array(registry.items.length);
  for (const item of registry.items) run[item.id] = item.disabled ? 0 : 1;
  return { whitelist: false, actions: [], scores: null, run, allowed: null, denied: null, flags: [], symbols: [] };
}

export function compileSettings(registry: Registry, rawApply: Record<string, unknown>, id?: string): CompiledSettings {
  const apply = isObject(rawApply.default) ? rawApply.default : rawApply;
  const out = defaultSettings(registry);
  if (id !== undefined) out.id = id;
  out.whitelist = apply.whitelist === true || apply.want_spam === true;

  if (isObject(apply.actions)) {
    for (const [name, v] of Object.entries(apply.actions)) {
      if (v === null) out.actions.push([name, null]);
      else if (typeof v === 'number' && Number.isFinite(v)) out.actions.push([name, v]);
    }
  }

  const scores = new Map<string, number>();
  for (const [k, v] of Object.entries(apply)) if (!APPLY_KEYS.has(k) && typeof v === 'number') scores.set(k, v);
  if (isObject(apply.scores)) for (const [k, v] of Object.entries(apply.scores)) if (typeof v === 'number') scores.set(k, v);
  if (isObject(apply.symbols_enabled)) {
    for (const [k, v] of Object.entries(apply.symbols_enabled)) if (typeof v === 'number') scores.set(k, v);
  }
  if (scores.size > 0) out.scores = scores;

  applyEnableDisable(registry, apply, out);

  if (typeof apply.subject === 'string') out.subject = apply.subject;
  // Keys below come from the request (a Settings header): own properties even for `__proto__`
  // (records.ts), which plain assignment would turn into the record's prototype.
  if (isObject(apply.messages)) {
    const messages: Record<string, string> = {};
    for (const [k, v] of Object.entries(apply.messages)) if (typeof v === 'string') setOwn(messages, k, v);
    out.messages = messages;
  }
  if (isObject(apply.add_headers)) out.addHeaders = apply.add_headers as MilterReply['add_headers'];
  if (isObject(apply.remove_headers)) out.removeHeaders = apply.remove_headers as MilterReply['remove_headers'];
  if (isObject(apply.milter)) {
    // Values a milter cannot send are left out here, once; a request's Settings header is hostile.
    const { patch } = settingsMilterPatch(apply.milter);
    if (Object.keys(patch).length > 0) out.milter = patch;
  }
  out.flags = stringList(apply.flags);
  out.symbols = insertedSymbols(apply.symbols);
  if (isObject(apply.plugins)) {
    const plugins: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(apply.plugins)) if (isObject(v)) setOwn(plugins, k, v);
    out.plugins = plugins;
  }
  return out;
}

function insertedSymbols(v: unknown): InsertedSymbol[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string').map((name) => ({ name, weight: 1 }));
  if (!isObject(v)) return [];
  const out: InsertedSymbol[] = [];
  for (const [name, spec] of Object.entries(v)) {
    if (typeof spec === 'number') out.push({ name, weight: spec });
    else if (isObject(spec)) {
      const s: InsertedSymbol = { name, weight: typeof spec.score === 'number' ? spec.score : 1 };
      const opts = stringList(spec.options);
      if (opts.length > 0) s.options = opts;
      out.push(s);
    } else out.push({ name, weight: 1 });
  }
  return out;
}

/** As Rspamd applies them: symbols/groups enabled (restrictive unless implicit_allow), then disabled. */
function applyEnableDisable(registry: Registry, apply: Record<string, unknown>, out: CompiledSettings): void {
  const implicitAllow = apply.policy === 'implicit_allow';
  const symbolsEnabled = apply.symbols_enabled !== undefined ? stringList(apply.symbols_enabled) : undefined;
  const groupsEnabled = apply.groups_enabled !== undefined ? stringList(apply.groups_enabled) : undefined;
  const denied = new Set<string>();
  for (const s of stringList(apply.symbols_disabled)) denied.add(s);
  for (const g of stringList(apply.groups_disabled)) for (const s of registry.groups.get(g)?.symbols ?? []) denied.add(s);

  const run = out.run;
  if ((symbolsEnabled || groupsEnabled) && !implicitAllow) {
    const allowed = new Set<string>(symbolsEnabled ?? []);
    for (const g of groupsEnabled ?? []) for (const s of registry.groups.get(g)?.symbols ?? []) allowed.add(s);
    for (const item of registry.items) {
      if (item.flags.has('explicit_disable')) {
        allowed.add(item.name);
        for (const s of item.inserts) allowed.add(s);
      }
    }
    for (const item of registry.items) {
      const wanted = allowed.has(item.name) || item.inserts.some((s) => allowed.has(s));
      run[item.id] = !item.disabled && wanted ? 1 : 0;
    }
    out.allowed = allowed;
  }
  if (denied.size > 0) {
    const explicitlyOff = new Set<number>();
    for (const item of registry.items) {
      const off = denied.has(item.name) && (item.inserts.length === 0 || item.inserts.every((s) => denied.has(s) || s === item.name));
      const allInsertsOff = item.inserts.length > 0 && item.inserts.every((s) => denied.has(s));
      if (off || allInsertsOff) {
        run[item.id] = 0;
        explicitlyOff.add(item.id);
      }
    }
    // Hard dependents of an explicitly disabled item are disabled too (stage orders are topological).
    for (const items of registry.stageOrder.values()) {
      for (const item of items) {
        if (item.hardDepIds.some((d) => explicitlyOff.has(d))) {
          run[item.id] = 0;
          explicitlyOff.add(item.id);
        }
      }
    }
    out.denied = denied;
  }
}

/** Is `name` insertable under these settings (config-disabled symbols are checked by the caller)? */
export function symbolAllowed(s: CompiledSettings, name: string): boolean {
  if (s.denied?.has(name)) return false;
  if (s.allowed && !s.allowed.has(name)) return false;
  return true;
}

export interface SettingsResolver {
  /** The settings for one request, or undefined for the defaults. Logs unknown ids. */
  /**
   * `task` gives the message to selector conditions; it is called only when one is evaluated
   * (the engine then hands the parsed message on to the scan).
   */
  resolve(meta: ScanMeta, warn: (msg: string, extra: Record<string, unknown>) => void, task?: () => SelectorTask): CompiledSettings | undefined;
}

/**
 * 3.4 precedence: a `Settings` object wins and drops any Settings-ID; otherwise the ID's rule
 * applies, with maxscore/softscore merged under it (the ID wins); otherwise maxscore/softscore.
 */
export function createSettingsResolver(registry: Registry, rules: readonly SettingsRule[]): SettingsResolver {
  const byId = new Map<string, { rule: SettingsRule; compiled: CompiledSettings }>();
  for (const rule of rules) byId.set(rule.id, { rule, compiled: compileSettings(registry, rule.apply, rule.id) });
  const conditional = compileConditionalRules(rules);
  return {
    resolve(meta, warn, task) {
      const legacy = legacyActions(meta);
      const hit = meta.settingsId !== undefined ? byId.get(meta.settingsId) : undefined;
      if (conditional.length > 0) {
        // A matching rule wins over request settings only with a higher priority.
        const floor = meta.settings || legacy ? LOW_SETTINGS_PRIORITY : hit ? hit.rule.priority ?? LOW_SETTINGS_PRIORITY : -Infinity;
        const matched = matchRule(conditional, meta, floor, task ?? (() => messageTask(Buffer.alloc(0), meta)));
        if (matched) return byId.get(matched.id)!.compiled;
      }
      if (meta.settings) return compileSettings(registry, meta.settings);
      if (meta.settingsId !== undefined) {
        if (!hit) {
          warn('unknown settings id: scanning with defaults', { settingsId: meta.settingsId });
        } else if (!legacy) {
          return hit.compiled;
        } else {
          const apply = isObject(hit.rule.apply.default) ? hit.rule.apply.default : hit.rule.apply;
          const actions = { ...legacy, ...(isObject(apply.actions) ? apply.actions : {}) };
          return compileSettings(registry, { ...apply, actions }, hit.rule.id);
        }
      }
      if (legacy) return compileSettings(registry, { actions: legacy });
      return undefined;
    },
  };
}

function legacyActions(meta: ScanMeta): Record<string, number> | undefined {
  if (meta.maxScore === undefined) return undefined;
  const a: Record<string, number> = { reject: meta.maxScore };
  if (meta.softScore !== undefined) a['add header'] = meta.softScore;
  return a;
}
