// Runtime overrides of action thresholds and symbol scores (the controller's /saveactions and
// /savesymbols, applied by every worker without a restart). An override set always replaces
// the previous one whole, so applying the same set twice is harmless and a worker that missed
// a revision catches up by applying the latest.

import { buildBaseActions, normaliseActionName, requiredScore, spamLimit, type ActionEntry } from './actions.js';
import type { ActionConfig } from './contract.js';
import { dataRecord } from '../core/records.js';
import type { Registry } from './registry.js';

export interface RuntimeOverrides {
  /** Wire action name → threshold, or null: the action has no threshold (disabled). */
  actions?: Record<string, number | null>;
  /** Symbol → score. Unknown symbols are ignored. */
  scores?: Record<string, number>;
}

export interface ActionState {
  actions: Record<string, ActionConfig>;
  baseActions: ActionEntry[];
  baseRequiredScore: number;
  baseSpamLimit: number;
}

/** The configured actions with the overrides laid over them, and what the scheduler derives from them. */
export function actionState(configured: Record<string, ActionConfig>, overrides: Record<string, number | null> | undefined): ActionState {
  // Action names are config and saved-store keys: no prototype (records.ts).
  const actions = dataRecord<ActionConfig>();
  for (const [name, ac] of Object.entries(configured)) actions[normaliseActionName(name)] = ac;
  for (const [raw, threshold] of Object.entries(overrides ?? {})) {
    const name = normaliseActionName(raw);
    const prev = actions[name];
    actions[name] = prev?.milter !== undefined ? { threshold, milter: prev.milter } : { threshold };
  }
  const baseActions = buildBaseActions(actions);
  return { actions, baseActions, baseRequiredScore: requiredScore(baseActions), baseSpamLimit: spamLimit(baseActions) };
}

/**
 * Score overrides mutate the registry's SymbolInfo (what scoring reads at insert time); the
 * configured scores are remembered so a later set that drops a symbol restores it.
 */
export class ScoreOverrides {
  readonly #configured = new Map<string, number>();

  constructor(private readonly registry: Registry) {}

  configuredScore(name: string): number | undefined {
    return this.#configured.get(name) ?? this.registry.symbols.get(name)?.score;
  }

  apply(scores: Record<string, number> | undefined): void {
    for (const [name, score] of this.#configured) {
      const info = this.registry.symbols.get(name);
      if (info) info.score = score;
    }
    this.#configured.clear();
    for (const [name, score] of Object.entries(scores ?? {})) {
      const info = this.registry.symbols.get(name);
      if (!info || !Number.isFinite(score)) continue;
      this.#configured.set(name, info.score);
      info.score = score;
    }
  }
}
