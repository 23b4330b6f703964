// TCP exchanges of one task: a one-shot request (write the data, read the
// reply) in callback or awaited form, and a connection for step-by-step awaited exchanges.
// Host names go through the worker's resolver; a host that is an absolute path is a Unix-domain
// socket (as Rspamd's address parsing reads one), and its port is ignored. Every step is bounded
// by the call's timeout and the task deadline, and the socket is destroyed when the task ends.

import net from 'node:net';
import { isSocketPath, socketPathProblem } from '../core/config-values.js';
import { isDnsError } from './dns-errors.js';
import { callBudget, dispatch, NetError } from './scope.js';
import type { NetScope } from './scope.js';
import type { TaskTcp, TcpCallback, TcpConnectRequest, TcpConnection, TcpData, TcpIo, TcpRequest, TcpResult } from './types.js';

/** Rspamd's TCP timeout default, seconds. */
export const DEFAULT_TCP_TIMEOUT = 5;
/** Bytes buffered from a peer before we give up: a peer that never sends the delimiter cannot exhaust memory. */
export const MAX_TCP_BUFFER = 16 * 1024 * 1024;

/** A refused path as an error shows it: cut short, its NUL bytes written out. */
function shownPath(path: string): string {
  const cut = path.length > 80 ? `${path.slice(0, 80)}…` : path;
  return cut.replaceAll('\0', '\\0');
}

function toBuffer(d: TcpData): Buffer {
  if (Array.isArray(d)) return Buffer.concat(d.map((x) => (typeof x === 'string' ? Buffer.from(x) : x)));
  return typeof d === 'string' ? Buffer.from(d) : d;
}

export async function resolveHost(scope: NetScope, host: string): Promise<string> {
  if (net.isIP(host)) return host;
  if (host === 'localhost') return '127.0.0.1';
  try {
    const a = await scope.resolver.lookup(host, 'A', scope.signal);
    return a.records[0] as string;
  } catch (e) {
    throw new Error(isDnsError(e) ? `unable to resolve host: ${e.text}` : 'unable to resolve host');
  }
}

