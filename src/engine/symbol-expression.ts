// Symbol expressions for modules (ctx.expression): the composite language (parsed by
// rule-libs/expression) evaluated as Rspamd evaluates an rspamd_expression whose atoms are
// symbols (force_actions.lua's process_atom, expression.c's rspamd_ast_process_node). Unlike a
// composite, evaluating one inserts nothing and removes nothing: it reads the task's results.

import type { SymbolExpression, SymbolResult, Task } from '../plugin-api/index.js';
import { collectAtoms, ExpressionError, parseExpression } from '../rule-libs/expression/composite-expr.js';
import type { AtomNode, ExprNode } from '../rule-libs/expression/composite-expr.js';
import { EngineError } from './errors.js';

/**
 * Value of a present symbol whose |score| is smaller: Rspamd raises it so that a symbol scored 0
 * still counts as true and `limit` comparisons see it.
 */
export const MIN_PRESENT_ATOM_VALUE = 0.001;
/** Rspamd's DBL_EPSILON truth test for `!`, `&`, `|`. */
const EPSILON = Number.EPSILON;

/** Group name → member symbols (the sealed registry's groups). */
export type GroupMembers = (group: string) => readonly string[] | undefined;

function optionsMatch(wanted: ReadonlyArray<string | RegExp>, have: readonly string[] | undefined): boolean {
  if (!have) return false;
  return wanted.every((w) => (typeof w === 'string' ? have.includes(w) : have.some((o) => w.test(o))));
}

function presentValue(s: SymbolResult | undefined, atom: AtomNode): number {
  if (!s) return 0;
  if (atom.options && !optionsMatch(atom.options, s.options)) return 0;
  return Math.max(Math.abs(s.score), MIN_PRESENT_ATOM_VALUE);
}

function atomValue(task: Task, atom: AtomNode, groups: GroupMembers): number {
  if (atom.kind === 'sym') return presentValue(task.getSymbol(atom.name), atom);
  // A group atom is its strongest present member (g+: positive scores only, g-: negative only).
  let best = 0;
  for (const member of groups(atom.name) ?? []) {
    const s = task.getSymbol(member);
    if (!s) continue;
    if (atom.kind === 'g+' && !(s.score > 0)) continue;
    if (atom.kind === 'g-' && !(s.score < 0)) continue;
    best = Math.max(best, presentValue(s, atom));
  }
  return best;
}

const truthy = (v: number): boolean => Math.abs(v) > EPSILON;

function evaluate(e: ExprNode, task: Task, groups: GroupMembers): number {
  switch (e.k) {
    case 'num':
      return e.v;
    case 'atom':
      return atomValue(task, e, groups);
    case 'not':
      return truthy(evaluate(e.a, task, groups)) ? 0 : 1;
    case 'and':
    case 'or': {
      // Rspamd's n-ary fold: the first operand is the accumulator as it is (so `A | B` with A
      // present is A's value), each later one folds to 0/1, and the fold stops once decided.
      let acc = NaN;
      for (const x of e.xs) {
        const v = evaluate(x, task, groups);
        if (Number.isNaN(acc)) acc = v;
        else if (e.k === 'and') acc = truthy(acc) && truthy(v) ? 1 : 0;
        else acc = truthy(acc) || truthy(v) ? 1 : 0;
        if (e.k === 'and' ? acc === 0 : acc !== 0) break;
      }
      return acc;
    }
    case 'cmp': {
      const a = evaluate(e.a, task, groups);
      const b = evaluate(e.b, task, groups);
      const r = e.op === '>' ? a > b : e.op === '>=' ? a >= b : e.op === '<' ? a < b : e.op === '<=' ? a <= b : e.op === '==' ? a === b : a !== b;
      return r ? 1 : 0;
    }
    case 'arith': {
      const a = evaluate(e.a, task, groups);
      const b = evaluate(e.b, task, groups);
      return e.op === '+' ? a + b : e.op === '-' ? a - b : e.op === '*' ? a * b : a / b;
    }
  }
}

/** Compile once (setup); a bad expression throws ENGINE_BAD_EXPRESSION naming it. */
export function compileSymbolExpression(text: string, groups: GroupMembers): SymbolExpression {
  let expr: ExprNode;
  try {
    expr = parseExpression(text);
  } catch (err) {
    const why = err instanceof ExpressionError ? err.message : String(err);
    throw new EngineError('ENGINE_BAD_EXPRESSION', `cannot parse expression "${text}": ${why}`);
  }
  const atoms = [...new Set(collectAtoms(expr).map((a) => (a.kind === 'sym' ? a.name : `${a.kind}:${a.name}`)))];
  return {
    text,
    atoms,
    evaluate: (task: Task): number => evaluate(expr, task, groups),
  };
}
