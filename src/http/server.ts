// The scan transport: a small HTTP/1.x server over net.Socket. One parser per connection,
// requests answered strictly in order (pipelining), keep-alive when the client asks,
// per-request and idle time-outs so a slow or stalled client never holds a worker.

import net from 'node:net';
import type { CryptSession, HttpCryptServer } from './crypt/server-crypt.js';
import { classifyError, MailsiftError } from './errors.js';
import { replyBodyBytes, replyForError, serializeReplyHead } from './reply.js';
import type { LegacyDialect } from './request-head.js';
import { RequestParser, type ParsedRequest } from './request-parser.js';
import { DEFAULT_SERVER_NAME } from './server-name.js';
import { addCertIssuer, isTlsSocket, verifiedIssuer } from './tls.js';
import type { Handler, Reply, Request } from './types.js';

export interface TransportOptions {
  /** Largest request body (`max_message`); bigger ones get 413. */
  maxBodyBytes?: number;
  /** Largest request line + header block; bigger ones get 431. */
  maxHeaderBytes?: number;
  /** Whole-request budget from its first byte to its last; defeats slowloris trickling. */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept open between requests. */
  keepAliveTimeoutMs?: number;
  /** `Server:` header value. */
  serverName?: string;
  /** Called with errors that have no code (bugs), before the 500 reply. */
  onUnknownError?: (err: unknown) => void;
  /** HTTP encryption when the worker has a keypair; see src/http/crypt/. */
  crypt?: HttpCryptServer;
  /**
   * The whole reply (status line included) for a legacy spamc/RSPAMC request that failed before
   * or outside its handler: a malformed head, a lying Content-length, a body that never comes.
   * Without it such failures get the HTTP error reply, which those clients cannot read.
   */
  legacyError?: (dialect: LegacyDialect, err: unknown) => Buffer;
  /**
   * Asked before each reply on a kept-alive connection, with the connections this transport
   * holds: true answers with `Connection: close`, handing the client to a less loaded worker
   * (src/workers/conn-balance.ts).
   */
  shedKeepAlive?: (openConnections: number) => boolean;
}

/** Default body limit: Rspamd's `max_message`, 50 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 50 * 1024 * 1024;
/** Default header block limit: generous for MTA metadata, small enough to parse cheaply. */
export const DEFAULT_MAX_HEADER_BYTES = 64 * 1024;
/** Default whole-request time budget (a 50 MiB body over a slow link still fits). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Default idle time for keep-alive connections. */
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 15_000;
/**
 * An HTTP/1.0 request without Content-Length may carry a body until EOF; when nothing
 * follows the header block within this grace the body is empty (so `curl -0` is not kept
 * waiting for a half-close it will never send).
 */
const CLOSE_BODY_GRACE_MS = 25;

/** How a transport closes: by default idle connections end at once; `drain` (a reload) lets each connection carry one more request. */
export interface CloseOptions {
  /**
   * Set for a reload: a connection's next request is still read and answered (with
   * `Connection: close`), and an idle one is closed only by its usual keep-alive time-out. A
   * keep-alive client then never has a request cut off by the old worker (closing idle
   * connections early would race with the request a client is sending on one): it reconnects,
   * to a new worker.
   */
  drain?: boolean;
}

export interface Transport {
  server: net.Server;
  /** Connections open now and not ending. */
  openConnections(): number;
  /** Stops accepting, ends idle connections (or drains them, see CloseOptions), waits for in-flight replies. */
  close(opts?: CloseOptions): Promise<void>;
}

