// Checks the controller plugin files (conf/controller/*.{js,mjs,ts}, local.d/controller.*) and
// the users' plugins (local.d/plugins) the way a server loads them, so that for configtest a
// file that does not load is a configuration problem named by its file. (A server starts
// without such a file and logs why, to the log and the /errors ring.)

import type { Logger } from '../plugin-api/index.js';
import { loadPluginTable } from './controller-plugin-load.js';
import type { ConfigIssue } from './errors.js';
import { loadUserPlugins } from './user-plugins.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Loads every plugin file (running its top level and its `plugins` function, as the controller
 * will) and turns each refusal into an issue. The plugins get an API without maps: the modules'
 * maps exist only in a running engine.
 */
export async function controllerPluginIssues(confDir: string, display: (p: string) => string): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  const collect: Logger = {
    ...quiet,
    error(msg, extra = {}) {
      const { file, error, plugin, endpoint } = extra;
      const path = typeof plugin === 'string' ? `plugins.${plugin}${typeof endpoint === 'string' ? `.${endpoint}` : ''}` : '';
      issues.push({
        file: typeof file === 'string' ? display(file) : display(confDir),
        path,
        expected: 'a controller plugin file that loads',
        found: typeof error === 'string' ? `${msg}: ${error}` : msg,
      });
    },
  };
  await loadPluginTable(confDir, { log: quiet, maps: { list: () => [] } }, collect);
  return issues;
}

/** Each user's plugin (local.d/plugins, plugins.paths) that does not load, named by its file. */
export async function userPluginIssues(confDir: string, paths: readonly string[], display: (p: string) => string): Promise<ConfigIssue[]> {
  const { failures } = await loadUserPlugins(confDir, paths);
  return failures.map((f) => ({ file: display(f.file), path: '', expected: 'a plugin that loads', found: f.reason }));
}
