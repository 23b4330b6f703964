// `mailsift`: the server command line. `serve` runs the workers, `configtest` checks a
// configuration directory the way the server would load it (including module configs).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { isConfigError, formatIssues } from '../config/errors.js';
import { serve } from '../workers/supervisor.js';
import { registerKeypairCommand } from './keypair.js';
import { registerPwCommand } from './pw.js';
import { registerStatsCommand } from './stats.js';
import { registerReloadCommand } from './reload.js';

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

function printError(err: unknown): void {
  if (isConfigError(err)) process.stderr.write(`${formatIssues(err.issues)}\n`);
  else process.stderr.write(`${(err as Error)?.message ?? String(err)}\n`);
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
      // Loaded here, not at the top: `serve`'s supervisor process never needs the engine's code.
      const { checkConfig } = await import('../workers/config-check.js');
      const { errors, notes } = await checkConfig(opts.config);
      for (const n of notes) process.stdout.write(`${n}\n`);
      if (errors) process.stderr.write(`${errors}\n`);
      else process.stdout.write('syntax OK\n');
      // Exit explicitly: an engine may hold timers or store handles open.
      process.exit(errors ? 1 : 0);
    });

  registerKeypairCommand(program);
  registerPwCommand(program);
  registerStatsCommand(program, defaultConfDir);
  registerReloadCommand(program, defaultConfDir);

  return program;
}

await buildProgram().parseAsync(process.argv);
