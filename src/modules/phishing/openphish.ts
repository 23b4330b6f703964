// PHISHED_OPENPHISH (Rspamd 3.4 phishing.lua, check_phishing_map over the plain feed): the feed
// lists one phishing URL a line and is indexed by host. A message URL whose host is listed:
//   - same path (or, for a URL without path, a listed entry without path) and a matching query
//     (equal, or the entry has none): 1.0;
//   - same path but another query: 0.3 (a URL without path gets nothing here);
//   - no entry with its path: 0.1, only when the URL is also a phished link (PHISHING's mark).
// A URL without path counts an entry's query as matching whatever that entry's path (as Rspamd
// does). The option is the host.
import type { MapHandle } from '../../plugin-api/index.js';
import type { Task } from '../../plugin-api/index.js';
import type { FoundUrl } from '../../message/types.js';
import { urlParts } from './url-parts.js';

export const OPENPHISH_SYMBOL = 'PHISHED_OPENPHISH';
/** Listed URLs of one host kept at most: a scan walks them all for each URL of that host. */
const MAX_ENTRIES_PER_HOST = 4096;

interface Entry {
  path?: string;
  query?: string;
}

export interface FeedIndex {
  byHost: Map<string, Entry[]>;
}

/** Index the feed's lines (URLs) by host; lines that are not URLs are skipped, as Rspamd does. */
export function indexFeed(lines: Iterable<string>): FeedIndex {
  const byHost = new Map<string, Entry[]>();
  for (const line of lines) {
    const p = urlParts(line.trim());
    if (!p) continue;
    let list = byHost.get(p.host);
    if (!list) byHost.set(p.host, (list = []));
    if (list.length >= MAX_ENTRIES_PER_HOST) continue;
    const e: Entry = {};
    if (p.path !== undefined) e.path = p.path;
    if (p.query !== undefined) e.query = p.query;
    list.push(e);
  }
  return { byHost };
}

/** An index kept in step with its map: rebuilt when the map reloads. */
export function feedIndexOf(map: MapHandle): () => FeedIndex {
  let version = -1;
  let index: FeedIndex = { byHost: new Map() };
  return () => {
    if (map.version !== version) {
      version = map.version;
      index = indexFeed(map.keys());
    }
    return index;
  };
}

/** The weight of one message URL against the feed, undefined when it is not listed. */
export function openphishWeight(index: FeedIndex, u: FoundUrl): { weight: number; host: string } | undefined {
  const p = urlParts(u.url, u.host);
  if (!p) return undefined;
  const list = index.byHost.get(p.host);
  if (!list) return undefined;
  let foundPath = false;
  let foundQuery = false;
  const queryMatches = (e: Entry): boolean => e.query === undefined || (p.query !== undefined && p.query === e.query);
  for (const e of list) {
    if (p.path !== undefined) {
      if (e.path !== p.path) continue;
      foundPath = true;
      if (queryMatches(e)) foundQuery = true;
    } else {
      if (e.path === undefined) foundPath = true;
      if (queryMatches(e)) foundQuery = true;
    }
  }
  if (foundPath) {
    if (foundQuery) return { weight: 1, host: p.host };
    return p.path !== undefined ? { weight: 0.3, host: p.host } : undefined;
  }
  return u.flags.has('phished') ? { weight: 0.1, host: p.host } : undefined;
}

export function checkOpenphish(task: Task, urls: readonly FoundUrl[], index: FeedIndex): void {
  if (index.byHost.size === 0) return;
  for (const u of urls) {
    const hit = openphishWeight(index, u);
    if (hit) task.insert(OPENPHISH_SYMBOL, hit.weight, hit.host);
  }
}
