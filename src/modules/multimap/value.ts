// Reading a map value the way Rspamd's multimap does: `SYMBOL`, `SCORE`, `SYMBOL:SCORE` or
// `SYMBOL:SCORE:opt1,opt2`. Pure; tested through the module.

export interface ValueResult {
  symbol: string;
  weight: number;
  options: string[];
}

/**
 * `allowed`: symbols a value may name (the rule symbol and its `symbols` list). A value naming
 * anything else, or any value when `multisymbol` is off, keeps the rule symbol and becomes an
 * option when it is not a plain number.
 */
export function readValue(value: string, matched: string, ruleSymbol: string, allowed: ReadonlySet<string>, multisymbol: boolean): ValueResult {
  const v = value.trim();
  const shown = matched === '' ? [] : [matched];
  if (v === '' || v === '1' || v === 'true') return { symbol: ruleSymbol, weight: 1, options: shown };
  const asNumber = Number(v);
  if (Number.isFinite(asNumber)) return { symbol: ruleSymbol, weight: asNumber, options: shown };
  if (multisymbol) {
    const [sym, score, opts] = splitValue(v);
    if (allowed.has(sym)) {
      const w = score === undefined || score === '' ? 1 : Number(score);
      return {
        symbol: sym,
        weight: Number.isFinite(w) ? w : 1,
        options: opts === undefined ? shown : opts.split(',').map((o) => o.trim()).filter((o) => o !== ''),
      };
    }
  }
  return { symbol: ruleSymbol, weight: 1, options: [v] };
}

function splitValue(v: string): [string, string | undefined, string | undefined] {
  const first = v.indexOf(':');
  if (first < 0) return [v, undefined, undefined];
  const second = v.indexOf(':', first + 1);
  if (second < 0) return [v.slice(0, first), v.slice(first + 1), undefined];
  return [v.slice(0, first), v.slice(first + 1, second), v.slice(second + 1)];
}
