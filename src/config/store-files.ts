// Checks, before a server starts, that every SQLite store can be created and written where the
// configuration puts it: a `data_dir` that is a file, read-only or under a missing tree is a
// configuration problem with a file and line, not a store error at the first scan.

import type { ConfigIssue } from './errors.js';
import type { StoresConfigValue } from '../storage/config-schema.js';
import { sqliteFileProblem, sqliteLocation, STORE_NAMES } from '../storage/sqlite/location.js';

/** `place` adds the file and line of the key named by the issue's path. */
export function storeFileIssues(dataDir: string, stores: StoresConfigValue, place: (issue: ConfigIssue) => ConfigIssue, blame: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const name of STORE_NAMES) {
    const loc = sqliteLocation(dataDir, stores, name);
    if (!loc || seen.has(loc.path)) continue;
    seen.add(loc.path);
    const problem = sqliteFileProblem(loc.path);
    if (problem === undefined) continue;
    issues.push(
      place({
        file: blame,
        path: loc.key,
        expected: loc.key === 'data_dir' ? 'a directory mailsift can create and write its SQLite store in' : 'a database file mailsift can create and write',
        found: `${problem} (SQLite store ${loc.path})`,
      }),
    );
  }
  return issues;
}
