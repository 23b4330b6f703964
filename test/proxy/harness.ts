// Real pieces for proxy tests: mailsift scan workers (the real engine and route table behind the
// real transport, recording what each request looked like on arrival), the proxy worker itself
// started from a `workers.proxy` section through the real schema, and fake upstreams that fail
// in the ways §3.11 names (refused, hanging, answering 500).

import http from 'node:http';
import net from 'node:net';
import { loadConfig, type LoadedConfig } from '../../src/config/load.js';
import type { KexKeypair } from '../../src/crypto/keypair.js';
import type { Scanner } from '../../src/engine/contract.js';
import { createEngine } from '../../src/engine/index.js';
import { createHttpCrypt } from '../../src/http/crypt/index.js';
import { createTransport } from '../../src/http/server.js';
import type { Handler } from '../../src/http/types.js';
import { builtinModules } from '../../src/modules/index.js';
import { createLogger } from '../../src/observability/log.js';
import { ProxyWorkerSchema } from '../../src/proxy/config-schema.js';
import { proxyRuntimeConfig, type ProxyRuntimeConfig } from '../../src/proxy/config.js';
import type { ProxyRelayOptions } from '../../src/proxy/relay/proxy-relay.js';
import { createNormalHandler } from '../../src/workers/normal.js';
import { startProxyWorker, type ProxyWorkerHandle } from '../../src/workers/proxy.js';

export const MESSAGES = '/work/shared/fixtures/spamc/messages';

let shared: Promise<{ cfg: LoadedConfig; scanner: Scanner }> | undefined;

/** One engine over the shipped conf/ per test process (building one takes seconds). */
export function sharedEngine(): Promise<{ cfg: LoadedConfig; scanner: Scanner }> {
  shared ??= (async () => {
    const cfg = await loadConfig('conf');
    const scanner = await createEngine(cfg.engine, builtinModules);
    return { cfg, scanner };
  })();
  return shared;
}

const quiet = createLogger({ level: 'silent' });

/** The normal worker's route table over the shared engine (what `serve` gives a self-scanning proxy). */
export async function scanHandler(): Promise<Handler> {
  const { cfg, scanner } = await sharedEngine();
  return createNormalHandler({ scanner, maxMessage: cfg.workers.normal.maxMessage, dictionaries: {}, log: quiet });
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  /** Arrived HTTP-encrypted (the transport opened it). */
  encrypted: boolean;
  body: Buffer;
}

export interface TestScanner {
  port: number;
  address: string;
  seen: SeenRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A real mailsift scan worker on a free loopback port, recording every request it is handed. */
export async function startScanner(opts: { keypair?: KexKeypair } = {}): Promise<TestScanner> {
  const inner = await scanHandler();
  const seen: SeenRequest[] = [];
  const handler: Handler = (req) => {
    seen.push({ method: req.method, path: req.path, headers: [...req.headers.raw], encrypted: req.crypt !== undefined, body: req.body });
    return inner(req);
  };
  const t = createTransport(handler, { ...(opts.keypair ? { crypt: createHttpCrypt({ keypair: opts.keypair, encryptedOnly: false }, quiet) } : {}) });
  let connections = 0;
  t.server.on('connection', () => connections++);
  await new Promise<void>((resolve) => t.server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const port = (t.server.address() as net.AddressInfo).port;
  return { port, address: `127.0.0.1:${port}`, seen, connections: () => connections, close: () => t.close() };
}

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export interface TestProxy {
  handle: ProxyWorkerHandle;
  port: number;
  address: string;
  config: ProxyRuntimeConfig;
  logs: LogLine[];
  close(): Promise<void>;
}

/** The proxy worker from a `workers.proxy` section (enabled, bound to a free loopback port unless given). */
export async function startProxy(section: Record<string, unknown>, relay: Omit<ProxyRelayOptions, 'config' | 'log' | 'selfScan'> = {}): Promise<TestProxy> {
  const { cfg } = await sharedEngine();
  const value = ProxyWorkerSchema.parse({ enabled: true, bind: '127.0.0.1:0', ...section });
  const config = proxyRuntimeConfig(value, cfg.engine.actions);
  const logs: LogLine[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => logs.push(JSON.parse(line) as LogLine) } });
  const needsScan = config.selfScan || Object.values(config.upstreams).some((g) => g.selfScan);
  const handle = await startProxyWorker({ config, log, ...(needsScan ? { selfScan: await scanHandler() } : {}), relay });
  return { handle, port: handle.port, address: `127.0.0.1:${handle.port}`, config, logs, close: () => handle.close() };
}

