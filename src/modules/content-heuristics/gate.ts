// A cheap necessary condition for a phrase regexp: literal text that every match must contain.
// The body rules run some eighty case-insensitive regexps over each message's text, and most
// never match; a substring search of the lower-cased text is many times cheaper than a regexp
// scan, so a regexp whose literal is absent is not run at all.

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

/**
 * The longest run of plain literal characters outside groups in one top-level branch, which any
 * match of the branch must contain; undefined when the branch has none long enough.
 */
function branchLiteral(src: string): string | undefined {
  let best = '';
  let cur = '';
  let depth = 0;
  const endRun = (): void => {
    if (cur.length > best.length) best = cur;
    cur = '';
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') { endRun(); i++; continue; }
    if (c === '[') { endRun(); i = skipClass(src, i) - 1; continue; }
    if (c === '(') { endRun(); depth++; continue; }
    if (c === ')') { endRun(); depth--; continue; }
    if (depth > 0) continue;
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
  return best.length >= MIN_GATE ? best.toLowerCase() : undefined;
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
  const literals = topLevelBranches(re.source).map(branchLiteral);
  if (literals.some((l) => l === undefined)) return { re };
  return { re, anyOf: [...new Set(literals as string[])] };
}

/** Whether `g` matches `text`; `lower` is `text.toLowerCase()`. */
export function gatedTest(g: GatedRegExp, text: string, lower: string): boolean {
  if (g.anyOf && !g.anyOf.some((l) => lower.includes(l))) return false;
  return g.re.test(text);
}