/** A socket with a byte buffer and one pending reader at a time. */
class Conn implements TcpConnection {
  #buf: Buffer = Buffer.alloc(0);
  #eof = false;
  #error: string | undefined;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly sock: net.Socket, private readonly scope: NetScope, private readonly budgetMs: number) {
    sock.on('data', (d: Buffer) => {
      this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
      if (this.#buf.length > MAX_TCP_BUFFER) this.#fail('IO read error: too much data buffered');
      this.#wake?.();
    });
    sock.on('end', () => { this.#eof = true; this.#wake?.(); });
    sock.on('error', (e) => this.#fail(`IO read error: ${e.message}`));
    sock.on('close', () => { this.#eof = true; this.#wake?.(); });
    this.#timer = setTimeout(() => this.#fail('IO timeout'), budgetMs);
    scope.signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  #onAbort = (): void => this.#fail(this.scope.ended ? 'session is terminating' : 'IO timeout');

  #fail(text: string): void {
    this.#error ??= text;
    this.close();
    this.#wake?.();
  }

  /** Resolves once `take` returns a result, or fails on error / EOF. */
  #read(take: (buf: Buffer, eof: boolean) => { data: Buffer; rest: Buffer } | undefined): Promise<TcpIo> {
    return new Promise((resolve) => {
      const attempt = (): void => {
        const got = this.#buf.length > 0 || this.#eof ? take(this.#buf, this.#eof) : undefined;
        if (got) {
          this.#buf = got.rest;
          this.#wake = undefined;
          return resolve({ ok: true, data: got.data });
        }
        if (this.#error !== undefined || this.#eof) {
          this.#wake = undefined;
          return resolve({ ok: false, error: this.#error ?? 'EOF, cannot read more data' });
        }
        this.#wake = attempt;
      };
      attempt();
    });
  }

  write(data: TcpData): Promise<{ ok: true } | { ok: false; error: string }> {
    if (this.#error !== undefined) return Promise.resolve({ ok: false, error: this.#error });
    return new Promise((resolve) => {
      this.sock.write(toBuffer(data), (err) => resolve(err ? { ok: false, error: `IO write error: ${err.message}` } : { ok: true }));
    });
  }

  read_once(): Promise<TcpIo> {
    return this.#read((buf) => (buf.length > 0 ? { data: buf, rest: Buffer.alloc(0) } : undefined));
  }

  read_until(delimiter: string | Buffer): Promise<TcpIo> {
    const d = typeof delimiter === 'string' ? Buffer.from(delimiter) : delimiter;
    if (d.length === 0) throw new NetError('NET_BAD_REQUEST', 'read_until needs a non-empty delimiter');
    return this.#read((buf) => {
      const at = buf.indexOf(d);
      return at < 0 ? undefined : { data: buf.subarray(0, at), rest: buf.subarray(at + d.length) };
    });
  }

  read_bytes(count: number): Promise<TcpIo> {
    return this.#read((buf) => (buf.length >= count ? { data: buf.subarray(0, count), rest: buf.subarray(count) } : undefined));
  }

  read_until_eof(): Promise<TcpIo> {
    return this.#read((buf, eof) => (eof ? { data: buf, rest: Buffer.alloc(0) } : undefined));
  }

  shutdown(): void {
    this.sock.end();
  }

  close(): void {
    clearTimeout(this.#timer);
    this.scope.signal.removeEventListener('abort', this.#onAbort);
    this.sock.destroy();
  }
}

async function open(scope: NetScope, host: string, port: number | undefined, budgetMs: number): Promise<Conn> {
  if (scope.ended) throw new Error('session is terminating');
  const started = Date.now();
  let target: net.NetConnectOpts;
  if (isSocketPath(host)) {
    const problem = socketPathProblem(host);
    if (problem !== undefined) throw new Error(`unable to make connection to the host ${shownPath(host)}: ${problem}`);
    target = { path: host };
  } else {
    if (port === undefined || !(Number.isInteger(port) && port > 0 && port < 65536)) throw new Error(`bad port ${port}`);
    target = { host: await resolveHost(scope, host), port };
  }
  const left = budgetMs - (Date.now() - started);
  if (left <= 0) throw new Error('IO timeout');
  return new Promise((resolve, reject) => {
    const sock = net.connect(target);
    const timer = setTimeout(() => { sock.destroy(); reject(new Error('IO timeout')); }, left);
    const onAbort = (): void => { sock.destroy(); reject(new Error(scope.ended ? 'session is terminating' : 'IO timeout')); };
    scope.signal.addEventListener('abort', onAbort, { once: true });
    sock.once('connect', () => {
      clearTimeout(timer);
      scope.signal.removeEventListener('abort', onAbort);
      sock.removeAllListeners('error');
      resolve(new Conn(sock, scope, Math.max(1, budgetMs - (Date.now() - started))));
    });
    sock.once('error', (e) => {
      clearTimeout(timer);
      scope.signal.removeEventListener('abort', onAbort);
      reject(new Error(`unable to make connection to the host ${host}: ${e.message}`));
    });
  });
}

async function oneShot(scope: NetScope, req: TcpRequest): Promise<TcpResult> {
  const budget = callBudget(scope, req.timeout, DEFAULT_TCP_TIMEOUT);
  let conn: Conn;
  try {
    conn = await open(scope, req.host, req.port, budget);
  } catch (e) {
    return { err: (e as Error).message };
  }
  try {
    if (req.data !== undefined) {
      const w = await conn.write(req.data);
      if (!w.ok) return { err: w.error };
    }
    if (req.read === false) return {};
    const r = req.stop_pattern !== undefined ? await conn.read_until(req.stop_pattern) : await conn.read_once();
    return r.ok ? { data: r.data } : { err: r.error };
  } finally {
    conn.close();
  }
}

export class TaskTcpImpl implements TaskTcp {
  constructor(private readonly scope: NetScope) {}

  request(req: TcpRequest & { callback: TcpCallback }): boolean;
  request(req: TcpRequest & { callback?: undefined }): Promise<TcpResult>;
  request(req: TcpRequest): boolean | Promise<TcpResult> {
    if (typeof req?.host !== 'string') throw new NetError('NET_BAD_REQUEST', 'tcp.request needs host and port');
    const cb = req.callback;
    return dispatch(this.scope, 'tcp', cb, () => oneShot(this.scope, req), (r) => {
      if (r.err !== undefined) cb!(r.err);
      else cb!(undefined, r.data);
    });
  }

  async connect(req: TcpConnectRequest): Promise<{ ok: true; conn: TcpConnection } | { ok: false; error: string }> {
    this.scope.requireCoro('tcp');
    const ev = this.scope.begin('tcp');
    try {
      const conn = await open(this.scope, req.host, req.port, callBudget(this.scope, req.timeout, DEFAULT_TCP_TIMEOUT));
      return { ok: true, conn };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    } finally {
      ev.end();
    }
  }
}