/** A loopback port nothing listens on: connections to it are refused. */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export interface FakeUpstream {
  port: number;
  address: string;
  /** Connections (hanging) or requests (status) received. */
  hits: number;
  close(): Promise<void>;
}

/** Accepts connections, reads whatever comes, never answers. */
export async function startHangingUpstream(): Promise<FakeUpstream> {
  const sockets = new Set<net.Socket>();
  const fake = { hits: 0 } as FakeUpstream;
  const s = net.createServer((sock) => {
    fake.hits++;
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    sock.resume();
  });
  await new Promise<void>((resolve) => s.listen({ host: '127.0.0.1', port: 0 }, resolve));
  fake.port = (s.address() as net.AddressInfo).port;
  fake.address = `127.0.0.1:${fake.port}`;
  fake.close = () => {
    for (const sock of sockets) sock.destroy();
    return new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return fake;
}

/** Answers every request with this status and a JSON error body (an upstream in trouble). */
export async function startStatusUpstream(status: number): Promise<FakeUpstream> {
  const fake = { hits: 0 } as FakeUpstream;
  const s = http.createServer((req, res) => {
    fake.hits++;
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: `status ${status} from a fake`, error_domain: 'task-error' }));
    });
  });
  await new Promise<void>((resolve) => s.listen({ host: '127.0.0.1', port: 0 }, resolve));
  fake.port = (s.address() as net.AddressInfo).port;
  fake.address = `127.0.0.1:${fake.port}`;
  fake.close = () => {
    s.closeAllConnections();
    return new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return fake;
}

export interface RawReply {
  statusLine: string;
  status: number;
  headers: Array<[string, string]>;
  body: Buffer;
  /** Every byte received. */
  raw: Buffer;
}

/** A header's first value, by case-insensitive name. */
export function header(r: { headers: Array<[string, string]> }, name: string): string | undefined {
  return r.headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

/** Generous: a scan on a loaded 2-core machine can take seconds. */
export const EXCHANGE_TIMEOUT_MS = 60_000;

/**
 * Writes raw request bytes and reads until the server closes or one Content-Length reply is in
 * (`closeAfter`: keep reading until the close, for legacy replies without a length).
 */
export function rawExchange(port: number, request: Buffer | string, opts: { untilClose?: boolean } = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let settled = false;
    const timer = setTimeout(() => finish(new Error('no complete reply in time')), EXCHANGE_TIMEOUT_MS);
    function finish(err?: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      const raw = Buffer.concat(chunks);
      if (err) return reject(err);
      const end = raw.indexOf('\r\n\r\n');
      const headEnd = end < 0 ? raw.length : end;
      const lines = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers: Array<[string, string]> = [];
      for (const l of lines.slice(1)) {
        const c = l.indexOf(':');
        if (c > 0) headers.push([l.slice(0, c), l.slice(c + 1).trim()]);
      }
      const statusLine = lines[0] ?? '';
      resolve({ statusLine, status: Number(statusLine.split(' ')[1]), headers, body: end < 0 ? Buffer.alloc(0) : raw.subarray(end + 4), raw });
    }
    const complete = (): boolean => {
      if (opts.untilClose) return false;
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(raw.subarray(0, end).toString('latin1'));
      return m !== null && raw.length >= end + 4 + Number(m[1]);
    };
    sock.on('data', (c: Buffer) => {
      chunks.push(c);
      if (complete()) finish();
    });
    sock.on('end', () => finish());
    sock.on('close', () => finish());
    sock.on('error', (e) => (chunks.length ? finish() : finish(e)));
    sock.write(request);
  });
}

/** A `/checkv2` POST with these headers, framed by Content-Length. */
export function checkv2(body: Buffer, headers: Record<string, string> = {}, path = '/checkv2'): Buffer {
  let head = `POST ${path} HTTP/1.1\r\nContent-Length: ${body.length}\r\nConnection: close\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`), body]);
}
