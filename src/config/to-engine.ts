// Converts the validated config document into the engine's contract (src/engine/contract.ts):
// wire action names, flat symbol overrides, composite and settings lists.

import type { ActionConfig, EngineConfig, GroupConfig, SettingsRule, SymbolConfig } from '../engine/contract.js';
import type { CompositeDef } from '../plugin-api/index.js';
import { ACTION_KEY_ALIASES, type GroupsValue, type MainConfigValue, type SymbolSettingsValue } from './schema.js';

/** Rspamd 3.4's default thresholds and rewrite-subject template. */
export const DEFAULT_ACTIONS: Readonly<Record<string, number>> = { reject: 15, 'add header': 6, greylist: 4 };
export const DEFAULT_SUBJECT_TEMPLATE = '*** SPAM *** %s';

type ActionValue = number | null | { threshold?: number | null; score?: number | null; milter?: string };

function toAction(v: ActionValue): ActionConfig {
  if (v === null || typeof v === 'number') return { threshold: v };
  const out: ActionConfig = { threshold: v.threshold ?? v.score ?? null };
  if (v.milter) out.milter = v.milter;
  return out;
}

export function engineActions(actions: MainConfigValue['actions']): Record<string, ActionConfig> {
  const out: Record<string, ActionConfig> = {};
  for (const [name, threshold] of Object.entries(DEFAULT_ACTIONS)) out[name] = { threshold };
  for (const [key, value] of Object.entries(actions)) {
    const wire = ACTION_KEY_ALIASES[key];
    if (wire === undefined || value === undefined) continue; // `subject` and absent keys
    out[wire] = toAction(value as ActionValue);
  }
  return out;
}

function symbolConfig(v: SymbolSettingsValue): SymbolConfig {
  return typeof v === 'number' ? { score: v } : { ...v };
}

/** groups.yaml first, mailsift.yaml's `groups` over it (per group, per symbol). */
export function mergeGroups(shipped: GroupsValue, main: GroupsValue): GroupsValue {
  const out: GroupsValue = { ...shipped };
  for (const [name, g] of Object.entries(main)) {
    const base = out[name];
    out[name] = base ? { ...base, ...g, symbols: { ...base.symbols, ...g.symbols } } : g;
  }
  return out;
}

export function toEngineConfig(
  main: MainConfigValue,
  groups: GroupsValue,
  modules: Record<string, Record<string, unknown>>,
  disabledModules: string[],
  hostname: string,
): EngineConfig {
  const groupConfigs: Record<string, GroupConfig> = {};
  const symbols: Record<string, SymbolConfig> = {};
  for (const [name, g] of Object.entries(groups)) {
    const gc: GroupConfig = {};
    if (g.description !== undefined) gc.description = g.description;
    if (g.max_score !== undefined) gc.maxScore = g.max_score;
    if (g.min_score !== undefined) gc.minScore = g.min_score;
    if (g.public !== undefined) gc.public = g.public;
    groupConfigs[name] = gc;
    for (const [sym, s] of Object.entries(g.symbols ?? {})) symbols[sym] = { group: name, ...symbolConfig(s) };
  }
  for (const [sym, s] of Object.entries(main.symbols)) symbols[sym] = { ...symbols[sym], ...symbolConfig(s) };

  const composites: CompositeDef[] = Object.entries(main.composites).map(([name, c]) => ({ name, ...c }));

  const settings: SettingsRule[] = Object.entries(main.settings).map(([id, r]) => {
    const rule: SettingsRule = { id, priority: r.priority, apply: r.apply as Record<string, unknown> };
    const cond: NonNullable<SettingsRule['conditions']> = {};
    if (r.ip) cond.ip = r.ip;
    if (r.from) cond.from = r.from;
    if (r.rcpt) cond.rcpt = r.rcpt;
    if (r.user) cond.user = r.user;
    if (r.authenticated !== undefined) cond.authenticated = r.authenticated;
    if (r.request_header) cond.requestHeader = r.request_header;
    if (r.selector?.length) cond.selector = r.selector;
    if (Object.keys(cond).length) rule.conditions = cond;
    return rule;
  });

  return {
    actions: engineActions(main.actions),
    subjectTemplate: main.actions.subject ?? DEFAULT_SUBJECT_TEMPLATE,
    groups: groupConfigs,
    symbols,
    composites,
    settings,
    taskTimeout: main.workers.normal.task_timeout,
    modules,
    disabledModules: [...new Set([...main.disabled_modules, ...disabledModules])],
    hostname,
    dns: {
      ...(main.dns.nameserver ? { servers: [...main.dns.nameserver] } : {}),
      timeout: main.dns.timeout,
      retransmits: main.dns.retransmits,
      maxRequests: main.dns.max_requests,
      cacheSize: main.dns.cache_size,
    },
  };
}
