// Argument schemas of extractors and transforms: checked and coerced once, when the selector
// is compiled, so a wrong argument is a load-time error and callbacks get clean values
// (numbers given as words become numbers, as Rspamd's `ts.string / tonumber` does).

import { SelectorError } from './errors.js';
import type { SelectorArg } from './parse.js';

export type ArgCheck = (args: SelectorArg[], name: string) => SelectorArg[];
/** Arguments after checking: numbers where the schema asked for them. */
export type CheckedArgs = Array<SelectorArg | number | undefined>;

function bad(name: string, what: string): never {
  throw new SelectorError('ERR_SELECTOR_ARGS', `invalid arguments for ${name}: ${what}`);
}

export interface ArgSpec {
  kind: 'string' | 'number' | 'words' | 'list' | 'table';
  optional?: boolean;
  /** For `words`: the accepted values. */
  words?: readonly string[];
}

/** Positional schema: each argument by its spec, none beyond the list. */
export function positional(...specs: ArgSpec[]): (args: SelectorArg[], name: string) => CheckedArgs {
  return (args, name) => {
    if (args.length > specs.length) bad(name, `expected at most ${specs.length} arguments, got ${args.length}`);
    const out: CheckedArgs = [];
    specs.forEach((spec, i) => {
      const a = args[i];
      if (a === undefined) {
        if (!spec.optional) bad(name, `argument ${i + 1} is required`);
        out.push(undefined);
        return;
      }
      out.push(checkOne(a, spec, name, i + 1));
    });
    return out;
  };
}

function checkOne(a: SelectorArg, spec: ArgSpec, name: string, pos: number): SelectorArg | number {
  switch (spec.kind) {
    case 'string':
      if (typeof a !== 'string') bad(name, `argument ${pos} must be a string`);
      return a;
    case 'number': {
      const n = typeof a === 'string' && a.trim() !== '' ? Number(a) : NaN;
      if (!Number.isFinite(n)) bad(name, `argument ${pos} must be a number`);
      return n;
    }
    case 'words':
      if (typeof a !== 'string' || !spec.words!.includes(a)) bad(name, `argument ${pos} must be one of ${spec.words!.join(', ')}`);
      return a;
    case 'list':
      if (typeof a === 'string') return [a];
      if (!Array.isArray(a)) bad(name, `argument ${pos} must be a list`);
      return a;
    case 'table':
      if (typeof a !== 'object' || Array.isArray(a)) bad(name, `argument ${pos} must be a {key = value} table`);
      return a;
  }
}

/** Any number of plain string arguments. */
export function strings(args: SelectorArg[], name: string): CheckedArgs {
  for (const a of args) if (typeof a !== 'string') bad(name, 'arguments must be strings');
  return args;
}

/** Reads a `{k = v}` table argument's fields against a spec; unknown keys are an error. */
export function tableFields(t: { [k: string]: string | string[] }, fields: Record<string, ArgSpec>, name: string): Record<string, string | string[] | number | boolean> {
  const out: Record<string, string | string[] | number | boolean> = {};
  for (const [k, v] of Object.entries(t)) {
    const spec = Object.hasOwn(fields, k) ? fields[k] : undefined;
    if (!spec) bad(name, `unknown key ${k}`);
    if (spec.kind === 'list') {
      const list = typeof v === 'string' ? [v] : v;
      if (spec.words) for (const w of list) if (!spec.words.includes(w)) bad(name, `${k}: unknown value ${w}`);
      out[k] = list;
    } else if (spec.kind === 'number') {
      const n = typeof v === 'string' ? Number(v) : NaN;
      if (!Number.isFinite(n)) bad(name, `${k} must be a number`);
      out[k] = n;
    } else if (spec.kind === 'words' && spec.words?.includes('true')) {
      if (typeof v !== 'string') bad(name, `${k} must be a boolean`);
      out[k] = v === 'true' || v === 'yes' || v === '1';
    } else {
      if (typeof v !== 'string' || (spec.words && !spec.words.includes(v))) bad(name, `${k}: bad value`);
      out[k] = v;
    }
  }
  for (const [k, spec] of Object.entries(fields)) if (!spec.optional && !(k in out)) bad(name, `${k} is required`);
  return out;
}
