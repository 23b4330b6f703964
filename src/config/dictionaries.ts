// zstd dictionaries named in workers.normal (zstd_input_dictionary / zstd_output_dictionary):
// read once at load so a missing file, an id that contradicts the file or tables zstd cannot
// load are config errors, not a 400 or 500 on the first compressed scan.

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { dictionaryProblem } from '../http/zstd.js';
import type { ConfigIssue } from './errors.js';

export interface ZstdDictionary {
  /** Id clients send in the `Dictionary` header. */
  id: number;
  /** Absolute path it was read from. */
  file: string;
  data: Buffer;
}

const ZSTD_DICT_MAGIC = 0xec30a437; // a trained ("formatted") dictionary starts with this, then its id
const MAX_DICTIONARY_BYTES = 16 * 1024 * 1024; // dictionaries are KiB-sized; this bounds a wrong path (e.g. a log)

export async function loadDictionary(
  dir: string,
  entry: { file: string; id?: number | undefined } | undefined,
  keyPath: string,
  blame: string,
): Promise<{ dictionary?: ZstdDictionary; issues: ConfigIssue[] }> {
  if (!entry) return { issues: [] };
  const fail = (key: string, expected: string, found: string) => ({ issues: [{ file: blame, path: `${keyPath}${key}`, expected, found }] });
  const file = resolve(dir, entry.file);
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (err) {
    return fail('', 'a readable dictionary file', `${JSON.stringify(entry.file)} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (data.length === 0 || data.length > MAX_DICTIONARY_BYTES) {
    return fail('', `a dictionary of 1 to ${MAX_DICTIONARY_BYTES} bytes`, `${data.length} bytes`);
  }
  const stored = data.length >= 8 && data.readUInt32LE(0) === ZSTD_DICT_MAGIC ? data.readUInt32LE(4) : undefined;
  if (stored !== undefined && entry.id !== undefined && stored !== entry.id) {
    return fail('.id', `the id stored in the dictionary file (${stored})`, String(entry.id));
  }
  // The transport takes the id from the file (as Rspamd does), so a raw-content dictionary,
  // which stores none, could never be selected by a client.
  if (stored === undefined) return fail('', 'a trained zstd dictionary (`zstd --train`; it stores its id)', `${JSON.stringify(entry.file)} (raw content)`);
  const problem = dictionaryProblem(data);
  if (problem !== undefined) return fail('', 'a zstd dictionary that zstd can load', `${JSON.stringify(entry.file)} (${problem})`);
  return { dictionary: { id: stored, file, data }, issues: [] };
}
