// The selector grammar, as Rspamd master reads it: a list of expressions
// separated by `;` or `*`, each an extractor call, an optional `:method` and `.transform`s.
// Hand-written descent over the text: every loop either consumes at least one character or
// stops, and every repetition the input controls has a named cap, so any string ends in a
// result or a coded SelectorError. Names are checked against the function tables later
// (compile.ts); this file knows only the shape.
//
// Facts kept from Rspamd: quoted arguments keep their backslashes as written (`'\w'` is the two
// characters `\w`); whitespace is allowed after a name, inside parentheses and braces, around
// `,` `=` `;` `*` and at the end, but not at the start nor before `.` or `:`; an argument list
// may repeat commas (`(a,,b)`). The whole text must be consumed (Rspamd 3.4 silently ignored what
// followed the longest valid prefix; master rejects it, and so do we).

import { SelectorError } from './errors.js';

/** Longest selector text read (a selector is a line of configuration, not a document). */
export const MAX_SELECTOR_CHARS = 8192;
/** Expressions in one list (`a;b;c`). */
export const MAX_SELECTORS = 64;
/** Method plus transforms after one extractor. */
export const MAX_PIPELINE = 64;
/** Arguments in one call, items in one `{…}` list, pairs in one named table. */
export const MAX_ARGS = 128;

/** An argument: a word or string, a `{a, b}` list, or a `{k = v, …}` table. */
export type SelectorArg = string | string[] | { [key: string]: string | string[] };

export interface SelectorCall {
  name: string;
  args: SelectorArg[];
  /** Offset of the name in the text (for error messages). */
  at: number;
}

export interface ParsedExpr {
  extractor: SelectorCall;
  /** `:name(…)` right after the extractor. */
  method?: SelectorCall;
  transforms: SelectorCall[];
}

const SPACE = new Set([' ', '\t', '\n']);
/** Characters a bare-word argument cannot contain (it ends there). */
const ARG_STOP = new Set(["'", '"', '\r', '\n', '\f', '\\', ',', ')', '(', '}', '{', '=', ' ']);

function isAsciiAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
/** First character of a name or a bare argument: letters, digits, `-`, any non-ASCII letter. */
function isNameStart(c: number): boolean {
  return isAsciiAlnum(c) || c === 0x2d || c >= 0x80;
}
function isNameRest(c: number): boolean {
  return isNameStart(c) || c === 0x5f;
}

class Reader {
  pos = 0;
  constructor(readonly s: string) {}
  get done(): boolean {
    return this.pos >= this.s.length;
  }
  peek(): string {
    return this.s[this.pos] ?? '';
  }
  spaces(): void {
    while (!this.done && SPACE.has(this.peek())) this.pos++;
  }
  eat(ch: string): boolean {
    if (this.peek() !== ch) return false;
    this.pos++;
    return true;
  }
  fail(what: string): never {
    const found = this.done ? 'end of selector' : `'${this.peek()}'`;
    throw new SelectorError('ERR_SELECTOR_SYNTAX', `invalid selector: expected ${what}, found ${found}`, this.pos);
  }
}

function readName(r: Reader, what: string): SelectorCall {
  const at = r.pos;
  if (r.done || !isNameStart(r.s.charCodeAt(r.pos))) r.fail(what);
  r.pos++;
  while (!r.done && isNameRest(r.s.charCodeAt(r.pos))) r.pos++;
  return { name: r.s.slice(at, r.pos), args: [], at };
}

function readQuoted(r: Reader): string {
  const quote = r.peek();
  r.pos++;
  const start = r.pos;
  for (;;) {
    if (r.done) r.fail(`closing ${quote}`);
    const c = r.peek();
    if (c === quote) break;
    if (c === '\r' || c === '\n' || c === '\f') r.fail(`closing ${quote}`);
    // A backslash protects the next character (even a quote); both stay in the value.
    r.pos += c === '\\' && r.pos + 1 < r.s.length ? 2 : 1;
  }
  const value = r.s.slice(start, r.pos);
  r.pos++;
  return value;
}

/** A word, a quoted string, or undefined when neither starts here. */
function readScalar(r: Reader): string | undefined {
  const c = r.peek();
  if (c === "'" || c === '"') return readQuoted(r);
  if (r.done || !isNameStart(r.s.charCodeAt(r.pos))) return undefined;
  const start = r.pos;
  r.pos++;
  while (!r.done && !ARG_STOP.has(r.peek())) r.pos++;
  return r.s.slice(start, r.pos);
}

