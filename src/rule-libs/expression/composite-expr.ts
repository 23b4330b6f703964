// Parser for the composite expression language: `& | !` (and the word
// forms), parentheses, comparisons and arithmetic over atom values, numbers, and atoms with
// the `~ - ^` modifiers, group atoms (`g:`, `g+:`, `g-:`) and option filters `SYM[opt, /re/]`.
// Parsed once at engine start. Pure, so it sits below the plugin API: the engine evaluates
// composites with it (engine/composites.ts) and modules' expressions (engine/symbol-expression.ts,
// ctx.expression), and module config schemas check their expressions with it at load.

export interface AtomNode {
  k: 'atom';
  name: string;
  /** `sym`: a symbol or composite; `g`, `g+`, `g-`: group atoms. */
  kind: 'sym' | 'g' | 'g+' | 'g-';
  /** `~`: keep the symbol visible. */
  keepSymbol: boolean;
  /** `-`: touch nothing. */
  keepAll: boolean;
  /** `^`: force removal of symbol and weight. */
  force: boolean;
  options?: Array<string | RegExp>;
}

export type ExprNode =
  | AtomNode
  | { k: 'num'; v: number }
  | { k: 'not'; a: ExprNode }
  | { k: 'and'; xs: ExprNode[] }
  | { k: 'or'; xs: ExprNode[] }
  | { k: 'cmp'; op: '>' | '>=' | '<' | '<=' | '==' | '!='; a: ExprNode; b: ExprNode }
  | { k: 'arith'; op: '+' | '-' | '*' | '/'; a: ExprNode; b: ExprNode };

/** Nesting depth of parentheses/negations; protects the recursive parser from hostile configs. */
export const MAX_EXPRESSION_DEPTH = 64;

type Tok =
  | { t: 'op'; v: string }
  | { t: 'num'; v: number }
  | { t: 'atom'; atom: AtomNode }
  | { t: '('; }
  | { t: ')'; };

const NAME_CHAR = /[A-Za-z0-9_.]/;

export class ExpressionError extends Error {}

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  // An operand is expected at the start, after an operator and after `(`.
  const expectOperand = (): boolean => {
    const last = out[out.length - 1];
    return !last || last.t === 'op' || last.t === '(';
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
      continue;
    }
    if (c === '(' || c === ')') {
      out.push({ t: c });
      i++;
      continue;
    }
    if (expectOperand()) {
      if (c === '!') {
        out.push({ t: 'op', v: '!' });
        i++;
        continue;
      }
      if (/[0-9]/.test(c)) {
        const m = /^[0-9]+(\.[0-9]+)?/.exec(src.slice(i))!;
        out.push({ t: 'num', v: Number(m[0]) });
        i += m[0].length;
        continue;
      }
      const word = /^[A-Za-z]+/.exec(src.slice(i))?.[0];
      if (word === 'not' && !NAME_CHAR.test(src[i + 3] ?? '')) {
        out.push({ t: 'op', v: '!' });
        i += 3;
        continue;
      }
      const atom = readAtom(src, i);
      out.push({ t: 'atom', atom: atom.node });
      i = atom.end;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (two === '&&' || two === '||' || two === '>=' || two === '<=' || two === '==' || two === '!=') {
      out.push({ t: 'op', v: two === '&&' ? '&' : two === '||' ? '|' : two });
      i += 2;
      continue;
    }
    if ('&|<>=+-*/'.includes(c)) {
      out.push({ t: 'op', v: c === '=' ? '==' : c });
      i++;
      continue;
    }
    const word = /^[A-Za-z]+/.exec(src.slice(i))?.[0];
    if (word === 'and' || word === 'or') {
      out.push({ t: 'op', v: word === 'and' ? '&' : '|' });
      i += word.length;
      continue;
    }
    throw new ExpressionError(`unexpected '${c}' at offset ${i}`);
  }
  return out;
}

