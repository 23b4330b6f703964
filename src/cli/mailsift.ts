// `mailsift`: the server command line. `serve` runs the workers, `configtest` checks a
// configuration directory the way the server would load it (including module configs).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { isConfigError, formatIssues, sortIssues, type ConfigIssue } from '../config/errors.js';
import { displayPath, loadConfig, MAIN_FILE } from '../config/load.js';
import { controllerPluginIssues } from '../config/plugin-files.js';
import { createEngine } from '../engine/index.js';
import { loadServerModules } from '../workers/server-modules.js';
import { createMapRegistry } from '../maps/index.js';
import type { Logger } from '../plugin-api/index.js';
import { openStores } from '../storage/index.js';
import { serve } from '../workers/supervisor.js';
import { registerKeypairCommand } from './keypair.js';
import { registerPwCommand } from './pw.js';
import { registerStatsCommand } from './stats.js';

/** Where the configuration lives when `-c` is not given: $MAILSIFT_CONF_DIR, ./conf, /etc/mailsift. */
function defaultConfDir(): string {
  if (process.env.MAILSIFT_CONF_DIR) return process.env.MAILSIFT_CONF_DIR;
  return existsSync(join('conf', 'mailsift.yaml')) ? 'conf' : '/etc/mailsift';
}

/** Version from the package.json above this file (src/cli or dist/src/cli). */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mailsift' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** The engine's reason for a module whose setup threw (src/engine/registry.ts). */
const SETUP_FAILED = 'setup failed: ';

function printError(err: unknown): void {
  if (isConfigError(err)) process.stderr.write(`${formatIssues(err.issues)}\n`);
  else process.stderr.write(`${(err as Error)?.message ?? String(err)}\n`);
}

/** Longest rendering of one logged field in a note; a map's rejected entries can be many. */
const MAX_NOTE_FIELD_CHARS = 200;

/** A logger whose warnings and errors become configtest notes (a Redis store not answering, map entries skipped). */
function noteLogger(notes: string[], prefix: string): Logger {
  const note = (msg: string, extra: Record<string, unknown> = {}) => {
    const fields: string[] = [];
    for (const [k, v] of Object.entries(extra)) {
      const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
      if (msg.includes(text)) continue; // already said (the Redis summary names its error)
      fields.push(`${k}=${text.length > MAX_NOTE_FIELD_CHARS ? `${text.slice(0, MAX_NOTE_FIELD_CHARS)}…` : text}`);
    }
    const text = `${prefix}: ${msg}${fields.length ? ` (${fields.join(' ')})` : ''}`;
    if (!notes.includes(text)) notes.push(text);
  };
  return { debug() {}, info() {}, warn: note, error: note };
}

/**
 * Loads the config and builds an engine with the built-in modules and the users' plugins. Returns the errors ('' if
 * none) and notes (modules switched off, with the reason each gave; stores not answering).
 */
async function configtest(dir: string): Promise<{ errors: string; notes: string[] }> {
  try {
    // The users' plugins are loaded as serve loads them; one that does not load is an error here.
    const set = await loadServerModules(dir);
    const cfg = await loadConfig(dir, { modules: set.modules, runtime: true });
    // Plugin files that do not load are errors, but the engine is still built without them, so
    // a plugin whose setup throws is reported in the same run.
    const pluginIssues: ConfigIssue[] = [
      ...(await controllerPluginIssues(cfg.dir, displayPath)),
      ...set.failures.map((f) => ({ file: displayPath(f.file), path: '', expected: 'a plugin that loads', found: f.reason })),
    ];
    // Building the engine runs every module's setup: what a schema cannot see fails here. It gets
    // the same stores and maps a worker gets, so a module needing them is judged as it will run.
    const notes: string[] = [];
    const setupErrors: Array<{ msg: string; extra: Record<string, unknown> }> = [];
    const engineLog: Logger = { debug() {}, info() {}, warn() {}, error: (msg, extra = {}) => setupErrors.push({ msg, extra }) };
    const stores = await openStores(cfg, noteLogger(notes, 'stores'));
    // Map contents are data, not settings (a file may appear later, a URL may be down now): notes.
    const maps = createMapRegistry({ baseDir: cfg.dir, log: noteLogger(notes, 'maps') });
    let engine;
    try {
      engine = await createEngine(cfg.engine, set.modules, { log: engineLog, stores, maps, localModules: set.local });
    } finally {
      maps.close();
      await stores.close();
    }
    const mainFile = displayPath(join(cfg.dir, MAIN_FILE));
    const pluginFile = (module: string): string | undefined => {
      const f = set.files.get(module);
      return f === undefined ? undefined : displayPath(f);
    };
    const fileOf = (module: unknown): string => (typeof module === 'string' ? (cfg.moduleDocs[module]?.blame ?? pluginFile(module)) : undefined) ?? mainFile;
    // An error a module logs while setting up (a key file it cannot read, a rule it had to drop)
    // is a setting it cannot use: the server would start without that part.
    const issues: ConfigIssue[] = pluginIssues.concat(setupErrors.map(({ msg, extra: { module, ...rest } }) => {
      const detail = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
      return { file: fileOf(module), path: '', expected: `settings module ${String(module ?? '?')} can use`, found: detail ? `${msg} (${detail})` : msg };
    }));
    const logged = new Set(setupErrors.map((e) => e.extra.module));
    for (const [name, reason] of engine.disabledModules()) {
      // A setup that threw is a broken module config; other reasons are deliberate (config, redis).
      if (!reason.startsWith(SETUP_FAILED)) notes.push(`module ${name} is off: ${reason}`);
      else if (!logged.has(name)) issues.push({ file: fileOf(name), path: '', expected: `settings module ${name} can use`, found: reason.slice(SETUP_FAILED.length) });
    }
    return { errors: formatIssues(sortIssues(issues)), notes };
  } catch (err) {
    return { errors: isConfigError(err) ? formatIssues(err.issues) : ((err as Error)?.message ?? String(err)), notes: [] };
  }
}

export function buildProgram(): Command {
  const version = packageVersion();
  const program = new Command('mailsift')
    .description('Spam-filtering service speaking the Rspamd scan protocol')
    .version(version);

  program
    .command('serve')
    .description('run the scan and controller workers')
    .option('-c, --config <dir>', 'configuration directory', defaultConfDir())
    .option('--single', 'run every worker in this one process')
    .option('--workers <n>', 'number of normal workers (default: workers.normal.count)', positiveInt)
    .action(async (opts: { config: string; single?: boolean; workers?: number }) => {
      try {
        await serve({
          confDir: opts.config,
          single: opts.single === true,
          ...(opts.workers ? { workers: opts.workers } : {}),
          serverName: `mailsift/${version}`,
        });
      } catch (err) {
        printError(err);
        process.exit(1);
      }
    });

  program
    .command('configtest')
    .description('check a configuration directory, module configs included')
    .option('-c, --config <dir>', 'configuration directory', defaultConfDir())
    .action(async (opts: { config: string }) => {
      const { errors, notes } = await configtest(opts.config);
      for (const n of notes) process.stdout.write(`${n}\n`);
      if (errors) process.stderr.write(`${errors}\n`);
      else process.stdout.write('syntax OK\n');
      // Exit explicitly: an engine may hold timers or store handles open.
      process.exit(errors ? 1 : 0);
    });

  registerKeypairCommand(program);
  registerPwCommand(program);
  registerStatsCommand(program, defaultConfDir);

  return program;
}

await buildProgram().parseAsync(process.argv);
