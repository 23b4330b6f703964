// Starting material: the golden fixtures (captured requests of real clients, Rspamd's test
// messages) and the development split of the corpus (bench/corpus.ts: easy-ham-1, hard-ham-1,
// spam-1 only; the other folders are held out and never read). Loaded in sorted order so a
// seed index means the same file on every run.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadCorpus } from '../corpus.js';

export interface Seeds {
  /** Whole messages: fixtures first, then the corpus. */
  messages: Buffer[];
  /** Messages of at most SMALL_MESSAGE bytes, for surfaces that fuzz the framing, not the content. */
  small: Buffer[];
  /** Raw requests recorded from real clients (fixtures/scan/<case>/request.bin). */
  scanRequests: Buffer[];
  /** Whole milter sessions an MTA sent (fixtures/milter/<client>/<case>/mta-to-rspamd.bin). */
  milterSessions: Buffer[];
  /** spamc / RSPAMC requests of real clients (fixtures/spamc/…/client-request.bin and messages/req-rspamc-*.bin). */
  spamcRequests: Buffer[];
}

/** A recorded spamc-side request in the legacy text protocol (not HTTP). */
function isLegacyRequest(b: Buffer): boolean {
  return /^[A-Z_]+ R?SPAMC\//.test(b.toString('latin1', 0, 40));
}

/** Messages this small keep framing surfaces fast (the scan is not what they test). */
const SMALL_MESSAGE = 16 * 1024;

export function sharedDir(root: string): string {
  return process.env.MAILSIFT_SHARED ?? join(root, '..', 'shared');
}

async function files(dir: string, filter: (name: string) => boolean): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return (await readdir(dir)).filter(filter).sort().map((n) => join(dir, n));
}

export async function loadSeeds(root: string, withCorpus = true): Promise<Seeds> {
  const fixtures = join(sharedDir(root), 'fixtures');
  const messages: Buffer[] = [];
  for (const f of await files(join(fixtures, 'scan', 'messages'), (n) => n.endsWith('.eml'))) messages.push(await readFile(f));
  for (const f of await files(join(fixtures, 'rspamd-test-messages'), (n) => n.endsWith('.eml'))) messages.push(await readFile(f));
  for (const f of await files(join(fixtures, 'httpcrypt', 'messages'), (n) => n.endsWith('.eml'))) messages.push(await readFile(f));
  if (withCorpus) for (const m of await loadCorpus(root)) messages.push(m.bytes);
  if (messages.length === 0) throw new Error(`no seed messages: neither ${fixtures} nor the corpus could be read`);
  const scanRequests: Buffer[] = [];
  for (const dir of await files(join(fixtures, 'scan'), (n) => /^[a-z]\d/.test(n))) {
    const f = join(dir, 'request.bin');
    if (existsSync(f)) scanRequests.push(await readFile(f));
  }
  const milterSessions: Buffer[] = [];
  for (const client of await files(join(fixtures, 'milter'), (n) => !n.includes('.') && n !== 'setup')) {
    for (const dir of await files(client, () => true)) {
      const f = join(dir, 'mta-to-rspamd.bin');
      if (existsSync(f)) milterSessions.push(await readFile(f));
    }
  }
  const spamcRequests: Buffer[] = [];
  for (const sub of ['direct', 'via-http-proxy']) {
    for (const dir of await files(join(fixtures, 'spamc', sub), () => true)) {
      const f = join(dir, 'client-request.bin');
      if (existsSync(f)) {
        const b = await readFile(f);
        if (isLegacyRequest(b)) spamcRequests.push(b);
      }
    }
  }
  for (const f of await files(join(fixtures, 'spamc', 'messages'), (n) => n.startsWith('req-rspamc') && n.endsWith('.bin'))) spamcRequests.push(await readFile(f));
  const small = messages.filter((m) => m.length <= SMALL_MESSAGE);
  return { messages, small: small.length ? small : messages, scanRequests, milterSessions, spamcRequests };
}
