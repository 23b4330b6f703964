// Reading a list's answer: return codes (patterns), return bits (mask), or the rule's own
// symbol; a failed lookup becomes `<symbol>_FAIL`. Pure functions over the answer data.
import type { CompiledRule } from './compile.js';

export interface Hit {
  /** Final symbol name (check-type prefix applied). */
  symbol: string;
  /** Rspamd's option text: `<element>:<label>` or `<element>:<label>:<answer>` for unknown codes. */
  option: string;
  label: string;
}

function ipv4Number(ip: string): number | undefined {
  const p = ip.split('.');
  if (p.length !== 4) return undefined;
  const n = p.map(Number);
  if (n.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) return undefined;
  return ((n[0]! << 24) >>> 0) + (n[1]! << 16) + (n[2]! << 8) + n[3]!;
}

/** Symbols (before prefixing) an answer address maps to; empty when nothing matched. */
export function symbolsForAnswer(rule: CompiledRule, answer: string): string[] {
  const out: string[] = [];
  if (rule.returnbits) {
    const num = ipv4Number(answer);
    if (num !== undefined) {
      for (const [sym, bits] of rule.returnbits) {
        // Every bit of a symbol that is set counts (Rspamd inserts once per bit; one-shot symbols dedupe).
        if (bits.some((b) => (num & b) >>> 0 === b)) out.push(sym);
      }
    }
  } else if (rule.returncodes) {
    for (const [sym, patterns] of rule.returncodes) if (patterns.some((re) => re.test(answer))) out.push(sym);
  }
  return out;
}

function prefixed(rule: CompiledRule, symbol: string, label: string): string {
  const p = rule.prefixes?.[label];
  return p ? `${p}_${symbol}` : symbol;
}

/** Hits of one successful lookup for every label that found the element. */
export function hitsForAnswers(rule: CompiledRule, orig: string, labels: Iterable<string>, answers: readonly string[]): Hit[] {
  const hits: Hit[] = [];
  const labelList = [...labels];
  const all = (sym: string, extra?: string): void => {
    for (const label of labelList) hits.push({ symbol: prefixed(rule, sym, label), option: extra ? `${orig}:${label}:${extra}` : `${orig}:${label}`, label });
  };
  if (!rule.returncodes && !rule.returnbits) {
    if (answers.length > 0) all(rule.symbol);
    return hits;
  }
  for (const a of answers) {
    const syms = symbolsForAnswer(rule, a);
    if (syms.length > 0) for (const s of syms) all(s);
    else if (rule.unknown) all(rule.symbol, a);
  }
  return hits;
}
