// Composite symbols: compiled at engine start, evaluated after the filters
// (pass 1) and again after the postfilters (pass 2, composites that reference postfilter
// symbols), then the removal policies hide symbols or drop their weight.

import type { CompositeDef } from '../plugin-api/index.js';
import { collectAtoms, ExpressionError, parseExpression } from '../rule-libs/expression/composite-expr.js';
import type { AtomNode, ExprNode } from '../rule-libs/expression/composite-expr.js';
import { EngineError } from './errors.js';
import type { Registry } from './registry.js';
import { EPSILON } from './scoring.js';
import type { Scoring } from './scoring.js';

/** Value of a present symbol whose score is 0, so it still counts as true (Rspamd 16e-5). */
const ZERO_SCORE_PRESENT = 1.6e-4;
/** Value of an already evaluated composite whose score is 0. */
const ZERO_SCORE_COMPOSITE = 1e-5;

type Policy = NonNullable<CompositeDef['policy']>;

export interface CompiledComposite {
  name: string;
  expr: ExprNode;
  removeSymbol: boolean;
  removeWeight: boolean;
  /** Evaluated after the postfilters because it references postfilter symbols. */
  late: boolean;
}

/** What evaluation needs from the task. */
export interface CompositeHost {
  readonly scoring: Scoring;
  symbolAllowed(name: string): boolean;
  insertComposite(name: string): void;
}

interface RemovalRequest {
  removeSymbol: boolean;
  removeWeight: boolean;
  force: boolean;
}

function policyFlags(p: Policy | undefined): { removeSymbol: boolean; removeWeight: boolean } {
  switch (p) {
    case 'remove_symbol':
      return { removeSymbol: true, removeWeight: false };
    case 'remove_weight':
      return { removeSymbol: false, removeWeight: true };
    case 'leave':
      return { removeSymbol: false, removeWeight: false };
    default:
      return { removeSymbol: true, removeWeight: true };
  }
}

export function compileComposites(registry: Registry): CompiledComposite[] {
  const defs = registry.composites;
  const out: CompiledComposite[] = [];
  for (const d of defs) {
    let expr: ExprNode;
    try {
      expr = parseExpression(d.expression);
    } catch (err) {
      const why = err instanceof ExpressionError ? err.message : String(err);
      throw new EngineError('ENGINE_BAD_COMPOSITE', `composite ${d.name}: cannot parse expression "${d.expression}": ${why}`);
    }
    out.push({ name: d.name, expr, ...policyFlags(d.policy), late: false });
  }
  // A composite is late when any atom (transitively) names a symbol only postfilters insert.
  const byName = new Map(out.map((c) => [c.name, c]));
  const postfilterSymbols = new Set<string>();
  for (const item of registry.stageOrder.get('postfilters') ?? []) for (const s of item.inserts) postfilterSymbols.add(s);
  const memo = new Map<string, boolean>();
  const isLate = (c: CompiledComposite, seen: Set<string>): boolean => {
    const known = memo.get(c.name);
    if (known !== undefined) return known;
    if (seen.has(c.name)) return false;
    seen.add(c.name);
    let late = false;
    for (const a of collectAtoms(c.expr)) {
      const names = a.kind === 'sym' ? [a.name] : registry.groups.get(a.name)?.symbols ?? [];
      for (const n of names) {
        const sub = byName.get(n);
        if (postfilterSymbols.has(n) || (sub && isLate(sub, seen))) late = true;
      }
    }
    memo.set(c.name, late);
    return late;
  };
  for (const c of out) c.late = isLate(c, new Set());
  return out;
}

