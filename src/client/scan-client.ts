// The scan client: one keep-alive connection pool to one server, scans over v2 or v3, and
// typed errors for everything that is not a decoded 2xx reply.
import http from 'node:http';
import { decodePublicKey } from '../crypto/keypair.js';
import { sendEncrypted } from './encrypted.js';
import { CLIENT_ERROR_CODES, ScanClientError } from './errors.js';
import { decodeReply, errorText } from './reply.js';
import { buildV2Request, buildV3Request, type BuiltRequest } from './request.js';
import type { ScanOptions, ScanReply } from './types.js';

export const DEFAULT_SCAN_PORT = 11333;
/** rspamc's default: long enough for a scan that waits on slow DNS, short enough to notice a hang. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Cap on one reply's size; protects the client from a misbehaving server streaming forever. */
export const MAX_REPLY_BYTES = 256 * 1024 * 1024;

export interface ScanClientOptions {
  /** `host`, `host:port`, `[v6]:port`, or a unix socket path starting with `/`. */
  server?: string;
  timeoutMs?: number;
  /** Sockets kept per server; defaults to Infinity like Node's agent (callers bound concurrency). */
  maxSockets?: number;
  /** Reuse connections between requests (default true). */
  keepAlive?: boolean;
  /** Sent as `Password` with every request unless a request sets its own. */
  password?: string;
  userAgent?: string;
  /**
   * The server's public key (52 base32 characters, as `rspamc --key`): every request is then
   * HTTP-encrypted, one connection per request like rspamc.
   */
  key?: string;
}

export interface ServerAddress {
  host?: string;
  port?: number;
  socketPath?: string;
}

/** Parse rspamc's `-h` syntax. */
export function parseServer(spec: string, defaultPort = DEFAULT_SCAN_PORT): ServerAddress {
  if (spec.startsWith('/') || spec.startsWith('.')) return { socketPath: spec };
  let host = spec;
  let portText: string | undefined;
  if (spec.startsWith('[')) {
    const close = spec.indexOf(']');
    if (close < 0) throw new ScanClientError(CLIENT_ERROR_CODES.BAD_REQUEST, `bad server address: ${spec}`);
    host = spec.slice(1, close);
    const rest = spec.slice(close + 1);
    if (rest.startsWith(':')) portText = rest.slice(1);
  } else if (spec.split(':').length === 2) {
    [host, portText] = spec.split(':') as [string, string];
  }
  const port = portText === undefined || portText === '' ? defaultPort : Number(portText);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new ScanClientError(CLIENT_ERROR_CODES.BAD_REQUEST, `bad port in server address: ${spec}`);
  }
  return { host: host || 'localhost', port };
}

type OutgoingHeaders = Record<string, string | string[]>;

function toHeaderObject(pairs: Array<[string, string]>): OutgoingHeaders {
  // Names from the caller: no prototype, so a header called `__proto__` is sent like any other.
  const out = Object.create(null) as OutgoingHeaders;
  const keyOf = new Map<string, string>(); // lower-case → first spelling, so repeats merge
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    const key = keyOf.get(lower);
    if (key === undefined) {
      keyOf.set(lower, name);
      out[name] = value;
    } else {
      const prev = out[key]!;
      out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
    }
  }
  return out;
}

export class ScanClient {
  readonly address: ServerAddress;
  readonly #agent: http.Agent;
  readonly #timeoutMs: number;
  readonly #password: string | undefined;
  readonly #userAgent: string;
  /** Decoded `key` option: requests are encrypted to it. */
  readonly #serverKey: Uint8Array | undefined;

