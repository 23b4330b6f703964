// Selector text → a function over the task. Parsing, name lookup and argument
// checks happen once here, so a bad selector fails at load with a coded SelectorError; running
// one is then a walk over the prepared pipeline. Any value that goes missing along the way
// makes that selector, and the whole list, yield undefined.

import { SelectorError } from './errors.js';
import { EXTRACTORS } from './extractors.js';
import type { CheckedArgs } from './args.js';
import type { Extractor, Transform } from './functions.js';
import { parseSelector, type SelectorCall } from './parse.js';
import type { SelectorEnv, SelectorTask } from './task.js';
import { TRANSFORMS } from './transforms.js';
import { implicitString, isSelectorObject, listElemType, methodResult, stringMethod, type SelectorTable, type SelectorType, type Typed } from './values.js';

/** One selector's result: a string or a list of strings. */
export type SelectorResult = string | string[];

interface Step {
  name: string;
  fn: Transform;
  args: CheckedArgs;
}

interface Prepared {
  name: string;
  extractor: Extractor;
  args: CheckedArgs;
  method?: { name: string; args: string[] };
  steps: Step[];
}

export interface CompiledSelector {
  readonly text: string;
  /** Every selector's result in order, or undefined when any yields nothing. */
  results(task: SelectorTask): SelectorResult[] | undefined;
  /** Rspamd's `combine_selectors`: strings joined, lists zipped element by element. */
  combine(task: SelectorTask, delimiter?: string): SelectorResult | undefined;
  /** Rspamd's `flatten_selectors`: every string of every result in one list. */
  flatten(task: SelectorTask): string[] | undefined;
  /** Pairs (key, value) of consecutive results as an object (keys usually from `id('name')`). */
  object(task: SelectorTask): Record<string, SelectorResult> | undefined;
}

function own<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

function checkArgs(call: SelectorCall, check: ((a: SelectorCall['args'], n: string) => CheckedArgs) | undefined): CheckedArgs {
  try {
    return check ? check(call.args, call.name) : call.args;
  } catch (err) {
    if (err instanceof SelectorError && err.position === undefined) throw new SelectorError(err.code, err.message, call.at);
    throw err;
  }
}

function prepare(text: string): Prepared[] {
  return parseSelector(text).map((expr) => {
    const extractor = own(EXTRACTORS, expr.extractor.name);
    if (!extractor) throw new SelectorError('ERR_SELECTOR_UNKNOWN', `invalid selector: unknown extractor ${expr.extractor.name}`, expr.extractor.at);
    const p: Prepared = { name: expr.extractor.name, extractor, args: checkArgs(expr.extractor, extractor.args), steps: [] };
    if (expr.method) {
      const margs = expr.method.args.map((a) => {
        if (typeof a !== 'string') throw new SelectorError('ERR_SELECTOR_ARGS', `invalid arguments for method ${expr.method!.name}: must be strings`, expr.method!.at);
        return a;
      });
      p.method = { name: expr.method.name, args: margs };
    }
    for (const call of expr.transforms) {
      const fn = own(TRANSFORMS, call.name);
      if (!fn) throw new SelectorError('ERR_SELECTOR_UNKNOWN', `invalid selector: unknown transform ${call.name}`, call.at);
      p.steps.push({ name: call.name, fn, args: checkArgs(call, fn.args) });
    }
    return p;
  });
}

/** `:name` on one element: a table field (numeric names index arrays) or an object's method. */
function applyMethod(value: unknown, type: 'string' | 'table' | 'userdata', name: string, args: string[]): Typed | undefined {
  if (type === 'table') {
    if (Array.isArray(value)) {
      const i = Number(name);
      return Number.isInteger(i) && i >= 1 ? methodResult(value[i - 1]) : undefined;
    }
    const t = value as SelectorTable;
    return Object.hasOwn(t, name) ? methodResult(t[name]) : undefined;
  }
  if (type === 'userdata') return isSelectorObject(value) ? methodResult(value.call(name, args)) : undefined;
  return methodResult(stringMethod(value as string, name, args));
}

/** Objects and tables (alone or in a list) become strings; strings are left alone. */
function toStrings(cur: Typed): Typed | undefined {
  if (cur.type === 'string' || cur.type === 'string_list') return cur;
  const elem = listElemType(cur.type);
  if (elem) {
    const out: string[] = [];
    for (const e of cur.value as unknown[]) {
      const s = implicitString(elem, e);
      if (s !== undefined) out.push(s);
    }
    return { value: out, type: 'string_list' };
  }
  const s = implicitString(cur.type as 'table' | 'userdata', cur.value);
  return s === undefined ? undefined : { value: s, type: 'string' };
}

/** Maps a step over a list's elements, dropping the ones that yield nothing. */
function mapElements(list: unknown[], elem: 'string' | 'table' | 'userdata', apply: (e: unknown) => Typed | undefined): Typed {
  const out: unknown[] = [];
  let type: SelectorType = 'string_list';
  for (const e of list) {
    if (e === undefined || e === null) continue;
    const r = apply(e);
    if (r === undefined || r.value === undefined) continue;
    out.push(r.value);
    // Scalars become a list of that type; a list per element stays nested until the end.
    if (!listElemType(r.type)) type = `${r.type as 'string' | 'table' | 'userdata'}_list`;
  }
  void elem;
  return { value: out, type };
}

