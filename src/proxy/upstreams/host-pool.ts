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

/** What a connection's events are routed to while an exchange runs on it. */
interface ExchangeEvents {
  data(chunk: Buffer): void;
  end(): void;
  error(err: NodeJS.ErrnoException): void;
  close(): void;
}

/**
 * A pooled connection. Its listeners are attached once, when it is opened, and route each event
 * to the exchange running on it, if any; an idle connection must stay silent, so any event
 * retires it. (Adding and removing five listeners per exchange, and a socket time-out per idle
 * spell, cost the proxy about a tenth of its CPU per relayed message.)
 */
class Conn {
  readonly socket: net.Socket;
  exchange: ExchangeEvents | undefined;
  /** performance.now() when it was put back in the pool. */
  idleSince = 0;

  constructor(socket: net.Socket, retire: (c: Conn) => void) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => (this.exchange ? this.exchange.data(chunk) : retire(this)));
    socket.on('end', () => (this.exchange ? this.exchange.end() : retire(this)));
    socket.on('error', (err: NodeJS.ErrnoException) => (this.exchange ? this.exchange.error(err) : retire(this)));
    socket.on('close', () => (this.exchange ? this.exchange.close() : retire(this)));
  }
}

export class HostPool {
  readonly spec: HostSpec;
  /** Idle connections, oldest first: reuse takes the newest, the idle sweep retires from the front. */
  readonly #idle: Conn[] = [];
  readonly #maxIdle: number;
  readonly #idleTimeoutMs: number;
  #sweep: NodeJS.Timeout | undefined;
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

  /** Sends `request` (its buffers in one write) and reads one response. */
  async exchange(request: Buffer | readonly Buffer[], opts: ExchangeOptions): Promise<UpstreamResponse> {
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
    // A connection never holds the process open by itself: an exchange's own timer does while it runs.
    socket.unref();
    return this.#run(new Conn(socket, (c) => this.#retire(c)), true, request, opts);
  }

  /** Destroys the idle sockets; exchanges in flight finish and then close their sockets. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#sweep);
    this.#sweep = undefined;
    for (const c of this.#idle.splice(0)) c.socket.destroy();
  }

  #takeIdle(): Conn | undefined {
    for (;;) {
      const c = this.#idle.pop();
      if (!c) return undefined;
      if (c.socket.destroyed || !c.socket.writable) {
        c.socket.destroy();
        continue;
      }
      return c;
    }
  }

  /** An idle connection heard from (the server closed it, or sent bytes nobody asked for). */
  #retire(c: Conn): void {
    const i = this.#idle.indexOf(c);
    if (i >= 0) this.#idle.splice(i, 1);
    c.socket.destroy();
  }

  #release(c: Conn): void {
    if (this.#closed || this.#idle.length >= this.#maxIdle || c.socket.destroyed) {
      c.socket.destroy();
      return;
    }
    c.idleSince = performance.now();
    this.#idle.push(c);
    if (!this.#sweep) this.#scheduleSweep(this.#idleTimeoutMs);
  }

  /** Closes the connections idle for idleTimeoutMs, then waits for the next one to be. */
  #scheduleSweep(inMs: number): void {
    this.#sweep = setTimeout(() => {
      this.#sweep = undefined;
      const now = performance.now();
      while (this.#idle.length > 0 && now - this.#idle[0]!.idleSince >= this.#idleTimeoutMs) this.#idle.shift()!.socket.destroy();
      const oldest = this.#idle[0];
      if (oldest) this.#scheduleSweep(Math.max(1, oldest.idleSince + this.#idleTimeoutMs - now));
    }, inMs);
    this.#sweep.unref();
  }

  #run(conn: Conn, fresh: boolean, request: Buffer | readonly Buffer[], opts: ExchangeOptions): Promise<UpstreamResponse> {
    const where = this.spec.name;
    const socket = conn.socket;
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const parser = new ResponseParser(opts.maxReplyBytes);
      let settled = false;
      const cleanup = (): void => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        conn.exchange = undefined;
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
        if (opts.keepAlive && res.keepAlive) this.#release(conn);
        else socket.destroy();
        resolve(res);
      };
      const send = (): void => {
        if (Buffer.isBuffer(request)) {
          socket.write(request);
          return;
        }
        socket.cork();
        for (const b of request as readonly Buffer[]) if (b.length > 0) socket.write(b);
        socket.uncork();
      };
      conn.exchange = {
        data: (chunk) => {
          let res: UpstreamResponse | undefined;
          try {
            res = parser.feed(chunk);
          } catch (err) {
            fail(new AttemptError('failed', `bad reply from ${where}: ${(err as Error).message}`, { cause: err }));
            return;
          }
          if (res) done(res);
        },
        end: () => {
          try {
            done(parser.end());
          } catch (err) {
            const cut = err instanceof ResponseFormatError && !parser.started;
            fail(new AttemptError(cut ? 'reset' : 'failed', `${where}: ${(err as Error).message}`, { cause: err }));
          }
        },
        error: (err) => fail(new AttemptError(kindOf(err), `${where}: ${err.code ?? err.message}`, { cause: err })),
        close: () => fail(new AttemptError('reset', `${where} closed the connection`)),
      };
      const onAbort = (): void => fail(new AttemptError('aborted', 'the request was abandoned'));
      const timer = setTimeout(() => fail(new AttemptError('timeout', `no reply from ${where} within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (fresh && socket.connecting) {
        socket.once('connect', () => {
          if (!settled) send();
        });
      } else send();
    });
  }
}
