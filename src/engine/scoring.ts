// Symbol results of one task and the running score: weight × configured
// score, settings score overrides, repeated insertions, options, group max/min limits.

import type { SymbolInfo } from './registry.js';

/** Insertions of one symbol that still add score (Rspamd `max_shots`). */
export const MAX_SHOTS = 100;
/** Total bytes of options per symbol; protects replies from rules that attach huge option lists. */
export const MAX_OPTIONS_BYTES = 4096;
/** Options per symbol (3.4 caps the count at max_shots). */
export const MAX_OPTIONS = MAX_SHOTS;
/** |x| below this counts as zero, as in Rspamd (DBL_EPSILON). */
export const EPSILON = Number.EPSILON;

export interface GroupLimit {
  maxScore?: number;
  minScore?: number;
}

export interface SymbolState {
  name: string;
  score: number;
  metricScore: number;
  options?: string[];
  optionBytes: number;
  /** The options cap was hit: nothing more is accepted. */
  optionsFull: boolean;
  nshots: number;
  groups: string[];
  description?: string;
  /** Hidden by a composite (not shown, not counted by hasSymbol). */
  ignored: boolean;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what gets replaced
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

export class Scoring {
  score = 0;
  readonly symbols = new Map<string, SymbolState>();
  readonly groupTotals = new Map<string, number>();
  /** Groups whose max/min limit cut a contribution in this task (the verdict explanation shows them). */
  readonly cappedGroups = new Set<string>();
  /** Composite → the symbols whose score or presence it removed (the verdict explanation shows them). */
  readonly compositeConsumed = new Map<string, string[]>();

  constructor(private readonly limits: ReadonlyMap<string, GroupLimit>) {}

  /**
   * Insert or update a symbol. `info` is its definition (undefined for unknown symbols, which
   * score 0), `override` a settings score replacing the configured weight for this task,
   * `single` keeps the strongest value instead of accumulating (composites, settings).
   */
  insert(name: string, info: SymbolInfo | undefined, weight: number, options: readonly string[] | undefined, override: number | undefined, single: boolean): void {
    if (!Number.isFinite(weight)) weight = 0;
    const metric = info ? info.score : 0;
    const final = (override ?? metric) * weight;
    let s = this.symbols.get(name);
    if (!s) {
      const groups = info ? [info.group] : [];
      const diff = this.#limit(groups, final);
      s = { name, score: 0, metricScore: metric, optionBytes: 0, optionsFull: false, nshots: 1, groups, ignored: false };
      if (info?.description !== undefined) s.description = info.description;
      this.symbols.set(name, s);
      s.score = diff;
      this.score += diff;
    } else {
      const maxShots = single || (info ? info.oneShot : false) ? 1 : MAX_SHOTS;
      const isSingle = s.nshots >= maxShots;
      s.nshots++;
      let diff: number;
      if (!isSingle) {
        diff = final;
      } else if (Math.abs(final) > Math.abs(s.score) && Math.sign(final) === Math.sign(s.score || final)) {
        diff = final - s.score;
      } else {
        diff = 0;
      }
      if (diff !== 0) {
        const limited = this.#limit(s.groups, diff);
        s.score += limited;
        this.score += limited;
      }
    }
    if (options && options.length > 0) this.#addOptions(s, options);
  }

  /** Group limit (Rspamd's max_score of a group): the part of contribution `w` the groups let through. */
  #limit(groups: readonly string[], w: number): number {
    for (const g of groups) {
      const cur = this.groupTotals.get(g) ?? 0;
      const lim = this.limits.get(g);
      let limit = NaN;
      if (lim) {
        if (cur + w >= 0 && lim.maxScore !== undefined && lim.maxScore > 0) limit = lim.maxScore;
        else if (cur + w < 0 && lim.minScore !== undefined && lim.minScore < 0) limit = -lim.minScore;
      }
      if (!Number.isNaN(limit)) {
        if (Math.abs(cur) >= limit && Math.sign(cur) === Math.sign(w)) {
          // The group is already at its cap: the symbol is still recorded, with score 0.
          this.cappedGroups.add(g);
          return 0;
        }
        if (Math.abs(cur + w) > limit) {
          w = w < 0 ? -limit - cur : limit - cur;
          this.cappedGroups.add(g);
        }
      }
      this.groupTotals.set(g, cur + w);
    }
    return w;
  }

  #addOptions(s: SymbolState, options: readonly string[]): void {
    for (let opt of options) {
      if (s.optionsFull) return;
      if (typeof opt !== 'string') opt = String(opt);
      CONTROL.lastIndex = 0;
      if (CONTROL.test(opt)) opt = opt.replace(CONTROL, '\ufffd');
      if (!s.options) s.options = [];
      else if (s.options.includes(opt)) continue;
      const bytes = Buffer.byteLength(opt, 'utf8');
      if (s.optionBytes + bytes > MAX_OPTIONS_BYTES || s.options.length >= MAX_OPTIONS) {
        s.options.push('...');
        s.optionsFull = true;
        return;
      }
      s.options.push(opt);
      s.optionBytes += bytes;
    }
  }

  /** Composite removal: drop the score from the total (group totals stay). */
  removeWeight(name: string): void {
    const s = this.symbols.get(name);
    if (!s) return;
    this.score -= s.score;
    s.score = 0;
  }

  hide(name: string): void {
    const s = this.symbols.get(name);
    if (s) s.ignored = true;
  }
}
