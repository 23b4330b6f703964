// Shared by the transport and protocol tests: a real normal worker (real config, engine and
// modules) on a loopback port, and a raw-socket client that writes exact bytes and reads the
// reply the way a dumb client would.

import net from 'node:net';
import { loadConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import type { Logger } from '../../src/plugin-api/index.js';
import { startNormalWorker, type NormalWorkerOptions } from '../../src/workers/normal.js';
import type { RunningWorker } from '../../src/workers/normal.js';

export const FIXTURES = new URL('../../../shared/fixtures/scan/', import.meta.url).pathname;

export interface CapturingLog extends Logger {
  lines: Array<{ level: string; msg: string; extra?: Record<string, unknown> }>;
}

export function capturingLog(): CapturingLog {
  const lines: CapturingLog['lines'] = [];
  const at = (level: string) => (msg: string, extra?: Record<string, unknown>) => {
    lines.push({ level, msg, ...(extra ? { extra } : {}) });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export async function startRealWorker(
  extra: Partial<Omit<NormalWorkerOptions, 'scanner' | 'host' | 'port'>> = {},
  /** Module configuration merged over conf/ (e.g. a milter_headers footer that rewrites messages). */
  moduleConfig: Record<string, Record<string, unknown>> = {},
): Promise<RunningWorker & { log: CapturingLog }> {
  const cfg = await loadConfig('conf');
  for (const [name, over] of Object.entries(moduleConfig)) cfg.engine.modules[name] = { ...(cfg.engine.modules[name] ?? {}), ...over };
  const scanner = await createEngine(cfg.engine, builtinModules);
  const log = capturingLog();
  const w = await startNormalWorker({ host: '127.0.0.1', port: 0, scanner, log, ...extra });
  return Object.assign(w, { log });
}

export interface ExchangeOptions {
  /** Half-close after writing (default true). */
  halfClose?: boolean;
  /** Give up after this long; resolves with what was read so far. */
  timeoutMs?: number;
  /** Write the request in pieces with this delay between them. */
  chunks?: Buffer[];
  chunkDelayMs?: number;
  /** Connect from this local address (any of 127/8 reaches a loopback listener on Linux). */
  localAddress?: string;
}

/** Writes bytes, reads until the server closes (or the timeout), returns everything read. */
export function exchange(port: number, bytes: Buffer, opts: ExchangeOptions = {}): Promise<{ data: Buffer; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1', ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
    const parts: Buffer[] = [];
    let settled = false;
    const done = (closedByServer: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ data: Buffer.concat(parts), closedByServer });
    };
    const timer = setTimeout(() => done(false), opts.timeoutMs ?? 15_000);
    sock.on('data', (d) => parts.push(d));
    sock.on('end', () => done(true));
    sock.on('close', () => done(true));
    sock.on('error', (err) => {
      if (parts.length > 0) done(true);
      else if (!settled) {
        settled = true;
        clearTimeout(timer);
        reject(err);
      }
    });
    sock.on('connect', async () => {
      const pieces = opts.chunks ?? [bytes];
      for (let i = 0; i < pieces.length; i++) {
        if (sock.destroyed) return;
        sock.write(pieces[i]!);
        if (opts.chunkDelayMs && i < pieces.length - 1) await new Promise((r) => setTimeout(r, opts.chunkDelayMs));
      }
      if (opts.halfClose !== false && !sock.destroyed) sock.end();
    });
  });
}

export interface HttpReply {
  status: number;
  reason: string;
  headers: Array<[string, string]>;
  body: Buffer;
  /** Bytes after this reply (a pipelined second reply). */
  rest: Buffer;
}

export function header(r: HttpReply, name: string): string | undefined {
  const n = name.toLowerCase();
  return r.headers.find(([k]) => k.toLowerCase() === n)?.[1];
}

/** Parses one Content-Length-framed reply off the front of `data`. */
export function parseReply(data: Buffer): HttpReply {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no reply header block in ${JSON.stringify(data.subarray(0, 200).toString('latin1'))}`);
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0]!);
  if (!m) throw new Error(`bad status line ${lines[0]}`);
  const headers: Array<[string, string]> = [];
  for (const l of lines.slice(1)) {
    const c = l.indexOf(':');
    headers.push([l.slice(0, c), l.slice(c + 1).trim()]);
  }
  const len = Number(headers.find(([k]) => k.toLowerCase() === 'content-length')?.[1] ?? '0');
  const body = data.subarray(end + 4, end + 4 + len);
  if (body.length !== len) throw new Error(`short body: ${body.length} of ${len}`);
  return { status: Number(m[1]), reason: m[2]!, headers, body, rest: data.subarray(end + 4 + len) };
}

export const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

/** A small well-formed CRLF message from the fixtures. */
export function postV2(path: string, headers: Array<[string, string]>, body: Buffer | string, version = 'HTTP/1.1'): Buffer {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  let head = `POST ${path} ${version}\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  head += `Content-Length: ${b.length}\r\nConnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), b]);
}
