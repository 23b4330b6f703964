// `mailsift reload`: checks the configuration directory as `configtest` does and, when it is
// sound, sends SIGHUP to the running server (its pid file in data_dir) and waits for the
// outcome the server writes beside it, printing it. A directory with problems is reported and
// the server is not disturbed: it would refuse the same directory anyway.

import { dirname } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { pidFilePath, readPid, readReloadStatus, type ReloadStatus } from '../workers/run-files.js';

/** How often the status file is read while waiting. */
const POLL_MS = 100;

function seconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number of seconds');
  return n;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, run by someone else (and the signal will say so).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForOutcome(dataDir: string, pid: number, after: number, timeoutMs: number): Promise<ReloadStatus | undefined> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const s = readReloadStatus(dataDir);
    if (s && s.pid === pid && s.seq > after) return s;
    if (!alive(pid)) return undefined;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return undefined;
}

export function registerReloadCommand(program: Command, defaultConfDir: () => string): void {
  program
    .command('reload')
    .description('check the configuration and have the running server apply it without a restart')
    .option('-c, --config <dir>', 'configuration directory', defaultConfDir())
    .option('--pid-file <path>', "the server's pid file (default: mailsift.pid in data_dir)")
    .option('--timeout <seconds>', 'how long to wait for the outcome', seconds, 150)
    .action(async (opts: { config: string; pidFile?: string; timeout: number }) => {
      const { checkConfig } = await import('../workers/config-check.js');
      const check = await checkConfig(opts.config);
      if (!check.cfg) {
        process.stderr.write(`${check.errors}\nreload refused: the configuration has problems; the server was not signalled\n`);
        process.exit(1);
      }
      const pidFile = opts.pidFile ?? pidFilePath(check.cfg.dataDir);
      const dataDir = dirname(pidFile);
      const pid = readPid(pidFile);
      if (pid === undefined || !alive(pid)) {
        process.stderr.write(`no running server found: ${pid === undefined ? `no pid in ${pidFile}` : `process ${pid} (from ${pidFile}) is not running`}\n`);
        process.exit(1);
      }
      const before = readReloadStatus(dataDir);
      const after = before && before.pid === pid ? before.seq : 0;
      process.kill(pid, 'SIGHUP');
      const outcome = await waitForOutcome(dataDir, pid, after, opts.timeout * 1000);
      if (!outcome) {
        process.stderr.write(`sent SIGHUP to ${pid}; no outcome within ${opts.timeout} s (see the server's log)\n`);
        process.exit(1);
      }
      const out = outcome.ok ? process.stdout : process.stderr;
      out.write(`${outcome.message} (${outcome.ms} ms)\n`);
      for (const p of outcome.problems ?? []) out.write(`  ${p}\n`);
      process.exit(outcome.ok ? 0 : 1);
    });
}