/** Evaluate one pass of composites against the task's results and apply removals. */
export function evaluateComposites(all: readonly CompiledComposite[], late: boolean, host: CompositeHost, registry: Registry): void {
  const removals = new Map<string, RemovalRequest[]>();
  const state = new Map<string, number>(); // composite → evaluated value (NaN while in progress)
  const byName = new Map<string, CompiledComposite>();
  for (const c of all) byName.set(c.name, c);
  const scoring = host.scoring;

  const evalComposite = (c: CompiledComposite): number => {
    const done = state.get(c.name);
    if (done !== undefined) return Number.isNaN(done) ? 0 : done;
    if (scoring.symbols.has(c.name) || !host.symbolAllowed(c.name)) {
      const present = scoring.symbols.get(c.name);
      const v = present ? Math.abs(present.score) || ZERO_SCORE_COMPOSITE : 0;
      state.set(c.name, v);
      return v;
    }
    state.set(c.name, NaN);
    const pending: Array<[string, RemovalRequest]> = [];
    const v = evalNode(c, c.expr, false, pending);
    const matched = Math.abs(v) > ZERO_SCORE_COMPOSITE;
    if (matched) {
      host.insertComposite(c.name);
      const consumed = pending.filter(([, req]) => req.removeSymbol || req.removeWeight || req.force).map(([sym]) => sym);
      if (consumed.length > 0) scoring.compositeConsumed.set(c.name, [...new Set(consumed)]);
      for (const [sym, req] of pending) {
        let list = removals.get(sym);
        if (!list) removals.set(sym, (list = []));
        list.push(req);
      }
      const s = scoring.symbols.get(c.name);
      state.set(c.name, s ? Math.abs(s.score) || ZERO_SCORE_COMPOSITE : ZERO_SCORE_COMPOSITE);
    } else {
      state.set(c.name, 0);
    }
    return state.get(c.name)!;
  };

  const atomValue = (c: CompiledComposite, a: AtomNode, name: string, underNot: boolean, pending: Array<[string, RemovalRequest]>): number => {
    let s = scoring.symbols.get(name);
    if (!s || s.ignored) {
      const sub = byName.get(name);
      if (!sub || sub.late !== late) return 0;
      evalComposite(sub);
      s = scoring.symbols.get(name);
      if (!s) return 0;
    }
    if (a.options && !optionsMatch(a.options, s.options)) return 0;
    const v = Math.abs(s.score) > EPSILON ? s.score : ZERO_SCORE_PRESENT;
    if (!underNot) {
      pending.push([
        name,
        {
          removeSymbol: !a.keepAll && !a.keepSymbol && c.removeSymbol,
          removeWeight: !a.keepAll && c.removeWeight,
          force: a.force,
        },
      ]);
    }
    return v;
  };

  const evalNode = (c: CompiledComposite, e: ExprNode, underNot: boolean, pending: Array<[string, RemovalRequest]>): number => {
    switch (e.k) {
      case 'num':
        return e.v;
      case 'atom': {
        if (e.kind === 'sym') return atomValue(c, e, e.name, underNot, pending);
        let best = 0;
        for (const member of registry.groups.get(e.name)?.symbols ?? []) {
          const s = scoring.symbols.get(member);
          if (!s || s.ignored) continue;
          if (e.kind === 'g+' && !(s.score > 0)) continue;
          if (e.kind === 'g-' && !(s.score < 0)) continue;
          const v = atomValue(c, e, member, underNot, pending);
          if (Math.abs(v) > Math.abs(best)) best = Math.abs(v);
        }
        return best;
      }
      case 'not':
        return Math.abs(evalNode(c, e.a, !underNot, pending)) > EPSILON ? 0 : 1;
      case 'and': {
        for (const x of e.xs) if (!(Math.abs(evalNode(c, x, underNot, pending)) > EPSILON)) return 0;
        return 1;
      }
      case 'or': {
        // No short cut: Rspamd evaluates composites without one, so a matching composite removes
        // every present atom of an `|` by its policy, not only the first (MAIL_RU_MAILER_BASE64
        // takes the weight of each needless base64 symbol it names).
        let any = false;
        for (const x of e.xs) if (Math.abs(evalNode(c, x, underNot, pending)) > EPSILON) any = true;
        return any ? 1 : 0;
      }
      case 'cmp': {
        const a = evalNode(c, e.a, underNot, pending);
        const b = evalNode(c, e.b, underNot, pending);
        const r = e.op === '>' ? a > b : e.op === '>=' ? a >= b : e.op === '<' ? a < b : e.op === '<=' ? a <= b : e.op === '==' ? a === b : a !== b;
        return r ? 1 : 0;
      }
      case 'arith': {
        const a = evalNode(c, e.a, underNot, pending);
        const b = evalNode(c, e.b, underNot, pending);
        return e.op === '+' ? a + b : e.op === '-' ? a - b : e.op === '*' ? a * b : b === 0 ? 0 : a / b;
      }
    }
  };

  for (const c of all) if (c.late === late) evalComposite(c);

  for (const [sym, reqs] of removals) {
    if (reqs.some((r) => r.force)) {
      scoring.removeWeight(sym);
      scoring.hide(sym);
      continue;
    }
    if (reqs.every((r) => r.removeWeight)) scoring.removeWeight(sym);
    if (reqs.every((r) => r.removeSymbol)) scoring.hide(sym);
  }
}

function optionsMatch(wanted: ReadonlyArray<string | RegExp>, have: readonly string[] | undefined): boolean {
  if (!have) return false;
  for (const w of wanted) {
    const ok = typeof w === 'string' ? have.includes(w) : have.some((o) => w.test(o));
    if (!ok) return false;
  }
  return true;
}
