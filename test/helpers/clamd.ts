// A private ClamAV daemon for the antivirus tests: its own config file, a TCP port on loopback
// and a signature database the test writes (no signature download is possible, and clamd needs
// at least one valid database file). The system's clamav-daemon service is never used.
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
  port: number;
  stop(): Promise<void>;
  /** clamd's log so far. */
  log(): Promise<string>;
}

/** One command over a fresh connection, reply up to the `\0` terminator. */
export function clamdCommand(port: number, command: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port });
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

/**
 * Starts clamd in the foreground with `signatures` (file name → lines, e.g. `test.hdb`,
 * `test.ndb`) and waits until it answers PING.
 */
export async function startClamd(signatures: Record<string, string[]>): Promise<Clamd> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-clamd-'));
  const db = join(dir, 'db');
  await mkdir(db);
  for (const [file, lines] of Object.entries(signatures)) await writeFile(join(db, file), lines.join('\n') + '\n');
  const port = await freePort();
  const conf = join(dir, 'clamd.conf');
  await writeFile(conf, [
    'Foreground yes',
    `TCPSocket ${port}`,
    'TCPAddr 127.0.0.1',
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
      if ((await clamdCommand(port, Buffer.from('zPING\0'))) === 'PONG') break;
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
