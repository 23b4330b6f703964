// Runs the real `mailsift` CLI (through tsx) as a child process and follows its JSON log.

import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = 'src/cli/mailsift.ts';

export interface LogLine {
  level: number;
  msg: string;
  pid: number;
  tag?: string;
  worker?: string;
  port?: number;
  workerPid?: number;
  [k: string]: unknown;
}

export interface Running {
  child: ChildProcess;
  lines: LogLine[];
  /** Raw stdout+stderr text, for failure messages. */
  output(): string;
  waitFor(pred: (l: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Follows a `mailsift` child's JSON log on stdout: the parsed lines, stdout and stderr as text,
 * and a wait for a line, which fails at once if the process exits first.
 */
export function followChild(child: ChildProcess, defaultTimeoutMs = 30_000): Running {
  const lines: LogLine[] = [];
  let text = '';
  let partial = '';
  const waiters = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    partial += chunk;
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const p of parts) {
      try {
        lines.push(JSON.parse(p) as LogLine);
      } catch {
        // not a log line
      }
    }
    for (const w of waiters) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const w of waiters) w();
      resolve({ code, signal });
    }),
  );
  const waitFor = (pred: (l: LogLine) => boolean, what: string, timeoutMs = defaultTimeoutMs): Promise<LogLine> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const hit = lines.find(pred);
        if (hit) return done(() => resolve(hit));
        if (child.exitCode !== null || child.signalCode !== null) done(() => reject(new Error(`mailsift exited before ${what}:\n${text}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`timed out waiting for ${what}:\n${text}`))), timeoutMs);
      const done = (f: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        f();
      };
      waiters.add(check);
      check();
    });
  return { child, lines, output: () => text, waitFor, exited };
}

/** `as`: run as another user (a test of permissions run by root, whom no mode bit stops). */
export function runCli(args: string[], as?: { uid: number; gid: number }): Running {
  return followChild(spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...as }));
}

export function httpRequest(port: number, method: string, path: string, body?: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
