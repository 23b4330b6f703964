// Checks module configs (local.d/<module>.yaml, override.d/<module>.yaml) against the modules
// that exist and their own schemas, before any engine is built, so every module's mistakes
// are reported at once with file and line (the engine stops at the first bad module).

import { join } from 'node:path';
import type { ModuleDefinition } from '../plugin-api/index.js';
import type { ConfigIssue } from './errors.js';
import { toConfigIssues } from './issues.js';
import { displayPath, MAIN_FILE, type LoadedConfig } from './load.js';
import { didYouMean } from './suggest.js';

type AnyModule = Pick<ModuleDefinition<unknown>, 'name' | 'config'>;

export function moduleConfigIssues(loaded: LoadedConfig, modules: ReadonlyArray<AnyModule>): ConfigIssue[] {
  const known = modules.map((m) => m.name);
  const byName = new Map(modules.map((m) => [m.name, m]));
  const issues: ConfigIssue[] = [];
  for (const [name, doc] of Object.entries(loaded.moduleDocs)) {
    const mod = byName.get(name);
    if (!mod) {
      const hint = didYouMean(name, known);
      issues.push({ file: doc.blame, path: '', expected: hint ? `a module's file name (did you mean "${hint}.yaml"?)` : `a module's file name (one of: ${known.join(', ')})`, found: `"${name}.yaml"` });
      continue;
    }
    if (!mod.config) continue;
    const parsed = mod.config.safeParse(loaded.engine.modules[name] ?? {});
    if (!parsed.success) issues.push(...toConfigIssues(mod.config, doc, parsed.error.issues));
  }
  for (const name of loaded.engine.disabledModules) {
    if (byName.has(name)) continue;
    const hint = didYouMean(name, known);
    issues.push({ file: displayPath(join(loaded.dir, MAIN_FILE)), path: 'disabled_modules', expected: hint ? `a module name (did you mean "${hint}"?)` : `a module name (one of: ${known.join(', ')})`, found: `"${name}"` });
  }
  return issues;
}
