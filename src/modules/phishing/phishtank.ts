// PHISHED_PHISHTANK (Rspamd 3.4 phishing.lua, check_phishing_dns): PhishTank's list is published
// as DNS TXT records named by a hash of the URL. For a URL with a host and a path the name is the
// first 32 characters of Rspamd's base32 (z-base-32 alphabet, least significant bit first) of the
// BLAKE2b-512 digest of host then path, written back to back, under the suffix; a URL that also
// has a query is asked a second time with host, path and query hashed. Any TXT answer is a hit
// and its strings are the symbol's options (3.4 does not read them): 1.0 for the host+path name
// of a URL without query and for the host+path+query name, 0.3 for the host+path name of a URL
// with a query (the listed page, maybe not this query). A failed lookup (NXDOMAIN, SERVFAIL,
// time-out, the per-message lookup cap) inserts nothing, as in Rspamd.
import { createHash } from 'node:crypto';
import { base32Encode } from '../../core/base32.js';
import type { Task } from '../../plugin-api/index.js';
import type { FoundUrl } from '../../message/types.js';
import { urlParts } from './url-parts.js';

export const PHISHTANK_SYMBOL = 'PHISHED_PHISHTANK';
/** Characters of the encoded digest used as the query label (Rspamd: `sub(1, 32)`). */
const LABEL_CHARS = 32;

/** The query name for these URL parts (byte strings, see url-parts.ts). */
export function phishtankName(parts: readonly string[], suffix: string): string {
  const h = createHash('blake2b512');
  for (const p of parts) h.update(Buffer.from(p, 'latin1'));
  return `${base32Encode(h.digest()).slice(0, LABEL_CHARS)}.${suffix}`;
}

interface Lookup {
  name: string;
  weight: number;
}

/** The lookups of one message, each name once (the same host+path may appear in several URLs). */
export function phishtankLookups(urls: readonly FoundUrl[], suffix: string): Lookup[] {
  const byName = new Map<string, number>();
  for (const u of urls) {
    const p = urlParts(u.url, u.host);
    if (!p?.path) continue;
    const hostBytes = Buffer.from(p.host, 'utf8').toString('latin1');
    const hp = phishtankName([hostBytes, p.path], suffix);
    const w = p.query === undefined ? 1 : 0.3;
    byName.set(hp, Math.max(byName.get(hp) ?? 0, w));
    if (p.query !== undefined) byName.set(phishtankName([hostBytes, p.path, p.query], suffix), 1);
  }
  return [...byName].map(([name, weight]) => ({ name, weight }));
}

export async function checkPhishtank(task: Task, urls: readonly FoundUrl[], suffix: string): Promise<void> {
  await Promise.all(
    phishtankLookups(urls, suffix).map(async ({ name, weight }) => {
      const r = await task.dns.txt(name);
      if (r.ok && r.results.length > 0) task.insert(PHISHTANK_SYMBOL, weight, r.results.map(String));
    }),
  );
}