/** Zero or more commas with spaces around them. */
function commas(r: Reader): void {
  for (;;) {
    const save = r.pos;
    r.spaces();
    if (!r.eat(',')) {
      r.pos = save;
      return;
    }
    r.spaces();
  }
}

function capCount(n: number, r: Reader): void {
  if (n >= MAX_ARGS) throw new SelectorError('ERR_SELECTOR_TOO_LARGE', `invalid selector: more than ${MAX_ARGS} arguments`, r.pos);
}

/** `{` already read: `{ a, b }` items until `}`. */
function readListBody(r: Reader): string[] {
  const items: string[] = [];
  r.spaces();
  for (;;) {
    const v = readScalar(r);
    if (v === undefined) break;
    capCount(items.length, r);
    items.push(v);
    commas(r);
  }
  r.spaces();
  if (!r.eat('}')) r.fail("'}'");
  return items;
}

/** A `{…}` argument: a table of `key = value` pairs, else a list of values. */
function readBraced(r: Reader): SelectorArg {
  r.pos++; // '{'
  const afterBrace = r.pos;
  const table: { [key: string]: string | string[] } = {};
  r.spaces();
  let pairs = 0;
  for (;;) {
    const save = r.pos;
    const key = readScalar(r);
    if (key === undefined) break;
    r.spaces();
    if (!r.eat('=')) {
      r.pos = save;
      break;
    }
    r.spaces();
    let value: string | string[] | undefined;
    if (r.peek() === '{') {
      r.pos++;
      value = readListBody(r);
    } else {
      value = readScalar(r);
    }
    if (value === undefined) r.fail('a value after =');
    capCount(pairs++, r);
    // Keys are the user's words: an own property even for `__proto__`.
    Object.defineProperty(table, key, { value, enumerable: true, writable: true, configurable: true });
    commas(r);
  }
  r.spaces();
  if (r.eat('}')) return table;
  if (pairs > 0) r.fail("'}'");
  r.pos = afterBrace;
  return readListBody(r);
}

/** `(` already seen: arguments until `)`. */
function readArgs(r: Reader): SelectorArg[] {
  r.pos++; // '('
  r.spaces();
  const args: SelectorArg[] = [];
  for (;;) {
    let arg: SelectorArg | undefined;
    if (r.peek() === '{') arg = readBraced(r);
    else arg = readScalar(r);
    if (arg === undefined) break;
    capCount(args.length, r);
    args.push(arg);
    commas(r);
  }
  r.spaces();
  if (!r.eat(')')) r.fail("')' or an argument");
  return args;
}

/** A name, spaces, then optional `( … )`. */
function readCall(r: Reader, what: string): SelectorCall {
  const call = readName(r, what);
  r.spaces();
  if (r.peek() === '(') call.args = readArgs(r);
  return call;
}

function readExpr(r: Reader): ParsedExpr {
  const expr: ParsedExpr = { extractor: readCall(r, 'an extractor name'), transforms: [] };
  if (r.eat(':')) expr.method = readCall(r, 'a method name');
  while (r.eat('.')) {
    if (expr.transforms.length >= MAX_PIPELINE) throw new SelectorError('ERR_SELECTOR_TOO_LARGE', `invalid selector: more than ${MAX_PIPELINE} transforms`, r.pos);
    expr.transforms.push(readCall(r, 'a transform name'));
  }
  return expr;
}

/** Parses the text of a selector list; throws a SelectorError saying what and where. */
export function parseSelector(text: string): ParsedExpr[] {
  if (typeof text !== 'string' || text.length === 0) throw new SelectorError('ERR_SELECTOR_SYNTAX', 'invalid selector: empty');
  if (text.length > MAX_SELECTOR_CHARS) throw new SelectorError('ERR_SELECTOR_TOO_LARGE', `invalid selector: longer than ${MAX_SELECTOR_CHARS} characters`);
  const r = new Reader(text);
  const out: ParsedExpr[] = [readExpr(r)];
  for (;;) {
    const save = r.pos;
    r.spaces();
    if (!r.eat(';') && !r.eat('*')) {
      r.pos = save;
      break;
    }
    r.spaces();
    if (out.length >= MAX_SELECTORS) throw new SelectorError('ERR_SELECTOR_TOO_LARGE', `invalid selector: more than ${MAX_SELECTORS} selectors`, r.pos);
    out.push(readExpr(r));
  }
  r.spaces();
  if (!r.done) r.fail("'.', ':', ';' or the end");
  return out;
}
