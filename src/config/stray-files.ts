// Files an administrator meant as configuration but that mailsift never reads: `gtube.yml`,
// an Rspamd `local.d/gtube.conf` copied over, a module's file put next to mailsift.yaml instead
// of in local.d/. Each would be ignored without a word, so each is an issue.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigIssue } from './errors.js';

/** Rspamd's UCL files: a migrating administrator copies them into local.d/ and expects them read. */
const RSPAMD_EXT = /\.(conf|inc)$/;
const YML_EXT = /\.yml$/;
const LAYER_DIRS = ['local.d', 'override.d'];

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name).sort();
  } catch {
    return []; // local.d / override.d are optional
  }
}

/**
 * `display` renders a path for messages; `modules`: the module names, to recognise a module's
 * file at the top of the directory (undefined: that check is skipped).
 */
export async function strayFileIssues(dir: string, display: (p: string) => string, confFiles: ReadonlySet<string>, modules?: readonly string[]): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const add = (p: string, expected: string, found: string) => issues.push({ file: display(p), path: '', expected, found });
  for (const sub of LAYER_DIRS) {
    for (const f of await names(join(dir, sub))) {
      const base = f.replace(/\.[^.]+$/, '');
      if (YML_EXT.test(f)) add(join(dir, sub, f), `a file named ${sub}/${base}.yaml (a .yml file is not read)`, `"${f}"`);
      else if (RSPAMD_EXT.test(f)) add(join(dir, sub, f), `YAML in ${sub}/${base}.yaml (Rspamd's .conf and .inc files are not read)`, `"${f}"`);
    }
  }
  const moduleNames = new Set(modules ?? []);
  for (const f of await names(dir)) {
    const base = f.replace(/\.(yaml|yml)$/, '');
    if (base === f) continue;
    if (confFiles.has(`${base}.yaml`) && f !== `${base}.yaml`) add(join(dir, f), `a file named ${base}.yaml (a .yml file is not read)`, `"${f}"`);
    else if (moduleNames.has(base)) add(join(dir, f), `module options in local.d/${base}.yaml or override.d/${base}.yaml (a module's file here is not read)`, `"${f}"`);
  }
  return issues;
}