function applyStep(cur: Typed, step: Step, env: SelectorEnv): Typed | undefined {
  const { fn } = step;
  if (fn.types.includes(cur.type)) return fn.process(cur.value, cur.type, step.args, env);
  const elem = listElemType(cur.type);
  if (elem && fn.types.includes('list')) return fn.process(cur.value, cur.type, step.args, env);
  if (elem && fn.mapType && fn.types.includes(elem)) return mapElements(cur.value as unknown[], elem, (e) => fn.process(e, elem, step.args, env));
  return undefined; // Rspamd logs "cannot apply transform" and the selector yields nothing
}

const COMPLEX: readonly string[] = ['userdata', 'table', 'userdata_list', 'table_list'];

/** A transform that takes objects or tables runs on the extractor's value before any conversion. */
function takesComplex(fn: Transform): boolean {
  return fn.types.some((t) => COMPLEX.includes(t));
}

/** Every string of a possibly nested final list. */
function flatStrings(v: unknown[], out: string[] = []): string[] {
  for (const e of v) {
    if (Array.isArray(e)) flatStrings(e, out);
    else if (typeof e === 'string') out.push(e);
    else if (e !== undefined && e !== null) out.push(implicitString(isSelectorObject(e) ? 'userdata' : 'table', e) ?? '');
  }
  return out;
}

function runOne(task: SelectorTask, p: Prepared, env: SelectorEnv): SelectorResult | undefined {
  let cur = p.extractor.get(task, p.args, env);
  if (cur === undefined || cur.value === undefined) return undefined;
  let steps = p.steps;
  if (p.method) {
    const { name, args } = p.method;
    const elem = listElemType(cur.type);
    if (!elem) cur = applyMethod(cur.value, cur.type as 'string' | 'table' | 'userdata', name, args);
    else cur = { value: mapElements(cur.value as unknown[], elem, (e) => applyMethod(e, elem, name, args)).value, type: 'string_list' };
  } else if (steps[0] && takesComplex(steps[0].fn)) {
    const first = steps[0];
    steps = steps.slice(1);
    const elem = listElemType(cur.type);
    if (first.fn.types.includes(cur.type)) cur = first.fn.process(cur.value, cur.type, first.args, env);
    else if (elem && first.fn.types.includes(elem)) cur = mapElements(cur.value as unknown[], elem, (e) => first.fn.process(e, elem, first.args, env));
    else cur = toStrings(cur);
  } else {
    cur = toStrings(cur);
  }
  for (const step of steps) {
    if (cur === undefined || cur.value === undefined) return undefined;
    cur = applyStep(cur, step, env);
  }
  if (cur === undefined || cur.value === undefined) return undefined;
  const final = toStrings(cur);
  if (final === undefined) return undefined;
  return final.type === 'string_list' ? flatStrings(final.value as unknown[]) : (final.value as string);
}

/** Compiles a selector list; throws a coded SelectorError when it is invalid. */
export function compileSelector(text: string, env: SelectorEnv = {}): CompiledSelector {
  const prepared = prepare(text);
  const results = (task: SelectorTask): SelectorResult[] | undefined => {
    const out: SelectorResult[] = [];
    for (const p of prepared) {
      const r = runOne(task, p, env);
      if (r === undefined) return undefined;
      out.push(r);
    }
    return out;
  };
  return {
    text,
    results,
    combine(task, delimiter = '') {
      const rs = results(task);
      return rs === undefined ? undefined : combineResults(rs, delimiter);
    },
    flatten(task) {
      return results(task)?.flat();
    },
    object(task) {
      const rs = results(task);
      if (rs === undefined) return undefined;
      const out: Record<string, SelectorResult> = {};
      for (let i = 0; i + 1 < rs.length; i += 2) {
        const key = Array.isArray(rs[i]) ? (rs[i] as string[]).join('') : (rs[i] as string);
        Object.defineProperty(out, key, { value: rs[i + 1], enumerable: true, writable: true, configurable: true });
      }
      return out;
    },
  };
}

/**
 * All strings: joined with the delimiter. With lists: element i of every list (a string counts
 * as the same value at every position) joined, for as many positions as the shortest list has
 * (Rspamd zips, it does not build a cartesian product).
 */
export function combineResults(rs: readonly SelectorResult[], delimiter: string): SelectorResult {
  if (rs.every((r) => typeof r === 'string')) return (rs as string[]).join(delimiter);
  const lists = rs.filter((r): r is string[] => Array.isArray(r));
  const n = Math.min(...lists.map((l) => l.length));
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(rs.map((r) => (typeof r === 'string' ? r : r[i]!)).join(delimiter));
  return out;
}

/** Whether a selector text compiles; the error when it does not. */
export function checkSelector(text: string, env: SelectorEnv = {}): { ok: true } | { ok: false; error: SelectorError } {
  try {
    compileSelector(text, env);
    return { ok: true };
  } catch (err) {
    if (err instanceof SelectorError) return { ok: false, error: err };
    throw err;
  }
}

export function listExtractors(): Record<string, { description: string }> {
  const out: Record<string, { description: string }> = {};
  for (const [k, e] of Object.entries(EXTRACTORS)) out[k] = { description: e.description };
  return out;
}

export function listTransforms(): Record<string, { description: string; types: Record<string, boolean>; map_type?: string }> {
  const out: Record<string, { description: string; types: Record<string, boolean>; map_type?: string }> = {};
  for (const [k, t] of Object.entries(TRANSFORMS)) {
    const types: Record<string, boolean> = {};
    for (const ty of t.types) types[ty] = true;
    out[k] = t.mapType ? { description: t.description, types, map_type: t.mapType } : { description: t.description, types };
  }
  return out;
}

export type { SelectorType };
