// The modules a server process runs: the built-ins and the users' plugins (local.d/plugins,
// plugins.paths), loaded once per process. A plugin that fails to load is logged with its
// reason in each process that builds an engine, so it reaches the log and the /errors ring.

import { configuredPluginPaths } from '../config/load.js';
import { composeModules, loadUserPlugins, type AnyModule, type PluginFailure } from '../config/user-plugins.js';
import { builtinModules } from '../modules/index.js';
import type { Logger } from '../plugin-api/index.js';

export interface ServerModules {
  modules: AnyModule[];
  /** Names of the users' plugins among them (engine option localModules). */
  local: ReadonlySet<string>;
  /** Module name → file, for the users' plugins. */
  files: ReadonlyMap<string, string>;
  failures: readonly PluginFailure[];
}

export async function loadServerModules(confDir: string): Promise<ServerModules> {
  const user = await loadUserPlugins(confDir, await configuredPluginPaths(confDir));
  return { modules: composeModules(builtinModules, user.modules), local: new Set(user.modules.map((m) => m.name)), files: user.files, failures: user.failures };
}

const reported = new WeakSet<ServerModules>();

/** One error line per plugin that did not load, and one info line per plugin that did; once per process (--single starts several roles). */
export function reportPlugins(set: ServerModules, log: Logger): void {
  if (reported.has(set)) return;
  reported.add(set);
  for (const f of set.failures) log.error(`plugin disabled: ${f.reason}`, { module: 'plugins', file: f.file });
  for (const [name, file] of set.files) log.info('plugin loaded', { plugin: name, file });
}
