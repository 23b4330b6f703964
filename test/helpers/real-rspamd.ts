// A private Rspamd 3.4 (the Debian binary) for interop tests: its own configuration, run, db and
// log directories under a temporary directory, only the workers the test writes, listening on
// free loopback ports. Never touches the system service; stopped by its own PID.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const RSPAMD = '/usr/bin/rspamd';
/**
 * Longest wait for the listeners. Rspamd compiles its TLD list and regexps at start: a few seconds
 * on an idle machine, but over 20 s was seen while the other test files ran beside it on two
 * cores. The wait ends as soon as every port answers, so the margin costs a passing run nothing.
 */
const START_TIMEOUT_MS = 60_000;
/** Time given to a clean stop before SIGKILL. */
const STOP_TIMEOUT_MS = 5_000;
/** The user Debian's package runs workers as; rspamd refuses to keep root privileges. */
const RSPAMD_USER = '_rspamd';

export interface RspamdInstance {
  dir: string;
  pid: number;
  /** Rspamd's log file so far. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function ids(user: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', user]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', user]).toString().trim());
  return { uid, gid };
}

/**
 * Starts rspamd with `workers` (the `worker "…" { … }` sections) after a minimal `options` and
 * `logging` block; resolves once every port in `ports` accepts connections.
 */
export async function startRspamd(opts: { workers: string[]; ports: number[]; logLevel?: 'info' | 'debug' }): Promise<RspamdInstance> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-rspamd-'));
  for (const d of ['db', 'run', 'log']) await mkdir(join(dir, d));
  await writeFile(join(dir, 'rspamd.conf'), [
    'options {',
    '  pidfile = "$RUNDIR/rspamd.pid";',
    // Nothing answers on port 9 (discard): a lookup fails at once instead of reaching the network.
    '  dns { nameserver = ["127.0.0.1:9"]; timeout = 0.2s; retransmits = 1; sockets = 1; }',
    '}',
    `logging { type = "file"; filename = "$LOGDIR/rspamd.log"; level = "${opts.logLevel ?? 'info'}"; }`,
    ...opts.workers,
    '',
  ].join('\n'));
  const args = ['-f', '-c', join(dir, 'rspamd.conf'), `--var=LOCAL_CONFDIR=${dir}`, `--var=DBDIR=${dir}/db`, `--var=RUNDIR=${dir}/run`, `--var=LOGDIR=${dir}/log`];
  if (userInfo().uid === 0) {
    const { uid, gid } = ids(RSPAMD_USER);
    for (const d of ['db', 'run', 'log']) await chown(join(dir, d), uid, gid);
    args.unshift('-u', RSPAMD_USER, '-g', RSPAMD_USER);
  }
  const child: ChildProcess = spawn(RSPAMD, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid!;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(pid, 'SIGTERM');
      const t = setTimeout(() => {
        if (child.exitCode === null) process.kill(pid, 'SIGKILL');
      }, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(t);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const log = (): Promise<string> => readFile(join(dir, 'log', 'rspamd.log'), 'utf8').catch(() => '');
  const deadline = Date.now() + START_TIMEOUT_MS;
  const listening = async (): Promise<boolean> => (await Promise.all(opts.ports.map(canConnect))).every(Boolean);
  while (!(await listening())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const why = child.exitCode !== null ? `exited with ${child.exitCode}` : `not listening after ${START_TIMEOUT_MS} ms`;
      const text = output + (await log());
      await stop();
      throw new Error(`rspamd ${why}: ${text.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { dir, pid, log, stop };
}
