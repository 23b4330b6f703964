// How much a mismatch between the shown and the real registrable domain looks like phishing
// (Rspamd phishing.lua): near-identical names are the dangerous ones; unrelated names are
// usually link trackers, so they weigh less.
import { getDomainWithoutSuffix } from 'tldts';

/** Levenshtein distance where a substitution costs 2 (an insertion plus a deletion), as in Rspamd. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const sub = prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 2);
      cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, sub));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

const ASCII = /^[\x01-\x7f]*$/;
const LATIN = /\p{Script=Latin}/u;
const NON_LATIN_LETTER = /(?=\p{L})\P{Script=Latin}/u;

/** A label mixing Latin with another script (`pаypal` with a Cyrillic а): a confusable spoof. */
function mixedScript(label: string): boolean {
  return LATIN.test(label) && NON_LATIN_LETTER.test(label);
}

/** The registrable label (`paypal` of `paypal.co.uk`), or the whole domain when it has no known suffix. */
function label(domain: string): string {
  return getDomainWithoutSuffix(domain) || domain;
}

/** Weight in 0..1 of a mismatch `shown` → `real`; 0 means not phishing. */
export function phishingWeight(shown: string, real: string): number {
  const l1 = label(real);
  const l2 = label(shown);
  if (mixedScript(l1) || mixedScript(l2)) return 1;
  const d = (2 * editDistance(l1, l2)) / (l1.length + l2.length);
  if (d === 0) return 0;
  if (d <= 0.3) return 1;
  if (d <= 1) return Math.tanh(3 * (1.1 - d));
  return ASCII.test(l1) !== ASCII.test(l2) ? 1 : 0.5;
}
