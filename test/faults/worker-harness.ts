// Shared pieces of the process-model fault tests (workers-kill.test.ts, workers-watchdog.test.ts):
// a `mailsift serve` on a temporary config, plain HTTP requests with a time-out, and a scan load
// that counts answered, retried, failed and timed-out requests.

import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { runCli, type LogLine, type Running } from '../cli/run-cli.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';

export const GTUBE = readFileSync('/work/shared/fixtures/scan/messages/gtube.eml');
export const HAM = readFileSync('/work/shared/fixtures/scan/messages/ham.eml');
export const ENABLE = 'enablepass';
export const isListen = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.port === 'number' && /^listening on /.test(l.msg);

/** A controller plugin file (loaded from the config dir) whose endpoints misbehave for real. */
export const HANG_PLUGIN = `
export const plugins = {
  hang: {
    // A synchronous loop: the event loop is stuck until the process is killed.
    spin: { handler(task, conn) { for (;;) if (task.content.length < 0) break; conn.send_ucl({}); } },
    // Keeps everything it allocates: only the heap cap ends it.
    hog: { handler() { const keep = []; for (;;) keep.push(new Array(1e5).fill(keep.length)); } },
  },
};
`;

export interface Reply {
  status: number;
  body: string;
}

export function send(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer, timeoutMs = 60_000): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no reply to ${path} in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export const controllerGet = (port: number, path: string) => send(port, 'GET', path, { Password: ENABLE });

export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await read();
      if (ok(last)) return last;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)} ${lastErr ? String(lastErr) : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startServer(files: Record<string, string>, workers: number): Promise<{ srv: Running; dir: string; scanPort: number; controllerPort: number; normalPids: number[]; controllerPid: number }> {
  const dir = await makeConfDir(files);
  const srv = runCli(['serve', '--workers', String(workers), '-c', dir]);
  await srv.waitFor((l) => /^started \d+ normal worker/.test(l.msg), 'the supervisor to report its workers started', 90_000);
  const normals = srv.lines.filter(isListen('normal'));
  const controller = srv.lines.find(isListen('controller'))!;
  return { srv, dir, scanPort: normals[0]!.port!, controllerPort: controller.port!, normalPids: normals.map((l) => l.pid), controllerPid: controller.pid };
}

export async function stopServer(srv: Running, dir: string): Promise<void> {
  if (srv.child.exitCode === null && srv.child.signalCode === null) {
    srv.child.kill('SIGTERM');
    const { code } = await srv.exited;
    assert.equal(code, 0, srv.output());
  }
  await removeConfDir(dir);
}

export function config(extra: string[] = []): string {
  return ['workers:', '  normal: { bind: "127.0.0.1:0" }', `  controller: { bind: "127.0.0.1:0", enable_password: ${ENABLE} }`, ...extra, 'logging: { level: debug }', 'data_dir: data', ''].join('\n');
}

export const CONNECTION_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE']);
export const isConnectionError = (err: unknown): boolean => CONNECTION_ERRORS.has((err as { code?: string }).code ?? '') || /socket hang up/.test(String(err));

export interface LoadResult {
  answered: number;
  /** Requests that failed twice (first try and the one retry). */
  failed: number;
  retried: number;
  /** Queue-Ids of requests without a reply in LOAD_REPLY_TIMEOUT_MS (given up on, as an MTA would). */
  timedOut: string[];
  wrong: string[];
  answeredAt: number[];
}

/** A scan of these messages takes well under a second; a request this old has been lost. */
export const LOAD_REPLY_TIMEOUT_MS = 20_000;

/** `concurrency` clients scanning GTUBE and a ham message in turn; a connection error is retried once, as an MTA would. */
export function startLoad(port: number, concurrency: number, hamAction: string): { result: LoadResult; stop(): Promise<LoadResult> } {
  const result: LoadResult = { answered: 0, failed: 0, retried: 0, timedOut: [], wrong: [], answeredAt: [] };
  let running = true;
  let n = 0;
  const client = async (): Promise<void> => {
    while (running) {
      const i = n++;
      const spam = i % 2 === 0;
      const headers = { 'Queue-Id': `LOAD${i}`, IP: '192.0.2.10' };
      let reply: Reply | undefined;
      let timedOut = false;
      for (let attempt = 0; attempt < 2 && !reply && !timedOut; attempt++) {
        try {
          reply = await send(port, 'POST', '/checkv2', headers, spam ? GTUBE : HAM, LOAD_REPLY_TIMEOUT_MS);
        } catch (err) {
          timedOut = /no reply to/.test(String(err));
          if (!timedOut && !isConnectionError(err)) throw err;
          if (attempt === 0 && !timedOut) result.retried++;
        }
      }
      if (timedOut) result.timedOut.push(headers['Queue-Id']);
      if (!reply) {
        if (!timedOut) result.failed++;
        continue;
      }
      const action = reply.status === 200 ? (JSON.parse(reply.body) as { action: string }).action : `status ${reply.status}`;
      if (action !== (spam ? 'reject' : hamAction)) result.wrong.push(`${headers['Queue-Id']}: ${action} ${reply.body.slice(0, 200)}`);
      result.answered++;
      result.answeredAt.push(Date.now());
    }
  };
  const clients = Array.from({ length: concurrency }, () => client());
  return {
    result,
    async stop() {
      running = false;
      await Promise.all(clients);
      return result;
    },
  };
}

/** A DNS server that takes every query and answers none: a scan looking something up stays in flight. */
export async function silentDns(): Promise<{ address: string; queries: () => number; close(): void }> {
  const sock = dgram.createSocket('udp4');
  let n = 0;
  sock.on('message', () => n++);
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { address: `127.0.0.1:${sock.address().port}`, queries: () => n, close: () => sock.close() };
}