export function createTransport(handler: Handler, opts: TransportOptions = {}): Transport {
  const limits = {
    maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxHeaderBytes: opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES,
  };
  const requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const idleTimeout = opts.keepAliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS;
  const serverName = opts.serverName ?? DEFAULT_SERVER_NAME;
  const conns = new Set<Connection>();
  let closing: CloseOptions | undefined;
  const wind = (c: Connection, how: CloseOptions): void => {
    if (how.drain) c.drain();
    else c.shutdownIdle();
  };

  // Connections not yet ending: one we are closing still lingers in `conns` until the client
  // closes too, and counting it would make the balancing hand over more than it should.
  let live = 0;
  const shedKeepAlive = opts.shedKeepAlive;
  const shed = shedKeepAlive ? () => shedKeepAlive(live) : undefined;
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    live++;
    let counted = true;
    const ended = (): void => {
      if (!counted) return;
      counted = false;
      live--;
    };
    const c = new Connection(socket, handler, limits, requestTimeout, idleTimeout, serverName, opts.onUnknownError, opts.crypt, opts.legacyError, shed, ended);
    conns.add(c);
    socket.once('close', () => {
      conns.delete(c);
      ended();
    });
    if (closing) wind(c, closing);
  });

  return {
    server,
    openConnections: () => live,
    close(how: CloseOptions = {}) {
      closing = how;
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const c of conns) wind(c, how);
      });
    },
  };
}

class Connection {
  #socket: net.Socket;
  #parser: RequestParser;
  #handler: Handler;
  #busy = false;
  /** #pump's loop is running (a reply given synchronously must not start a second one). */
  #pumping = false;
  /** Waiting for the peer to read the replies already written (see #awaitDrain). */
  #drainWait = false;
  #eof = false;
  #done = false;
  #timer: NodeJS.Timeout | undefined;
  #timerKind: 'idle' | 'request' | 'grace' | undefined;
  #requestTimeout: number;
  #idleTimeout: number;
  #serverName: string;
  #onUnknown: ((err: unknown) => void) | undefined;
  #shutdownRequested = false;
  #limits: { maxBodyBytes: number; maxHeaderBytes: number };
  /** HTTP encryption: set when the worker has a keypair. */
  #crypt: HttpCryptServer | undefined;
  /** TLS: the socket came through an HTTPS listener; issuer of its verified client certificate. */
  #tls: boolean;
  #certIssuer: string | undefined;
  #legacyError: TransportOptions['legacyError'];
  /** True when this connection should close after the reply it is writing (see shedKeepAlive). */
  #shed: (() => boolean) | undefined;
  /** Tells the transport this connection is ending (called once or more; it counts once). */
  #ended: (() => void) | undefined;