  constructor(opts: ScanClientOptions = {}) {
    this.address = parseServer(opts.server ?? `localhost:${DEFAULT_SCAN_PORT}`);
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#password = opts.password;
    this.#userAgent = opts.userAgent ?? 'mailsiftc';
    this.#agent = new http.Agent({ keepAlive: opts.keepAlive ?? true, maxSockets: opts.maxSockets ?? Infinity });
    if (opts.key !== undefined) {
      this.#serverKey = decodePublicKey(opts.key);
      if (!this.#serverKey) throw new ScanClientError(CLIENT_ERROR_CODES.BAD_REQUEST, `bad server key (expected 52 base32 characters): ${opts.key}`);
    }
  }

  /** Scan one message; resolves with the decoded reply or rejects with a ScanClientError. */
  async scan(message: Buffer, opts: ScanOptions = {}): Promise<ScanReply> {
    const withAuth: ScanOptions = opts.password === undefined && this.#password !== undefined ? { ...opts, password: this.#password } : opts;
    const req = withAuth.protocol === 'v3' ? buildV3Request(message, withAuth) : buildV2Request(message, withAuth);
    const started = performance.now();
    const { status, reason, headers, body } = await this.#send(req, withAuth.timeoutMs ?? this.#timeoutMs);
    if (status < 200 || status > 299) {
      const text = errorText(status, reason, headers, body);
      throw new ScanClientError(CLIENT_ERROR_CODES.HTTP_STATUS, `server replied ${status}: ${text}`, { status, serverError: text });
    }
    return { ...decodeReply(status, headers, body), elapsedMs: performance.now() - started };
  }

  /** GET /ping; resolves with the reply text (`pong`). */
  async ping(timeoutMs = this.#timeoutMs): Promise<string> {
    const { status, reason, headers, body } = await this.#send({ method: 'GET', path: '/ping', headers: [], body: Buffer.alloc(0) }, timeoutMs);
    if (status !== 200) {
      const text = errorText(status, reason, headers, body);
      throw new ScanClientError(CLIENT_ERROR_CODES.HTTP_STATUS, `server replied ${status}: ${text}`, { status, serverError: text });
    }
    return body.toString('utf8').trim();
  }

  /** Close pooled connections; in-flight requests finish. */
  close(): void {
    this.#agent.destroy();
  }

  async #send(req: BuiltRequest | { method: 'GET'; path: string; headers: Array<[string, string]>; body: Buffer }, timeoutMs: number) {
    if (this.#serverKey) {
      const headers: Array<[string, string]> = [['User-Agent', this.#userAgent], ...req.headers];
      return sendEncrypted(this.address, this.#serverKey, { ...req, headers }, { timeoutMs, maxReplyBytes: MAX_REPLY_BYTES });
    }
    try {
      return await this.#sendOnce(req, timeoutMs);
    } catch (e) {
      // A pooled socket the server had already closed fails at once with ECONNRESET; one fresh try is safe
      // because the server never saw the request.
      if ((e as { reusedSocket?: boolean }).reusedSocket) return this.#sendOnce(req, timeoutMs);
      throw e;
    }
  }

  #sendOnce(req: { method: string; path: string; headers: Array<[string, string]>; body: Buffer }, timeoutMs: number) {
    return new Promise<{ status: number; reason: string | undefined; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      // node:http writes header strings as latin1: hand it the UTF-8 bytes of each value.
      const pairs: Array<[string, string]> = [['User-Agent', this.#userAgent], ...req.headers];
      const headers = toHeaderObject(pairs.map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('latin1')]));
      headers['Content-Length'] = String(req.body.length);
      const r = http.request({ ...this.address, method: req.method, path: req.path, headers, agent: this.#agent });
      const where = this.address.socketPath ?? `${this.address.host}:${this.address.port}`;
      let settled = false;
      const fail = (err: ScanClientError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      };
      const timer = setTimeout(() => {
        fail(new ScanClientError(CLIENT_ERROR_CODES.TIMEOUT, `no reply from ${where} within ${timeoutMs} ms`));
        r.destroy();
      }, timeoutMs);
      r.on('error', (e: NodeJS.ErrnoException) => {
        const err = new ScanClientError(CLIENT_ERROR_CODES.CONNECT, `cannot talk to ${where}: ${e.code ?? e.message}`, { cause: e });
        if (r.reusedSocket && e.code === 'ECONNRESET') Object.assign(err, { reusedSocket: true });
        fail(err);
      });
      r.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_REPLY_BYTES) {
            fail(new ScanClientError(CLIENT_ERROR_CODES.BAD_REPLY, `reply from ${where} exceeds ${MAX_REPLY_BYTES} bytes`));
            r.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('error', (e) => fail(new ScanClientError(CLIENT_ERROR_CODES.CONNECT, `reply from ${where} broke off: ${e.message}`, { cause: e })));
        res.on('end', () => {
          if (settled) return;
          if (!res.complete) {
            fail(new ScanClientError(CLIENT_ERROR_CODES.CONNECT, `reply from ${where} broke off before its end`));
            return;
          }
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, reason: res.statusMessage, headers: res.headers, body: Buffer.concat(chunks, size) });
        });
      });
      r.end(req.body);
    });
  }
}
