// A private ClamAV daemon for the antivirus tests: its own config file, a TCP port on loopback
// and/or a Unix-domain socket in its temporary directory (as Debian's clamav-daemon listens), and
// a signature database the test writes (no signature download is possible, and clamd needs at
// least one valid database file). The system's clamav-daemon service is never used.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './real-rspamd.js';

export const CLAMD_BIN = '/usr/sbin/clamd';

/** An MD5 file signature (.hdb line): content of exactly these bytes is `name`. */
export function hashSignature(name: string, content: Buffer): string {
  return `${createHash('md5').update(content).digest('hex')}:${content.length}:${name}`;
}

/** A body signature (.ndb line): any file containing `marker` is `name`. */
export function bodySignature(name: string, marker: string): string {
  return `${name}:0:*:${Buffer.from(marker, 'latin1').toString('hex')}`;
}

export interface Clamd {
  /** TCP port on 127.0.0.1, or undefined when clamd listens on its socket only. */
  port: number | undefined;
  /** Path of its Unix-domain socket (`LocalSocket`), when one was asked for. */
  socket: string | undefined;
  stop(): Promise<void>;
  /** clamd's log so far. */
  log(): Promise<string>;
}

/** One command over a fresh connection (a TCP port on loopback, or a socket path), reply up to the `\0` terminator. */
export function clamdCommand(target: number | string, command: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = typeof target === 'number' ? net.connect({ host: '127.0.0.1', port: target }) : net.connect({ path: target });
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.includes(0)) {
        s.destroy();
        resolve(buf.subarray(0, buf.indexOf(0)).toString('utf8'));
      }
    });
    s.on('error', reject);
    s.on('close', () => reject(new Error('closed before the reply')));
    s.write(command);
  });
}

export interface ClamdListen {
  /** Listen on a TCP port on 127.0.0.1 (default true). */
  tcp?: boolean;
  /** Listen on `<tmpdir>/clamd.sock` too (default false). */
  socket?: boolean;
}

/**
 * Starts clamd in the foreground with `signatures` (file name → lines, e.g. `test.hdb`,
 * `test.ndb`) and waits until it answers PING on each place it listens.
 */
export async function startClamd(signatures: Record<string, string[]>, listen: ClamdListen = {}): Promise<Clamd> {
  const tcp = listen.tcp ?? true;
  if (!tcp && !listen.socket) throw new Error('clamd needs somewhere to listen');
  // mkdtemp under the system tmpdir keeps the socket path far below the 107 bytes it may hold.
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-clamd-'));
  const db = join(dir, 'db');
  await mkdir(db);
  for (const [file, lines] of Object.entries(signatures)) await writeFile(join(db, file), lines.join('\n') + '\n');
  const port = tcp ? await freePort() : undefined;
  const socket = listen.socket ? join(dir, 'clamd.sock') : undefined;
  const conf = join(dir, 'clamd.conf');
  await writeFile(conf, [
    'Foreground yes',
    ...(port !== undefined ? [`TCPSocket ${port}`, 'TCPAddr 127.0.0.1'] : []),
    // Mode 666: whoever runs the tests can connect, as the operator's LocalSocketMode/Group allows mailsift.
    ...(socket !== undefined ? [`LocalSocket ${socket}`, 'LocalSocketMode 666'] : []),
    `DatabaseDirectory ${db}`,
    `LogFile ${join(dir, 'clamd.log')}`,
    `PidFile ${join(dir, 'clamd.pid')}`,
    // The database does not change during a test: no reload checks.
    'SelfCheck 3600',
  ].join('\n') + '\n');
  const child: ChildProcess = spawn(CLAMD_BIN, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`clamd exited with ${child.exitCode}: ${stderr}`);
    try {
      let ready = true;
      for (const target of [port, socket]) {
        if (target !== undefined) ready &&= (await clamdCommand(target, Buffer.from('zPING\0'))) === 'PONG';
      }
      if (ready) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`clamd did not answer PING: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    socket,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
      await rm(dir, { recursive: true, force: true });
    },
    log: () => readFile(join(dir, 'clamd.log'), 'utf8').catch(() => ''),
  };
}
