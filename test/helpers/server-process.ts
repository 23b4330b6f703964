// A real mailsift server in a child process (`serve --single`: scan worker and controller in one
// process) on the shipped configuration, with its own data directory, for tests that must
// survive a server that hangs or spins: the test process stays free to time out, and the
// server's own CPU time is read from /proc.

import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, runCli, type LogLine, type Running } from '../cli/run-cli.js';

export interface ServerProcess {
  normalPort: number;
  controllerPort: number;
  pid: number;
  /** JSON log lines the server wrote so far. */
  lines: LogLine[];
  /** CPU time (user + system, ms) the server process has used so far. */
  cpuMs(): number;
  /** Whether the process is still running. */
  alive(): boolean;
  output(): string;
  close(): Promise<void>;
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** utime + stime of `pid` in ms (fields 14 and 15 of /proc/<pid>/stat, after the command name). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

/**
 * Start `serve --single` on a copy of conf/ whose local.d/mailsift.yaml binds both workers to
 * free loopback ports, keeps the stores in a temporary data_dir, trusts loopback on the
 * controller (learning needs no password) and logs JSON at `info`; `extraYaml` is appended to it.
 * `moduleFiles` are written beside it in local.d (`{ 'bayes.yaml': 'min_learns: 8' }`).
 */
export async function startServerProcess(extraYaml = '', moduleFiles: Record<string, string> = {}): Promise<ServerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-server-'));
  await cp(join(REPO_ROOT, 'conf'), join(dir, 'conf'), { recursive: true });
  await mkdir(join(dir, 'conf', 'local.d'), { recursive: true });
  const yaml = [
    'workers:',
    '  normal: { bind: "127.0.0.1:0" }',
    '  controller: { bind: "127.0.0.1:0", secure_ip: ["127.0.0.1", "::1"] }',
    'logging: { level: info, format: json }',
    `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
    extraYaml,
  ].join('\n');
  await writeFile(join(dir, 'conf', 'local.d', 'mailsift.yaml'), yaml);
  for (const [name, text] of Object.entries(moduleFiles)) await writeFile(join(dir, 'conf', 'local.d', name), text);
  const srv: Running = runCli(['serve', '--single', '-c', join(dir, 'conf')]);
  const listening = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.port === 'number' && /^listening on /.test(l.msg);
  try {
    const normal = await srv.waitFor(listening('normal'), 'the scan worker to listen', 90_000);
    const controller = await srv.waitFor(listening('controller'), 'the controller to listen', 90_000);
    const pid = normal.pid;
    return {
      normalPort: normal.port!,
      controllerPort: controller.port!,
      pid,
      lines: srv.lines,
      cpuMs: () => processCpuMs(pid),
      alive: () => srv.child.exitCode === null && srv.child.signalCode === null,
      output: srv.output,
      close: async () => {
        srv.child.kill('SIGKILL');
        await srv.exited;
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    srv.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

export interface HttpResult {
  status: number;
  body: Buffer;
  /** Wall time until the whole reply was read. */
  ms: number;
}

/** One HTTP request on a fresh connection; rejects after `timeoutMs` without a full reply. */
export function httpCall(
  port: number,
  method: string,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<HttpResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no reply within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
