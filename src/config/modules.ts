// Checks module configs (local.d/<module>.yaml, override.d/<module>.yaml) against the modules
// that exist and their own schemas, before any engine is built, so every module's mistakes
// are reported at once with file and line (the engine stops at the first bad module).

import type { ModuleDefinition } from '../plugin-api/index.js';
import type { ConfigIssue } from './errors.js';
import { toConfigIssues } from './issues.js';
import type { LayeredDoc } from './merge.js';
import { didYouMean } from './suggest.js';
import { pathKey } from './yaml-source.js';

/** What the loader needs of a module: the name its local.d file is called by, and its schema. */
export type ModuleSchemaRef = Pick<ModuleDefinition<unknown>, 'name' | 'config'>;

/** Keys every module file may hold besides its module's own (read by the loader, not the module). */
const MODULE_FILE_KEYS = ['enabled'];

export interface ModuleFiles {
  /** Module name → its layered document (positions for messages). */
  docs: Record<string, LayeredDoc>;
  /** Module name → its merged options without `enabled`. */
  values: Record<string, Record<string, unknown>>;
}

/**
 * Issues of every module file, and of `disabled_modules` in mailsift.yaml (`disabled`: its value,
 * validated or raw; anything but a list of strings is the main schema's to report).
 */
export function moduleConfigIssues(files: ModuleFiles, mainDoc: LayeredDoc, disabled: unknown, modules: ReadonlyArray<ModuleSchemaRef>): ConfigIssue[] {
  const known = modules.map((m) => m.name);
  const byName = new Map(modules.map((m) => [m.name, m]));
  const issues: ConfigIssue[] = [];
  for (const [name, doc] of Object.entries(files.docs)) {
    const mod = byName.get(name);
    if (!mod) {
      const hint = didYouMean(name, known);
      issues.push({ file: doc.blame, path: '', expected: hint ? `a module's file name (did you mean "${hint}.yaml"?)` : `a module's file name (one of: ${known.join(', ')})`, found: `"${name}.yaml"` });
      continue;
    }
    if (!mod.config) continue;
    const parsed = mod.config.safeParse(files.values[name] ?? {});
    if (!parsed.success) issues.push(...toConfigIssues(mod.config, doc, parsed.error.issues, MODULE_FILE_KEYS));
  }
  if (!Array.isArray(disabled)) return issues;
  disabled.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || byName.has(name)) return;
    const hint = didYouMean(name, known);
    const p = mainDoc.positions.get(pathKey(['disabled_modules', i]));
    issues.push({
      file: p?.file ?? mainDoc.blame,
      ...(p ? { line: p.line, column: p.column } : {}),
      path: `disabled_modules[${i}]`,
      expected: hint ? `a module name (did you mean "${hint}"?)` : `a module name (one of: ${known.join(', ')})`,
      found: `"${name}"`,
    });
  });
  return issues;
}
