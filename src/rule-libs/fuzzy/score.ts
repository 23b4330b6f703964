// From CHECK replies to symbols (Rspamd 3.4 formula): tanh-normalised hit
// counts, the probability factor, the text/image cross multipliers, single-weight semantics.
import type { FuzzyHash } from './message-hashes.js';
import type { FuzzyRule } from './rule.js';
import type { FuzzyReply } from './wire.js';

/** Images up to this size are discounted by how confident the match is; larger ones are not. */
const SMALL_IMAGE_BYTES = 32 * 1024;
/** "Found" threshold of a reply's probability. */
const FOUND_PROB = 0.5;
/** Text shorter than this does not count as a long text when weighing image matches. */
const LONG_TEXT_CHARS = 25;

export const FUZZY_ERROR_SYMBOLS: Record<number, string> = {
  403: 'FUZZY_RATELIMITED',
  415: 'FUZZY_ENCRYPTION_REQUIRED',
  503: 'FUZZY_FORBIDDEN',
};
/** Reply value of a skipped hash: silently ignored on CHECK. */
const SKIPPED = 401;

export interface FuzzyResult {
  symbol: string;
  weight: number;
  option: string;
  type: FuzzyHash['type'];
  prob: number;
  flag: number;
  value: number;
  digest: string;
}

export interface MessageTextFacts {
  /** The message has a non-empty text part with words. */
  hasTextPart: boolean;
  /** …longer than ~25 characters. */
  hasLongText: boolean;
}

export interface Interpretation {
  results: FuzzyResult[];
  /** Error symbols to insert with the rule name as option. */
  errors: string[];
}

export function normalizeHits(value: number, hitsLimit: number): number {
  if (hitsLimit === 0) return 0;
  return Math.tanh(Math.E * value / hitsLimit);
}

export function textFacts(texts: readonly { text: string; empty: boolean }[]): MessageTextFacts {
  const nonEmpty = texts.filter((t) => !t.empty);
  return { hasTextPart: nonEmpty.length > 0, hasLongText: nonEmpty.some((t) => t.text.length > LONG_TEXT_CHARS) };
}

export function interpretReplies(rule: FuzzyRule, pairs: ReadonlyArray<{ hash: FuzzyHash; reply: FuzzyReply }>, facts: MessageTextFacts): Interpretation {
  const results: FuzzyResult[] = [];
  const errors = new Set<string>();
  for (const { hash, reply } of pairs) {
    if (reply.prob <= FOUND_PROB) {
      // Not found, or an error code in `value` (401 skipped is silent on CHECK).
      const sym = reply.value !== SKIPPED ? FUZZY_ERROR_SYMBOLS[reply.value] : undefined;
      if (sym) errors.add(sym);
      continue;
    }
    const queried = hash.digest.toString('hex');
    if (rule.skipHashes.has(queried)) continue;
    const entries = [{ value: reply.value, flag: reply.flag }, ...(reply.extra ?? [])];
    for (const e of entries) {
      const map = rule.mappings.get(e.flag);
      if (!map && rule.skipUnknown) continue;
      const symbol = map?.symbol ?? rule.symbol;
      let n = normalizeHits(e.value, map?.hitsLimit ?? rule.hitsLimit);
      if (hash.type === 'img') {
        if (hash.size <= SMALL_IMAGE_BYTES) n *= ((reply.prob - 0.5) * 2) ** 8;
      } else n *= Math.sqrt(reply.prob);
      const found = reply.digest && reply.digest.some((b) => b !== 0) ? reply.digest.toString('hex') : queried;
      results.push({
        symbol, weight: n, type: hash.type, prob: reply.prob, flag: e.flag, value: e.value, digest: found,
        option: `${e.flag}:${found.slice(0, 10)}:${reply.prob.toFixed(2)}:${hash.type}`,
      });
    }
  }
  // Cross multipliers: an image match counts less when the text did not match too.
  const txt = results.filter((r) => r.type === 'txt');
  const seenImg = results.some((r) => r.type === 'img');
  const probTxt = txt.reduce((m, r) => Math.max(m, r.prob), 0);
  for (const r of results) {
    if (r.type === 'img') {
      if (txt.length === 0) r.weight *= facts.hasLongText ? 0.25 : facts.hasTextPart ? 0.9 : 1;
      else if (probTxt < 0.75) r.weight *= probTxt > 0.5 ? probTxt : 0.5;
    } else if (r.type === 'txt' && seenImg) r.weight *= 1.1;
  }
  const kept = rule.weightThreshold === undefined ? results : results.filter((r) => r.weight >= rule.weightThreshold!);
  return { results: kept, errors: [...errors] };
}

/** Single semantics: per symbol the strongest weight, with every option. */
export function strongestBySymbol(results: readonly FuzzyResult[]): Map<string, { weight: number; options: string[] }> {
  const out = new Map<string, { weight: number; options: string[] }>();
  for (const r of results) {
    const cur = out.get(r.symbol);
    if (!cur) out.set(r.symbol, { weight: r.weight, options: [r.option] });
    else {
      cur.weight = Math.max(cur.weight, r.weight);
      if (!cur.options.includes(r.option)) cur.options.push(r.option);
    }
  }
  return out;
}
