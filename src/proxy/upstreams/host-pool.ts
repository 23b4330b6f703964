// Connections to one upstream host: a small pool of kept-alive sockets, one request at a time on
// each, and the one exchange "write these request bytes, read one response". Every way an
// exchange can go wrong ends as an AttemptError whose kind the relay maps to the proxy's error replies;
// nothing here throws anything else or leaves a socket behind.

import net from 'node:net';
import type { HostSpec } from './host-list.js';
import { ResponseFormatError, ResponseParser, type UpstreamResponse } from './response-parser.js';

/** Idle connections kept per host: enough for bursts of a few workers, few enough to be cheap. */
export const DEFAULT_MAX_IDLE_PER_HOST = 8;
/**
 * How long an idle connection is kept. Below the scanners' own keep-alive time-out (15 s for
 * mailsift), so the proxy normally closes first and rarely writes to a socket being closed.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 10_000;

export type AttemptFailure = 'refused' | 'timeout' | 'reset' | 'failed' | 'aborted';

export class AttemptError extends Error {
  readonly kind: AttemptFailure;
  constructor(kind: AttemptFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.name = 'AttemptError';
  }
}

/** A kept-alive socket the server had closed before our request reached it: try a fresh one. */
class StaleConnection extends Error {}

export interface ExchangeOptions {
  timeoutMs: number;
  maxReplyBytes: number;
  /** The request asked for keep-alive: a reply that allows it puts the socket back in the pool. */
  keepAlive: boolean;
  signal?: AbortSignal | undefined;
}

export interface HostPoolOptions {
  maxIdle?: number;
  idleTimeoutMs?: number;
}

function kindOf(err: NodeJS.ErrnoException): AttemptFailure {
  switch (err.code) {
    case 'ECONNREFUSED':
    case 'ENOENT': // a unix socket path nobody listens on
      return 'refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ECONNABORTED':
      return 'reset';
    case 'ETIMEDOUT':
      return 'timeout';
    default:
      return 'failed';
  }
}

export class HostPool {
  readonly spec: HostSpec;
  readonly #idle: net.Socket[] = [];
  /** The listener that retires each idle socket, removed again when the socket is reused. */
  readonly #dropOf = new WeakMap<net.Socket, () => void>();
  readonly #maxIdle: number;
  readonly #idleTimeoutMs: number;
  #closed = false;

  constructor(spec: HostSpec, opts: HostPoolOptions = {}) {
    this.spec = spec;
    this.#maxIdle = opts.maxIdle ?? DEFAULT_MAX_IDLE_PER_HOST;
    this.#idleTimeoutMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  }

  /** Idle sockets held now (for tests and statistics). */
  get idleCount(): number {
    return this.#idle.length;
  }

  async exchange(request: Buffer, opts: ExchangeOptions): Promise<UpstreamResponse> {
    if (opts.signal?.aborted) throw new AttemptError('aborted', 'the request was abandoned');
    const reused = this.#takeIdle();
    if (reused) {
      try {
        return await this.#run(reused, false, request, opts);
      } catch (err) {
        if (!(err instanceof StaleConnection)) throw err;
        // fall through to a fresh connection: the server never saw this request
      }
    }
    const socket = this.spec.kind === 'unix' ? net.connect({ path: this.spec.path }) : net.connect({ host: this.spec.host, port: this.spec.port, noDelay: true });
    return this.#run(socket, true, request, opts);
  }

  /** Destroys the idle sockets; exchanges in flight finish and then close their sockets. */
  close(): void {
    this.#closed = true;
    for (const s of this.#idle.splice(0)) s.destroy();
  }

  #takeIdle(): net.Socket | undefined {
    for (;;) {
      const s = this.#idle.pop();
      if (!s) return undefined;
      const drop = this.#dropOf.get(s);
      if (drop) {
        for (const ev of ['data', 'end', 'error', 'close', 'timeout']) s.removeListener(ev, drop);
        this.#dropOf.delete(s);
      }
      s.setTimeout(0);
      if (s.destroyed || !s.writable) {
        s.destroy();
        continue;
      }
      s.ref();
      return s;
    }
  }

  #release(s: net.Socket): void {
    if (this.#closed || this.#idle.length >= this.#maxIdle || s.destroyed) {
      s.destroy();
      return;
    }
    const drop = (): void => {
      const i = this.#idle.indexOf(s);
      if (i >= 0) this.#idle.splice(i, 1);
      s.destroy();
    };
    // An idle socket must stay silent: a byte, an end or an error from the server retires it.
    for (const ev of ['data', 'end', 'error', 'close', 'timeout']) s.on(ev, drop);
    this.#dropOf.set(s, drop);
    s.setTimeout(this.#idleTimeoutMs);
    s.unref();
    this.#idle.push(s);
  }

  #run(socket: net.Socket, fresh: boolean, request: Buffer, opts: ExchangeOptions): Promise<UpstreamResponse> {
    const where = this.spec.name;
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const parser = new ResponseParser(opts.maxReplyBytes);
      let settled = false;
      const cleanup = (): void => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        socket.removeListener('data', onData);
        socket.removeListener('end', onEnd);
        socket.removeListener('error', onError);
        socket.removeListener('close', onClose);
        socket.removeListener('connect', onConnect);
      };
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        cleanup();
        socket.destroy();
        // A reused socket that failed before the first reply byte was closed by the server while idle.
        reject(!fresh && !parser.started && err instanceof AttemptError && (err.kind === 'reset' || err.kind === 'failed') ? new StaleConnection(err.message) : err);
      };
      const done = (res: UpstreamResponse): void => {
        if (settled) return;
        settled = true;
        cleanup();
        if (opts.keepAlive && res.keepAlive) this.#release(socket);
        else socket.destroy();
        resolve(res);
      };
      const onData = (chunk: Buffer): void => {
        let res: UpstreamResponse | undefined;
        try {
          res = parser.feed(chunk);
        } catch (err) {
          fail(new AttemptError('failed', `bad reply from ${where}: ${(err as Error).message}`, { cause: err }));
          return;
        }
        if (res) done(res);
      };
      const onEnd = (): void => {
        try {
          done(parser.end());
        } catch (err) {
          const cut = err instanceof ResponseFormatError && !parser.started;
          fail(new AttemptError(cut ? 'reset' : 'failed', `${where}: ${(err as Error).message}`, { cause: err }));
        }
      };
      const onError = (err: NodeJS.ErrnoException): void => {
        fail(new AttemptError(kindOf(err), `${where}: ${err.code ?? err.message}`, { cause: err }));
      };
      const onClose = (): void => fail(new AttemptError('reset', `${where} closed the connection`));
      const onConnect = (): void => {
        socket.write(request);
      };
      const onAbort = (): void => fail(new AttemptError('aborted', 'the request was abandoned'));
      const timer = setTimeout(() => fail(new AttemptError('timeout', `no reply from ${where} within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      socket.on('data', onData);
      socket.on('end', onEnd);
      socket.on('error', onError);
      socket.on('close', onClose);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (fresh && socket.connecting) socket.once('connect', onConnect);
      else socket.write(request);
    });
  }
}
