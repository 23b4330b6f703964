// Pure renderers for the verdict headers (no Task access): tested on their own.
import type { SymbolResult, Verdict } from '../../plugin-api/index.js';

const fmt2 = (n: number): string => n.toFixed(2);

/** `default: False [8.40 / 15.00]; SYM(1.00)[opt,…]; …`, one symbol per folded line. */
export function spamdResult(v: Verdict, newline: string, sortBy: 'score' | 'name' = 'score'): string {
  const syms = [...v.symbols];
  if (sortBy === 'name') syms.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  else syms.sort((a, b) => Math.abs(b.score) - Math.abs(a.score) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const head = `default: ${v.action === 'reject' ? 'True' : 'False'} [${fmt2(v.score)} / ${fmt2(v.requiredScore)}]`;
  return [head, ...syms.map(symbolEntry)].join(`;${newline}\t`);
}

function symbolEntry(s: SymbolResult): string {
  return `${s.name}(${fmt2(s.score)})[${(s.options ?? []).join(',')}]`;
}

export function spamdBar(score: number, positive = '+', negative = '-', neutral = '/'): string {
  if (score >= 1) return positive.repeat(Math.floor(score));
  if (score <= -1) return negative.repeat(Math.floor(-score));
  return neutral;
}

/** Stars for X-Spam-Level, or undefined below 1 (no header then). */
export function spamLevel(score: number, char = '*'): string | undefined {
  return score >= 1 ? char.repeat(Math.floor(score)) : undefined;
}

/** Actions after which the message is not treated as spam by downstream filters. */
const NOT_SPAM_ACTIONS = new Set(['no action', 'greylist']);

export function isSpamAction(action: string): boolean {
  return !NOT_SPAM_ACTIONS.has(action);
}

export function spamStatus(v: Verdict): string {
  return `${isSpamAction(v.action) ? 'Yes' : 'No'}, score=${fmt2(v.score)}`;
}

export function preResult(v: Verdict): string | undefined {
  const p = v.preResult;
  if (!p) return undefined;
  const parts = [`action=${p.action}`, `module=${p.module}`];
  if (p.message) parts.push(p.message);
  return parts.join('; ');
}