function readAtom(src: string, start: number): { node: AtomNode; end: number } {
  let i = start;
  const node: AtomNode = { k: 'atom', name: '', kind: 'sym', keepSymbol: false, keepAll: false, force: false };
  for (; i < src.length; i++) {
    const c = src[i];
    if (c === '~') node.keepSymbol = true;
    else if (c === '-') node.keepAll = true;
    else if (c === '^') node.force = true;
    else break;
  }
  const grp = /^g([+-]?):/.exec(src.slice(i));
  if (grp) {
    node.kind = grp[1] === '+' ? 'g+' : grp[1] === '-' ? 'g-' : 'g';
    i += grp[0].length;
  }
  const nameStart = i;
  while (i < src.length && (NAME_CHAR.test(src[i]!) || (node.kind !== 'sym' && src[i] === '-'))) i++;
  node.name = src.slice(nameStart, i);
  if (!node.name) throw new ExpressionError(`expected a symbol name at offset ${start}`);
  if (src[i] === '[') {
    const close = src.indexOf(']', i);
    if (close < 0) throw new ExpressionError(`unterminated option list after ${node.name}`);
    node.options = src
      .slice(i + 1, close)
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o.length > 0)
      .map((o) => {
        const re = /^\/(.*)\/([a-z]*)$/.exec(o);
        return re ? new RegExp(re[1]!, re[2]!.replace(/[^imsu]/g, '')) : o;
      });
    i = close + 1;
  }
  return { node, end: i };
}

const BINARY_PREC: Readonly<Record<string, number>> = {
  '|': 2,
  '&': 3,
  '>': 4,
  '>=': 4,
  '<': 4,
  '<=': 4,
  '==': 4,
  '!=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
};

export function parseExpression(src: string): ExprNode {
  const toks = tokenize(src);
  let pos = 0;
  const primary = (depth: number): ExprNode => {
    if (depth > MAX_EXPRESSION_DEPTH) throw new ExpressionError('expression nested too deeply');
    const t = toks[pos++];
    if (!t) throw new ExpressionError('unexpected end of expression');
    if (t.t === 'atom') return t.atom;
    if (t.t === 'num') return { k: 'num', v: t.v };
    if (t.t === '(') {
      const e = binary(0, depth + 1);
      if (toks[pos]?.t !== ')') throw new ExpressionError('missing closing parenthesis');
      pos++;
      return e;
    }
    if (t.t === 'op' && t.v === '!') return { k: 'not', a: primary(depth + 1) };
    throw new ExpressionError(`unexpected ${t.t === 'op' ? t.v : t.t}`);
  };
  const binary = (minPrec: number, depth: number): ExprNode => {
    let left = primary(depth);
    for (;;) {
      const t = toks[pos];
      if (!t || t.t !== 'op') break;
      const prec = BINARY_PREC[t.v];
      if (prec === undefined || prec < minPrec) break;
      pos++;
      const right = binary(prec + 1, depth);
      if (t.v === '&' || t.v === '|') {
        const k = t.v === '&' ? 'and' : 'or';
        if (left.k === k) left.xs.push(right);
        else left = { k, xs: [left, right] };
      } else if (t.v === '+' || t.v === '-' || t.v === '*' || t.v === '/') {
        left = { k: 'arith', op: t.v, a: left, b: right };
      } else {
        left = { k: 'cmp', op: t.v as '>' | '>=' | '<' | '<=' | '==' | '!=', a: left, b: right };
      }
    }
    return left;
  };
  const e = binary(0, 0);
  if (pos !== toks.length) throw new ExpressionError(`unexpected token at position ${pos}`);
  return e;
}

/** Every atom of an expression (for dependency analysis). */
export function collectAtoms(e: ExprNode, out: AtomNode[] = []): AtomNode[] {
  switch (e.k) {
    case 'atom':
      out.push(e);
      break;
    case 'not':
      collectAtoms(e.a, out);
      break;
    case 'and':
    case 'or':
      for (const x of e.xs) collectAtoms(x, out);
      break;
    case 'cmp':
    case 'arith':
      collectAtoms(e.a, out);
      collectAtoms(e.b, out);
      break;
    case 'num':
      break;
  }
  return out;
}