  constructor(
    socket: net.Socket,
    handler: Handler,
    limits: { maxBodyBytes: number; maxHeaderBytes: number },
    requestTimeout: number,
    idleTimeout: number,
    serverName: string,
    onUnknown: ((err: unknown) => void) | undefined,
    crypt?: HttpCryptServer,
    legacyError?: TransportOptions['legacyError'],
    shed?: () => boolean,
    ended?: () => void,
  ) {
    this.#socket = socket;
    this.#ended = ended;
    this.#legacyError = legacyError;
    this.#shed = shed;
    this.#limits = limits;
    this.#crypt = crypt;
    this.#tls = isTlsSocket(socket);
    this.#certIssuer = isTlsSocket(socket) ? verifiedIssuer(socket) : undefined;
    this.#handler = handler;
    this.#parser = new RequestParser(limits);
    this.#requestTimeout = requestTimeout;
    this.#idleTimeout = idleTimeout;
    this.#serverName = serverName;
    this.#onUnknown = onUnknown;
    socket.on('data', (chunk: Buffer) => {
      if (this.#done) return;
      this.#parser.feed(chunk);
      this.#pump();
    });
    socket.on('end', () => {
      this.#eof = true;
      this.#pump();
    });
    socket.on('error', () => this.#destroy());
    socket.on('close', () => this.#clearTimer());
    this.#arm('idle');
  }

  /** Reload: the next request is answered with `Connection: close`; an idle connection ends at its keep-alive time-out. */
  drain(): void {
    this.#shutdownRequested = true;
  }

  shutdownIdle(): void {
    this.#shutdownRequested = true;
    // An in-flight scan finishes and is answered (then the connection closes); a half-read
    // request would only hold the shutdown up until its time-out, so it is dropped.
    if (!this.#busy) this.#destroy();
  }

  /**
   * Takes requests off the parser and dispatches them, one at a time, in a loop: a request
   * answered at once (`/ping`, a refusal) hands back to this loop instead of calling it again,
   * so thousands of pipelined requests in one read cannot grow the stack (they overflowed it
   * and killed the worker). The loop ends when a request is in flight, more bytes are needed,
   * or the peer is not reading its replies.
   */
  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      // Each turn consumes one request's bytes from the parser, so the buffered bytes bound it.
      while (!this.#busy && !this.#done) {
        if (this.#socket.writableNeedDrain) {
          this.#awaitDrain();
          return;
        }
        let req: ParsedRequest | undefined;
        try {
          req = this.#parser.next();
          if (!req && this.#eof) {
            req = this.#parser.end();
            if (!req) {
              this.#finishAfterEof();
              return;
            }
          }
        } catch (err) {
          this.#fail(err);
          return;
        }
        if (!req) {
          if (this.#parser.takeExpectContinue() && this.#socket.writable) this.#socket.write('HTTP/1.1 100 Continue\r\n\r\n');
          if (this.#parser.awaitingCloseBody) {
            if (this.#timerKind !== 'grace') this.#arm('grace');
          } else {
            this.#arm(this.#parser.inRequest ? 'request' : 'idle');
          }
          return;
        }
        this.#dispatch(req);
      }
    } finally {
      this.#pumping = false;
    }
  }

  /**
   * The peer is not reading its replies (pipelined requests answered faster than it reads): stop
   * reading more requests until the replies drain, so its unread replies cannot pile up in
   * memory. A peer that never reads is dropped by the request time-out.
   */
  #awaitDrain(): void {
    this.#socket.pause();
    this.#arm('request');
    if (this.#drainWait) return;
    this.#drainWait = true;
    this.#socket.once('drain', () => {
      this.#drainWait = false;
      if (this.#done) return;
      this.#socket.resume();
      this.#pump();
    });
  }

  #dispatch(outer: ParsedRequest): void {
    this.#busy = true;
    this.#clearTimer();
    this.#socket.pause();
    const peer = { address: this.#socket.remoteAddress ?? '', port: this.#socket.remotePort ?? 0 };
    // --- HTTP encryption hook: open the request here, seal the reply in onReply (src/http/crypt/).
    let parsed = outer;
    let session: CryptSession | undefined;
    if (this.#crypt) {
      let u;
      try {
        u = this.#crypt.unwrap(outer, peer.address, this.#limits);
      } catch (err) {
        this.#fail(err); // a bug, not a refusal: 500, logged through onUnknown
        return;
      }
      if (u.kind === 'rejected') {
        const reply = replyForError(u.error, this.#onUnknown);
        this.#write(u.session ? this.#crypt.wrap(reply, u.session, false, this.#serverName) : reply, false);
        this.#busy = false;
        this.#endGracefully();
        return;
      }
      if (u.kind === 'opened') {
        parsed = u.inner;
        session = u.session;
      }
    }
    // --- end of the encryption hook.
    const req: Request = {
      method: parsed.method,
      path: parsed.path,
      query: parsed.query,
      headers: parsed.headers,
      body: parsed.body,
      version: parsed.version,
      peer,
      tls: this.#tls,
      ...(this.#certIssuer !== undefined ? { tlsCertIssuer: this.#certIssuer } : {}),
      ...(parsed.legacy ? { legacy: parsed.legacy } : {}),
      ...(session ? { crypt: { peerKey: session.peerKey } } : {}),
    };
    addCertIssuer(req.headers, this.#certIssuer); // TLS: the issuer reaches the task (tls.ts)
    // The outer request decides the connection's fate; an encrypted reply is sealed to the client.
    let keepAlive = outer.keepAlive && !this.#shutdownRequested;
    const onReply = (reply: Reply): void => {
      // A drain that began while this request was in flight closes the connection after it.
      if (reply.close || this.#shutdownRequested || (keepAlive && this.#shed?.())) keepAlive = false;
      this.#write(session ? this.#crypt!.wrap(reply, session, keepAlive, this.#serverName) : reply, keepAlive);
      this.#busy = false;
      if (!keepAlive) {
        this.#endGracefully();
        return;
      }
      this.#socket.resume();
      this.#pump();
    };
    let pending: Promise<Reply> | Reply;
    try {
      pending = this.#handler(req);
    } catch (err) {
      onReply(this.#errorReply(err, parsed.legacy));
      return;
    }
    if (pending instanceof Promise) {
      pending.then(onReply, (err: unknown) => onReply(this.#errorReply(err, parsed.legacy)));
    } else {
      onReply(pending);
    }
  }

  #write(reply: Reply, keepAlive: boolean): void {
    if (this.#socket.destroyed || !this.#socket.writable) return;
    if (reply.raw) {
      this.#socket.write(typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body);
      return;
    }
    const body = replyBodyBytes(reply);
    const head = serializeReplyHead(reply, body.length, keepAlive, this.#serverName);
    this.#socket.cork();
    this.#socket.write(head, 'latin1');
    if (body.length > 0) this.#socket.write(body);
    this.#socket.uncork();
  }

  #fail(err: unknown): void {
    this.#done = true;
    this.#clearTimer();
    this.#write(this.#errorReply(err, this.#parser.legacyDialect), false);
    this.#endGracefully();
  }

  /** The error reply in the request's own protocol: HTTP, or a legacy text line. */
  #errorReply(err: unknown, legacy: LegacyDialect | undefined): Reply {
    if (!legacy || !this.#legacyError) return replyForError(err, this.#onUnknown);
    if (!classifyError(err).known) this.#onUnknown?.(err);
    return { status: 400, raw: true, close: true, body: this.#legacyError(legacy, err) };
  }

  #finishAfterEof(): void {
    // The client half-closed with no request pending: answer nothing more and close our side.
    this.#done = true;
    this.#clearTimer();
    this.#endGracefully();
  }

  /** End our side after the reply is flushed, then drop the socket even if the peer lingers. */
  #endGracefully(): void {
    this.#done = true;
    this.#ended?.();
    this.#clearTimer();
    if (this.#socket.destroyed) return;
    this.#socket.end();
    // Unread request bytes would make the kernel reset the connection and lose our reply;
    // keep draining (and discarding) for a moment before destroying.
    this.#socket.resume();
    const t = setTimeout(() => this.#socket.destroy(), 2000);
    t.unref();
    this.#socket.once('close', () => clearTimeout(t));
  }

  #destroy(): void {
    this.#done = true;
    this.#ended?.();
    this.#clearTimer();
    this.#socket.destroy();
  }

  #arm(kind: 'idle' | 'request' | 'grace'): void {
    if (this.#timerKind === kind && this.#timer) return;
    this.#clearTimer();
    this.#timerKind = kind;
    const ms = kind === 'idle' ? this.#idleTimeout : kind === 'grace' ? CLOSE_BODY_GRACE_MS : this.#requestTimeout;
    this.#timer = setTimeout(() => this.#onTimer(kind), ms);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerKind = undefined;
  }

  #onTimer(kind: 'idle' | 'request' | 'grace'): void {
    this.#timer = undefined;
    this.#timerKind = undefined;
    if (this.#busy || this.#done) return;
    if (kind === 'idle') {
      this.#destroy();
      return;
    }
    if (kind === 'grace') {
      if (this.#parser.awaitingCloseBody) {
        const req = this.#parser.finishEmptyCloseBody();
        if (req) {
          this.#dispatch(req);
          return;
        }
      }
      this.#arm('request');
      return;
    }
    this.#fail(new MailsiftError('ERR_REQUEST_TIMEOUT', 'Request timed out'));
  }
}
