// Actions and thresholds: the per-task action list,
// the required score, and selecting the action from the score and the pre-results.

import type { ActionName, PreResult } from '../plugin-api/index.js';
import { dataRecord } from '../core/records.js';
import { normaliseActionName } from '../core/action-names.js';
import type { ActionConfig } from './contract.js';

/** Rspamd's stock thresholds, used for actions the config does not mention. */
export const DEFAULT_ACTIONS: Readonly<Record<string, ActionConfig>> = {
  reject: { threshold: 15 },
  'add header': { threshold: 6 },
  greylist: { threshold: 4 },
};

/** Pre-result priority when the producer gives none (Rspamd NORMAL). */
export const DEFAULT_PRE_RESULT_PRIORITY = 1;

export interface ActionEntry {
  name: string;
  /** NaN: no threshold. */
  threshold: number;
  disabled: boolean;
  /** Never chosen by score (soft reject). */
  noThreshold: boolean;
  /** Not a spam action: ignored for required_score and score selection (no action). */
  ham: boolean;
  /** `discard` / `quarantine` for actions configured with a milter attribute. */
  milter?: string;
}

export { normaliseActionName };

function makeEntry(name: string, threshold: number, milter?: string): ActionEntry {
  const e: ActionEntry = {
    name,
    threshold,
    disabled: false,
    noThreshold: name === 'soft reject',
    ham: name === 'no action',
  };
  if (milter !== undefined) e.milter = milter;
  return e;
}

/**
 * The configured action list, sorted by threshold (Rspamd keeps NaN first). Actions configured
 * with a null threshold are left out: a settings object that enables one appends it, which is
 * what makes 3.4's `required_score` report the action the settings touched last.
 */
export function buildBaseActions(config: Record<string, ActionConfig>): ActionEntry[] {
  // Action names are config and saved-store keys: no prototype (records.ts).
  const merged = Object.assign(dataRecord<ActionConfig>(), DEFAULT_ACTIONS);
  for (const [name, ac] of Object.entries(config)) merged[normaliseActionName(name)] = ac;
  const out: ActionEntry[] = [];
  for (const [name, ac] of Object.entries(merged)) {
    if (ac.threshold === null) continue;
    out.push(makeEntry(name, ac.threshold, ac.milter));
  }
  return out.sort((a, b) => a.threshold - b.threshold);
}

/** Milter attributes of every configured action, including threshold-less ones. */
export function milterAttributes(config: Record<string, ActionConfig>): Map<string, string> {
  const m = new Map<string, string>();
  for (const [name, ac] of Object.entries(config)) if (ac.milter) m.set(normaliseActionName(name), ac.milter);
  return m;
}

/** Apply settings `actions` overrides (number: threshold, null: disabled) on a copy of the list. */
export function applyActionOverrides(base: readonly ActionEntry[], overrides: ReadonlyArray<[string, number | null]>, milter: Map<string, string>): ActionEntry[] {
  const list = base.map((e) => ({ ...e }));
  for (const [rawName, value] of overrides) {
    const name = normaliseActionName(rawName);
    let entry = list.find((e) => e.name === name);
    if (!entry) {
      entry = makeEntry(name, NaN, milter.get(name));
      list.push(entry);
    }
    if (value === null) {
      entry.disabled = true;
    } else {
      entry.disabled = false;
      entry.threshold = value;
    }
  }
  return list;
}

function scoring(e: ActionEntry): boolean {
  return !e.disabled && !e.noThreshold && !e.ham && Number.isFinite(e.threshold);
}

/** Threshold of the last spam action in the list; 0 when every one is disabled. */
export function requiredScore(list: readonly ActionEntry[]): number {
  for (let i = list.length - 1; i >= 0; i--) {
    const e = list[i]!;
    if (scoring(e)) return e.threshold;
  }
  return 0;
}

/** Enabled actions with a threshold, highest first. */
export function thresholds(list: readonly ActionEntry[]): Array<[ActionName, number]> {
  return list
    .filter(scoring)
    .sort((a, b) => b.threshold - a.threshold)
    .map((e): [ActionName, number] => [e.name, e.threshold]);
}

export function findAction(list: readonly ActionEntry[], name: string): ActionEntry | undefined {
  for (const e of list) if (e.name === name) return e;
  return undefined;
}

/** An action a pre-result may ask for: known to the task and not disabled by settings. */
export function actionUsable(list: readonly ActionEntry[], name: string): boolean {
  const e = findAction(list, name);
  if (e) return !e.disabled;
  return name === 'no action' || name === 'soft reject' || name === 'rewrite subject' || name === 'discard' || name === 'quarantine';
}

export interface Selection {
  action: ActionName;
  score: number;
  /** The non-least pre-result that decided, if any. */
  passthrough?: PreResult;
  entry?: ActionEntry;
}

/** Action selection as Rspamd 3.4 does it. Pre-results must be sorted by priority, highest first. */
export function selectAction(list: readonly ActionEntry[], score: number, preResults: readonly PreResult[]): Selection {
  let maxScore = -Infinity;
  let least: ActionEntry | undefined;
  let leastName: string | undefined;
  let seenLeast = false;
  for (const pr of preResults) {
    const name = normaliseActionName(pr.action);
    const entry = findAction(list, name);
    if (entry?.disabled) continue;
    if (seenLeast && pr.least) continue;
    if (!pr.least) {
      let s = pr.score ?? (entry && Number.isFinite(entry.threshold) ? entry.threshold : NaN);
      if (!Number.isNaN(s)) {
        if (name === 'no action') s = Math.min(s, score);
        score = s;
      }
      const sel: Selection = { action: name, score, passthrough: pr };
      if (entry) sel.entry = entry;
      return sel;
    }
    seenLeast = true;
    least = entry;
    leastName = name;
    if (pr.score === undefined) {
      if (entry && !entry.noThreshold && Number.isFinite(entry.threshold)) maxScore = entry.threshold;
    } else {
      maxScore = pr.score;
    }
  }
  let selected: ActionEntry | undefined;
  let best = maxScore;
  for (const e of list) {
    if (!scoring(e)) continue;
    if (score >= e.threshold && e.threshold > best) {
      selected = e;
      best = e.threshold;
    }
  }
  let action: string = selected?.name ?? 'no action';
  if (seenLeast && leastName !== undefined) {
    const leastNoThreshold = least ? least.noThreshold || !Number.isFinite(least.threshold) : true;
    if (leastNoThreshold) {
      if (action !== 'reject' && action !== 'discard') {
        action = leastName;
        selected = least;
      }
    } else {
      if (!selected) {
        action = leastName;
        selected = least;
      }
      if (maxScore > score) score = maxScore;
    }
  }
  const sel: Selection = { action, score };
  if (selected) sel.entry = selected;
  return sel;
}

/** Score above which filters stop early (the highest enabled spam threshold; Infinity if none). */
export function spamLimit(list: readonly ActionEntry[]): number {
  let best = -Infinity;
  for (const e of list) if (scoring(e) && e.threshold > best) best = e.threshold;
  return best === -Infinity ? Infinity : best;
}
