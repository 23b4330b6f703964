// The entry of a forked worker process. The supervisor forks this module rather than the
// command line it was started from, and hands over the serve options in the environment: a
// worker then loads neither the argument parser, nor the other subcommands, nor the
// supervisor's own code (about 1 MiB of heap in each worker; docs/tuning.md, "Memory of each
// process").

import { installOperatorSignals } from './operator-signals.js';
import { SERVE_OPTIONS_ENV, type ServeOptions } from './process-common.js';

// Before the engine's code loads: a SIGUSR1 meanwhile must not open Node's
// inspector, so the rest is imported after this.
installOperatorSignals();
const { formatIssues, isConfigError } = await import('../config/errors.js');
try {
  const opts = JSON.parse(process.env[SERVE_OPTIONS_ENV] ?? '') as ServeOptions;
  const { serveInProcess } = await import('./in-process.js');
  await serveInProcess(opts);
} catch (err) {
  // As the command line prints a failed `serve`; the supervisor forwards a worker's stderr to its log.
  if (isConfigError(err)) process.stderr.write(`${formatIssues(err.issues)}\n`);
  else process.stderr.write(`${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
}
