// A cheap necessary condition for a phrase regexp: literals one of which every match must contain.
// The body rules run some eighty case-insensitive regexps over each message's text, and most
// never match; one pass over the text finds which literals occur, in either case (LiteralScanner),
// and a regexp none of whose literals occurs is not run at all.

/** A regexp with the literals one of which every match contains (none known: always run). */
export interface GatedRegExp {
  re: RegExp;
  /** Lower-case ASCII literals; a match contains at least one of them. Undefined: no gate. */
  anyOf?: string[];
}

/** Shortest literal worth a substring search. */
const MIN_GATE = 3;
const LITERAL = /^[a-z0-9 '%-]$/i;

/** Index just past the `]` closing the class opened at `i`. */
function skipClass(src: string, i: number): number {
  for (let j = i + 1; j < src.length; j++) {
    if (src[j] === '\\') j++;
    else if (src[j] === ']') return j + 1;
  }
  return src.length;
}

/** Index of the `)` closing the group opened at `i` (escapes and classes skipped). */
function groupEnd(src: string, i: number): number {
  let depth = 0;
  for (let j = i; j < src.length; j++) {
    const c = src[j];
    if (c === '\\') j++;
    else if (c === '[') j = skipClass(src, j) - 1;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j;
  }
  return src.length;
}

/** The better of two literal sets to gate on: the one whose shortest literal is longer, then the smaller. */
function better(a: string[] | undefined, b: string[]): string[] {
  if (!a) return b;
  const minA = Math.min(...a.map((l) => l.length));
  const minB = Math.min(...b.map((l) => l.length));
  if (minB !== minA) return minB > minA ? b : a;
  return b.length < a.length ? b : a;
}

/**
 * Literals one of which every match of one top-level branch must contain: the longest run of
 * plain characters outside groups, or a required group whose every alternative has such
 * literals (`\b(?:debt|loan)`), whichever gates better; undefined when neither is long enough.
 */
function branchLiterals(src: string): string[] | undefined {
  let best: string[] | undefined;
  let cur = '';
  const endRun = (): void => {
    if (cur.length >= MIN_GATE) best = better(best, [cur.toLowerCase()]);
    cur = '';
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') { endRun(); i++; continue; }
    if (c === '[') { endRun(); i = skipClass(src, i) - 1; continue; }
    if (c === '(') {
      endRun();
      const end = groupEnd(src, i);
      const next = src[end + 1];
      // A group that may match nothing (?, *, {0,…}) or a look-around requires none of its text.
      const optional = next === '?' || next === '*' || next === '{';
      const body = src.slice(i + 1, end);
      const inner = body.startsWith('?:') ? body.slice(2) : body.startsWith('?') ? undefined : body;
      if (!optional && inner !== undefined) {
        const lits = alternativesLiterals(inner);
        if (lits) best = better(best, lits);
      }
      i = end;
      continue;
    }
    if (c === ')') { endRun(); continue; }
    if (c === '?' || c === '*' || c === '{') {
      // The character before is optional (or repeated a counted number of times, maybe none).
      cur = cur.slice(0, -1);
      endRun();
      if (c === '{') while (i < src.length && src[i] !== '}') i++;
      continue;
    }
    if (!LITERAL.test(c)) { endRun(); continue; }
    cur += c;
  }
  endRun();
  return best;
}

/** Literals one of which every match of an alternation must contain: the union over its branches. */
function alternativesLiterals(src: string): string[] | undefined {
  const out = new Set<string>();
  for (const branch of topLevelBranches(src)) {
    const lits = branchLiterals(branch);
    if (!lits) return undefined;
    for (const l of lits) out.add(l);
  }
  return [...out];
}

/** Splits a source at its top-level `|` (not inside groups or classes). */
function topLevelBranches(src: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[') i = skipClass(src, i) - 1;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) { out.push(src.slice(start, i)); start = i + 1; }
  }
  out.push(src.slice(start));
  return out;
}

export function gate(re: RegExp): GatedRegExp {
  // Unicode case folding lets non-ASCII letters match ASCII ones (K, the Kelvin sign, matches k),
  // which an ASCII-only search would miss: such regexps are not gated.
  if (re.flags.includes('i') && (re.unicode || re.flags.includes('v'))) return { re };
  const anyOf = alternativesLiterals(re.source);
  return anyOf ? { re, anyOf } : { re };
}

/** Whether `g` matches `text`; `found` holds the gate literals `text` contains (LiteralScanner). */
export function gatedTest(g: GatedRegExp, text: string, found: ReadonlySet<string>): boolean {
  if (g.anyOf && !g.anyOf.some((l) => found.has(l))) return false;
  return g.re.test(text);
}
