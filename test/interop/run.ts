// Run a command asynchronously (the scan worker lives in the test process, so a synchronous
// spawn would deadlock it) and collect its exit code and output.
import { spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Upper bound on one client run; a hang is a failure, not a stuck CI job. */
const RUN_TIMEOUT_MS = 60_000;

/** `env` with LANG a UTF-8 locale (rspamadm reads LANG: LC_ALL=C.UTF-8 alone still fails) and no LC_* overriding it. */
function utf8Env(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, LANG: 'C.UTF-8' };
  delete out.LC_ALL;
  delete out.LC_CTYPE;
  return out;
}

/**
 * Rspamd's tools (glib) refuse a non-ASCII argument under the C locale ("Invalid byte sequence in
 * conversion input"), and CI may run with no LANG at all: clients get a UTF-8 locale of their own.
 */
export const CLIENT_ENV: NodeJS.ProcessEnv = utf8Env(process.env);

export function run(cmd: string, args: string[], input?: Buffer): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: RUN_TIMEOUT_MS, env: CLIENT_ENV });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString('utf8'); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? Buffer.alloc(0));
  });
}

/** mailsiftc from the sources, the way CI runs it before a build exists. */
export function mailsiftc(args: string[], input?: Buffer): Promise<RunResult> {
  return run(process.execPath, ['--import', 'tsx', 'src/cli/mailsiftc.ts', ...args], input);
}

/** The fields of rspamc's (and mailsiftc's) human output that scripts read. */
export interface TextVerdict {
  files: string[];
  action?: string;
  spam?: string;
  score?: number;
  required?: number;
  symbols: Map<string, number>;
  messageId?: string;
}

export function parseTextOutput(out: string): TextVerdict {
  const v: TextVerdict = { files: [], symbols: new Map() };
  for (const line of out.split('\n')) {
    let m: RegExpExecArray | null;
    if ((m = /^Results for file: (.+) \([\d.]+ seconds\)$/.exec(line))) v.files.push(m[1]!);
    else if ((m = /^Action: (.+)$/.exec(line))) v.action = m[1];
    else if ((m = /^Spam: (true|false)$/.exec(line))) v.spam = m[1];
    else if ((m = /^Score: (-?[\d.]+) \/ (-?[\d.]+)$/.exec(line))) { v.score = Number(m[1]); v.required = Number(m[2]); }
    else if ((m = /^Symbol: (\S+) \((-?[\d.]+)\)/.exec(line))) v.symbols.set(m[1]!, Number(m[2]));
    else if ((m = /^Message-ID: (.+)$/.exec(line))) v.messageId = m[1];
  }
  return v;
}
