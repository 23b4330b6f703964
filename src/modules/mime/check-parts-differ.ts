// R_PARTS_DIFFER (Rspamd rules/misc.lua over the `parts_distance` its message parser computes):
// the plain-text and HTML alternatives of a message say different things, e.g. a short decoy text
// part next to an HTML pitch.
import type { Task, TextPart } from '../../plugin-api/index.js';
import { MAX_PARTS_DIFFER_CELLS, MAX_PARTS_DIFFER_CHARS } from '../../message/limits.js';

/** Rspamd 3.4 does not compare parts of more words than this together (the distance is then 0). */
const MAX_WORDS = 8192;
/** Above this many words in both parts the difference counts in full; below, half. */
const CONFIDENT_WORDS = 30;
const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased words as small integers (one table for both parts, so equal words get equal ids). */
function wordIds(tp: TextPart, ids: Map<string, number>, room: number): number[] | undefined {
  const text = tp.text.length > MAX_PARTS_DIFFER_CHARS ? tp.text.slice(0, MAX_PARTS_DIFFER_CHARS) : tp.text;
  const out: number[] = [];
  for (const m of text.matchAll(WORD)) {
    if (out.length >= room) return undefined;
    const w = m[0].toLowerCase();
    let id = ids.get(w);
    if (id === undefined) ids.set(w, (id = ids.size));
    out.push(id);
  }
  return out;
}

/**
 * Rspamd 3.4's word distance: insertions and deletions cost 1, and a diagonal step costs 2 when
 * the words are equal and nothing when they differ (Rspamd's table has the equality test the
 * other way round from the usual edit distance, and this follows it). So the result is close to
 * the difference of the word counts, its lower bound, which stands in for it beyond
 * MAX_PARTS_DIFFER_CELLS: the table only exceeds it for text repeating one word over and over.
 */
export function wordDistance(a: readonly number[], b: readonly number[]): number {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_PARTS_DIFFER_CELLS) return Math.abs(n - m);
  const col = new Int32Array(n + 1);
  for (let y = 1; y <= n; y++) col[y] = y;
  for (let x = 1; x <= m; x++) {
    col[0] = x;
    let diag = x - 1;
    const wb = b[x - 1];
    for (let y = 1; y <= n; y++) {
      const old = col[y]!;
      const sub = diag + (a[y - 1] === wb ? 2 : 0);
      const ins = old + 1;
      const del = col[y - 1]! + 1;
      col[y] = sub < ins ? (sub < del ? sub : del) : ins < del ? ins : del;
      diag = old;
    }
  }
  return col[n]!;
}

export function checkPartsDiffer(task: Task): void {
  const tps = task.message.textParts;
  if (tps.length !== 2) return;
  const [p1, p2] = tps as [TextPart, TextPart];
  if (p1.part.parent?.contentType.type !== 'multipart/alternative') return;
  if (p1.empty || p2.empty) return;
  const ids = new Map<string, number>();
  const w1 = wordIds(p1, ids, MAX_WORDS + 1);
  const w2 = w1 && wordIds(p2, ids, MAX_WORDS + 1 - w1.length);
  if (!w1 || !w2) return;
  const total = w1.length + w2.length;
  if (total === 0) return;
  const diff = wordDistance(w1, w2) / total;
  if (diff < 0.5) return;
  const weight = total > CONFIDENT_WORDS ? (diff - 0.5) * 2 : diff - 0.5;
  task.insert('R_PARTS_DIFFER', weight, `${(100 * diff).toFixed(1)}%`);
}
