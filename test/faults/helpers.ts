// Shared pieces of the fault tests: a `mailsift serve` child (optionally inside a network
// namespace) whose JSON log is followed, and scans over plain HTTP with envelope headers.

import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { followChild } from '../cli/run-cli.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MESSAGES = '/work/shared/fixtures/scan/messages';

export interface LogLine { level: number; msg: string; pid: number; worker?: string; port?: number; [k: string]: unknown }

export interface Served {
  child: ChildProcess;
  lines: LogLine[];
  output(): string;
  waitFor(pred: (l: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
  stop(): Promise<void>;
}

/**
 * `mailsift serve -c dir`, run as `prefix… node …` (e.g. `ip netns exec ns`). `detached`: the
 * child leads a process group of its own, so a test can kill it whole (`process.kill(-pid)`),
 * as a machine losing power would.
 */
export function serve(dir: string, extra: string[] = [], prefix: string[] = [], opts: { detached?: boolean } = {}): Served {
  const cmd = [...prefix, process.execPath, '--import', 'tsx', 'src/cli/mailsift.ts', 'serve', '-c', dir, ...extra];
  const child = spawn(cmd[0]!, cmd.slice(1), { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached === true });
  // Fault tests wait longer by default: servers start while other faults load the machine.
  const { lines, output, waitFor, exited } = followChild(child, 60_000);
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(late);
  };
  return { child, lines, output, waitFor, stop };
}

/** The supervisor's lines saying a worker process ended (a crash, a restart). */
export function workerExits(lines: readonly LogLine[]): LogLine[] {
  return lines.filter((l) => /worker \d+ exited/.test(l.msg));
}

export interface ScanReply {
  status: number;
  /** Wall time of the request, ms. */
  ms: number;
  action?: string;
  symbols: Record<string, { options?: string[] }>;
  body: string;
}

function parseReply(status: number, body: string, ms: number): ScanReply {
  let json: { action?: string; symbols?: Record<string, { options?: string[] }> } = {};
  try {
    json = JSON.parse(body) as typeof json;
  } catch {
    // not a scan reply; the status and body say what it was
  }
  return { status, ms, ...(json.action !== undefined ? { action: json.action } : {}), symbols: json.symbols ?? {}, body };
}

/** POST `path` with `headers` (IP, From, Helo, …) to 127.0.0.1:port. */
export function post(port: number, path: string, body: Buffer, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<ScanReply> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, 'Content-Length': String(body.length) }, agent: false, timeout: timeoutMs }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => (data += c));
      res.on('end', () => resolve(parseReply(res.statusCode ?? 0, data, performance.now() - t0)));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no reply from ${path} in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The same request made from inside network namespace `ns` (curl run there). */
export function postInNamespace(ns: string, port: number, path: string, file: string, headers: Record<string, string> = {}): Promise<ScanReply> {
  const args = ['netns', 'exec', ns, 'curl', '-sS', '-m', '60', '-o', '-', '-w', '\n%{http_code}', '--data-binary', `@${file}`];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  args.push(`http://127.0.0.1:${port}${path}`);
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile('ip', args, { encoding: 'utf8', timeout: 90_000 }, (_err, stdout) => {
      // A failed curl (connection refused, reset) prints no status: 0, with its output as body.
      const out = stdout ?? '';
      const cut = out.lastIndexOf('\n');
      resolve(parseReply(Number(out.slice(cut + 1)) || 0, cut >= 0 ? out.slice(0, cut) : out, performance.now() - t0));
    });
  });
}

/** Whether this process may make network namespaces (root, `ip` present, netns supported). */
export function canUseNetns(): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync('ip', ['netns', 'list'], { stdio: 'ignore' }).status === 0;
}

export function sh(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error?.message}`);
}
