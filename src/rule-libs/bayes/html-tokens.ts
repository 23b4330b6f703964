// HTML metatokens (a mailsift extension of Rspamd's metatokens): the tags an HTML part is built
// from and how many links and images it carries. Mailers and spam kits have recognisable habits
// (font soup, tables, hidden images) that the visible words alone do not show.
import type { Message } from '../../message/types.js';

/** Distinct tag names turned into tokens per message at most: bounds a tag-soup spam's weight. */
const MAX_TAG_TOKENS = 30;

/** Counts bucketed on a log2 scale: 0, 1, 2-3, 4-7, … up to 64+ (exact counts never recur). */
function bucket(n: number): number {
  return n === 0 ? 0 : Math.min(7, Math.floor(Math.log2(n)) + 1);
}

/** Appends the HTML metatokens of `msg` to `out`. */
export function htmlTokens(msg: Message, out: string[]): void {
  const tags = new Set<string>();
  let links = 0;
  let images = 0;
  let unbalanced = false;
  let htmlParts = 0;
  for (const tp of msg.textParts) {
    const h = tp.html;
    if (!h) continue;
    htmlParts++;
    for (const t of h.tags) tags.add(t);
    links += h.links.length;
    images += h.images.length;
    unbalanced ||= h.unbalanced;
  }
  if (htmlParts === 0) return;
  let n = 0;
  for (const t of tags) {
    if (n++ >= MAX_TAG_TOKENS) break;
    out.push(`#tag:${t}`);
  }
  out.push(`#hl:${bucket(links)}`, `#hi:${bucket(images)}`);
  if (unbalanced) out.push('#hu');
}
