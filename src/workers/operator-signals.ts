// SIGUSR1 and SIGUSR2 as an operator, or logrotate, sends them to Rspamd: Debian's rspamd
// logrotate file runs `systemctl kill --signal=SIGUSR1 rspamd`, which reaches every process of the
// unit, to have the log files reopened. Node acts on both signals itself unless a process listens
// for them: SIGUSR1 opens its inspector on 127.0.0.1:9229, where anyone on the machine could run
// code as the service's user, and SIGUSR2 ends the process. So every process of `mailsift serve`
// listens for both before it reads its configuration (a forked worker also before the engine's
// code loads): SIGUSR1 looks for a rotated log file at once (what it asks of Rspamd; the file is
// also followed every few seconds without a signal) and is passed on to the workers by the
// supervisor; SIGUSR2 is logged and otherwise ignored.

import { followLogRotation } from '../observability/log.js';
import type { Logger } from '../plugin-api/index.js';

let installed = false;
let log: Logger | undefined;
const forwards = new Set<(signal: 'SIGUSR1') => void>();

/** Installs the handlers (once per process); call it before anything slow, such as loading modules. */
export function installOperatorSignals(): void {
  if (installed) return;
  installed = true;
  process.on('SIGUSR1', () => {
    // The reopen first: lines written while it completes go to the file under its name.
    followLogRotation();
    log?.info('SIGUSR1: reopening the log file if it was rotated');
    for (const forward of forwards) forward('SIGUSR1');
  });
  process.on('SIGUSR2', () => {
    log?.info('SIGUSR2 ignored (mailsift gives it no meaning)');
  });
}

/** The logger the handlers report to, once the process has one. */
export function operatorSignalLog(logger: Logger): void {
  log = logger;
}

/** Passes SIGUSR1 on (the supervisor to its workers, for the life of the process). */
export function forwardOperatorSignal(forward: (signal: 'SIGUSR1') => void): void {
  forwards.add(forward);
}
