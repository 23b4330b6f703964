// The supervisor loads and checks the configuration in a short-lived child process. Checking
// means loading every module's code and building an engine; done in the supervisor itself, that
// code stayed for the life of the process (about 25 MiB of V8 heap, a third of its memory)
// though the supervisor only forks and watches. In a worker thread the heap went with the
// thread, but glibc kept the thread's malloc arena (12 MiB more than a child process leaves).
// A reload asks the controller first (supervisor.ts): its modules are loaded, where this process
// takes a second or more to load them before it can check anything.

import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, type ConfigIssue } from '../config/errors.js';
import type { ConfigCheckReply, PrimaryPart } from './process-common.js';

/** The child's module: compiled beside this one, or the TypeScript source when run through tsx (the tests). */
const CHILD_MAIN = new URL(`./config-process-main${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** The request, as JSON in the child's environment. */
export const CONFIG_REQUEST_ENV = 'MAILSIFT_CONFIG_REQUEST';

export interface ConfigRequest {
  dir: string;
  /** `load`: as `serve` loads before it starts; `check`: as `configtest` and a reload check. */
  purpose: 'load' | 'check';
}

export type ConfigReply =
  | ({ kind: 'loaded' } & PrimaryPart)
  | { kind: 'invalid'; issues: ConfigIssue[] }
  | { kind: 'failed'; message: string }
  | ({ kind: 'check'; errors: string; notes: string[] } & Partial<PrimaryPart>);

function ask(req: ConfigRequest): Promise<ConfigReply> {
  return new Promise((resolve, reject) => {
    let reply: ConfigReply | undefined;
    // The supervisor's node options, less a debugger's port, which the child would find taken.
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--inspect'));
    // stdout and stderr are the supervisor's: a library's warning while loading reaches the log as before.
    const child = fork(CHILD_MAIN, [], {
      execArgv,
      env: { ...process.env, [CONFIG_REQUEST_ENV]: JSON.stringify(req) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Structured clone, not JSON: the settings keep their Buffers, Infinity and undefined as they are.
      serialization: 'advanced',
    });
    child.once('message', (m: ConfigReply) => {
      reply = m;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (reply) resolve(reply);
      else reject(new Error(`the configuration check process ended (${signal ?? `status ${code}`}) without an answer`));
    });
  });
}

/** The configuration as `serve` starts on it; throws ConfigError listing every problem. */
export async function loadPrimaryConfig(dir: string): Promise<PrimaryPart> {
  const r = await ask({ dir, purpose: 'load' });
  if (r.kind === 'loaded') return { cfg: r.cfg, shape: r.shape };
  if (r.kind === 'invalid') throw new ConfigError(r.issues);
  throw new Error(r.kind === 'failed' ? r.message : 'unexpected answer of the configuration check');
}

/** The configuration directory checked as `configtest` checks it; `part` only when it has no problems. */
export async function checkPrimaryConfig(dir: string): Promise<ConfigCheckReply> {
  const r = await ask({ dir, purpose: 'check' });
  if (r.kind !== 'check') return { errors: r.kind === 'failed' ? r.message : 'unexpected answer of the configuration check', notes: [] };
  return { errors: r.errors, notes: r.notes, ...(r.cfg && r.shape !== undefined ? { part: { cfg: r.cfg, shape: r.shape } } : {}) };
}
