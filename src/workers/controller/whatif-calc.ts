// What-if over the stored history (a mailsift extension, used by the web UI before a save):
// given proposed action thresholds and symbol weights, recompute each history row's score and
// action and list the rows whose action would change. Pure: rows and the current thresholds
// are passed in.
//
// It is an estimate from what a row keeps, not a rescan:
//  - a symbol's contribution scales with its weight: new = contribution × new weight / old
//    weight (the row's `score` and `metric_score`); a symbol whose old weight was 0 is taken
//    to have fired with factor 1;
//  - group limits are not applied again (a capped group's symbol scales from its capped
//    contribution), and composites that would fire or stop firing are not re-evaluated;
//  - a row whose action a module forced (`explain.forced`, e.g. GTUBE) or that was skipped
//    keeps its action; a threshold that the row's settings replaced keeps the settings' value.

import { dataRecord } from '../../core/records.js';

/** The actions /saveactions sets, whose thresholds a proposal may change. */
export const WHATIF_ACTIONS = ['reject', 'rewrite subject', 'add header', 'greylist'] as const;
export type WhatifAction = (typeof WHATIF_ACTIONS)[number];

/** Changed rows listed in one answer; the count covers them all. */
export const MAX_WHATIF_CHANGES = 1000;

export interface WhatifProposal {
  /** Action → threshold (null: switched off); actions not named keep their current threshold. */
  actions: Partial<Record<WhatifAction, number | null>>;
  /** Symbol → new weight. */
  scores: Record<string, number>;
}

export interface WhatifChange {
  /** Position in the history, newest first (what /history?from=i&to=i returns). */
  index: number;
  unix_time: number;
  'message-id'?: string;
  subject?: string;
  sender?: string;
  score_before: number;
  score_after: number;
  action_before: string;
  action_after: string;
}

export interface WhatifAnswer {
  /** Rows looked at. */
  rows: number;
  /** Rows whose action would change. */
  changed: number;
  /** Rows kept as they are because a module forced their action or they were skipped. */
  fixed: number;
  /** The first MAX_WHATIF_CHANGES changes, newest first. */
  changes: WhatifChange[];
  /** Rows whose action moves to each new action (`from -> to` → count). */
  moves: Record<string, number>;
}

type Row = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const obj = (v: unknown): Row | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Row) : undefined);

/** The action a score reaches: the highest enabled threshold at or below it, else `no action`. */
export function actionFor(score: number, thresholds: ReadonlyMap<string, number | null>): string {
  let best: [string, number] | undefined;
  for (const [name, t] of thresholds) {
    if (t === null || name === 'soft reject' || name === 'no action') continue;
    if (score >= t && (best === undefined || t > best[1])) best = [name, t];
  }
  return best?.[0] ?? 'no action';
}

/** Thresholds a row was scanned with: its own record (explain.thresholds), else the current ones. */
function rowThresholds(row: Row, current: ReadonlyMap<string, number | null>): Map<string, number | null> {
  const own = obj(obj(row.explain)?.thresholds);
  if (!own) return new Map(current);
  const out = new Map<string, number | null>();
  // Recorded thresholds list only enabled actions: the rest were off for this scan.
  for (const name of current.keys()) out.set(name, null);
  for (const [name, v] of Object.entries(own)) {
    const n = num(v);
    if (n !== undefined) out.set(name, n);
  }
  return out;
}

function proposedThresholds(row: Row, before: ReadonlyMap<string, number | null>, p: WhatifProposal): Map<string, number | null> {
  const out = new Map(before);
  const bySettings = obj(obj(obj(row.explain)?.settings)?.actions) ?? {};
  for (const [name, v] of Object.entries(p.actions)) {
    if (v === undefined || Object.hasOwn(bySettings, name)) continue;
    out.set(name, v);
  }
  return out;
}

function proposedScore(row: Row, score: number, p: WhatifProposal): number {
  const symbols = obj(row.symbols);
  if (!symbols) return score;
  let out = score;
  for (const [name, weight] of Object.entries(p.scores)) {
    if (!Object.hasOwn(symbols, name)) continue;
    const s = obj(symbols[name]);
    const contribution = num(s?.score) ?? 0;
    const oldWeight = num(s?.metric_score) ?? 0;
    const factor = oldWeight !== 0 ? contribution / oldWeight : 1;
    out += factor * weight - contribution;
  }
  return out;
}

export function whatif(rows: readonly Row[], current: ReadonlyMap<string, number | null>, p: WhatifProposal): WhatifAnswer {
  // Keyed by action names a row carries (settings may name custom ones): no prototype.
  const answer: WhatifAnswer = { rows: rows.length, changed: 0, fixed: 0, changes: [], moves: dataRecord<number>() };
  rows.forEach((row, index) => {
    const score = num(row.score);
    if (score === undefined) return;
    if (row.is_skipped === true || obj(row.explain)?.forced !== undefined) {
      answer.fixed++;
      return;
    }
    const before = rowThresholds(row, current);
    const after = proposedThresholds(row, before, p);
    const scoreAfter = proposedScore(row, score, p);
    const actionBefore = actionFor(score, before);
    const actionAfter = actionFor(scoreAfter, after);
    if (actionBefore === actionAfter) return;
    answer.changed++;
    const move = `${actionBefore} -> ${actionAfter}`;
    answer.moves[move] = (answer.moves[move] ?? 0) + 1;
    if (answer.changes.length >= MAX_WHATIF_CHANGES) return;
    const c: WhatifChange = { index, unix_time: num(row.unix_time) ?? 0, score_before: score, score_after: scoreAfter, action_before: actionBefore, action_after: actionAfter };
    const mid = str(row['message-id']);
    if (mid !== undefined) c['message-id'] = mid;
    const subject = str(row.subject);
    if (subject !== undefined) c.subject = subject;
    const sender = str(row.sender_smtp);
    if (sender !== undefined) c.sender = sender;
    answer.changes.push(c);
  });
  return answer;
}
