// One fuzz input on the wire, two ways.
//
// send(): a fresh connection, the raw bytes, a half-close (so a server waiting for more body
// sees the end and must answer now: silence after that is a hang, not a request still
// arriving), then everything the server sends until it closes or a whole reply is in.
//
// Pool.send(): for an input whose HTTP framing is exact (exactlyFramed: one HTTP/1.1 request,
// every header line well formed, one Content-Length equal to the body), a kept-alive
// connection: the server has the whole request by its own framing, so no half-close is needed
// for silence to be a hang, and neither side pays a connection per input (on the server that is
// the supervisor accepting and handing the socket to a worker). Inputs that bend the framing
// always get a fresh connection: on a shared one they would desynchronise the next request.
import net from 'node:net';

/** No reply (nor close) within this long after the input was written is a hang. */
export const HANG_MS = 10_000;
/** Time given to writing the input, on top of HANG_MS, before the backstop calls it a hang. */
const BACKSTOP_EXTRA_MS = 20_000;
/** Reply bytes kept; a reply longer than this is cut (the status line is all we need). */
const MAX_REPLY_BYTES = 4 * 1024 * 1024;
/** Request heads longer than this are never sent on a kept-alive connection (header floods end in 431 and a close). */
const MAX_POOLED_HEAD = 64 * 1024;

export type Outcome =
  /** A reply was read (the first one, when the input made the server answer several). */
  | { kind: 'reply'; status: number; head: string; body: Buffer; ms: number; retried?: true }
  /** The server closed the connection without a byte. */
  | { kind: 'closed'; ms: number; retried?: true }
  /** The connection failed (refused, reset…). */
  | { kind: 'error'; code: string; ms: number; retried?: true }
  | { kind: 'timeout'; ms: number; retried?: true };
// retried: a kept-alive connection closed without answering, and this is the outcome of the
// input sent again on a fresh one (the close may have been a worker exiting on the input).

export interface Target {
  host: string;
  port: number;
}

/** The first HTTP reply in `buf`: status, head, and its body (by Content-Length, else all the rest). */
export function parseFirstReply(whole: Buffer): { status: number; head: string; body: Buffer } | undefined {
  let buf = whole;
  let end = buf.indexOf('\r\n\r\n');
  // Interim replies (100 Continue) are not the answer.
  while (end >= 0 && /^HTTP\/\d\.\d 1\d\d/.test(buf.toString('latin1', 0, 16))) {
    buf = buf.subarray(end + 4);
    end = buf.indexOf('\r\n\r\n');
  }
  if (end < 0) return undefined;
  const head = buf.toString('latin1', 0, end);
  const m = /^HTTP\/\d\.\d (\d{3})/.exec(head);
  if (!m) return undefined;
  const len = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  const body = len ? buf.subarray(end + 4, end + 4 + Number(len[1])) : buf.subarray(end + 4);
  return { status: Number(m[1]), head, body };
}

/**
 * Collects reply bytes and says when the first final reply is complete, without re-joining
 * every chunk received so far on each new one (a 4 MB reply in 64 KB chunks made that quadratic).
 */
class ReplyReader {
  readonly #chunks: Buffer[] = [];
  size = 0;
  /** Offset of the final reply's head in the joined bytes, and where its body ends, once known. */
  #bodyEnd = -1;
  /** The final reply's head has no Content-Length: it ends when the connection does. */
  untilClose = false;
  #scanned = 0;

  add(d: Buffer): void {
    if (this.size >= MAX_REPLY_BYTES) return;
    this.#chunks.push(d);
    this.size += d.length;
  }

  joined(): Buffer {
    if (this.#chunks.length > 1) this.#chunks.splice(0, this.#chunks.length, Buffer.concat(this.#chunks, this.size));
    return this.#chunks[0] ?? Buffer.alloc(0);
  }

  /** True once the first final reply is all in (by its Content-Length). */
  complete(): boolean {
    if (this.#bodyEnd >= 0) return this.size >= this.#bodyEnd;
    if (this.untilClose) return false;
    const buf = this.joined();
    // Skip interim (1xx) replies and find the final one's head.
    for (;;) {
      const end = buf.indexOf('\r\n\r\n', Math.max(this.#scanned - 3, 0));
      if (end < 0) {
        this.#scanned = buf.length;
        return false;
      }
      const head = buf.toString('latin1', this.#headStart, end);
      if (/^HTTP\/\d\.\d 1\d\d/.test(head)) {
        this.#headStart = end + 4;
        this.#scanned = end + 4;
        continue;
      }
      const len = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (!len || !/^HTTP\/\d\.\d \d{3}/.test(head)) {
        this.untilClose = true;
        return false;
      }
      this.#bodyEnd = end + 4 + Number(len[1]);
      this.#headFinal = head;
      return this.size >= this.#bodyEnd;
    }
  }

  #headStart = 0;
  #headFinal = '';

  /** The final reply's head (after complete() said true). */
  get head(): string {
    return this.#headFinal;
  }

  /** Bytes past the end of the first final reply (a second reply, or garbage). */
  get extra(): number {
    return this.#bodyEnd >= 0 ? this.size - this.#bodyEnd : 0;
  }

  outcome(ms: number): Outcome {
    if (this.size === 0) return { kind: 'closed', ms };
    const all = this.joined();
    const r = parseFirstReply(all);
    // Bytes that are not an HTTP reply: report them as a reply with status 0.
    return r ? { kind: 'reply', ...r, ms } : { kind: 'reply', status: 0, head: all.toString('latin1', 0, 200), body: Buffer.alloc(0), ms };
  }
}

export function send(target: Target, bytes: Buffer, timeoutMs = HANG_MS): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    const t0 = performance.now();
    const reply = new ReplyReader();
    let settled = false;
    const sock = net.connect({ host: target.host, port: target.port, noDelay: true, allowHalfOpen: true });
    const finish = (o: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(backstop);
      sock.destroy();
      resolve(o);
    };
    const timedOut = (): void => finish(reply.size > 0 ? reply.outcome(performance.now() - t0) : { kind: 'timeout', ms: performance.now() - t0 });
    // Started once the input is written: a slow write of a big input is not the server hanging.
    let timer: NodeJS.Timeout | undefined;
    // Backstop: a server that neither reads the whole input nor answers would leave the write
    // pending forever, and the timer above would never start.
    const backstop = setTimeout(timedOut, timeoutMs + BACKSTOP_EXTRA_MS);
    sock.on('connect', () => {
      sock.write(bytes, () => {
        sock.end();
        if (!settled) timer = setTimeout(timedOut, timeoutMs);
      });
    });
    sock.on('data', (d: Buffer) => {
      reply.add(d);
      // A complete first reply is enough: a server that keeps the connection open after it
      // (keep-alive with more pipelined input) is not hanging.
      if (reply.complete()) finish(reply.outcome(performance.now() - t0));
    });
    sock.on('end', () => finish(reply.outcome(performance.now() - t0)));
    sock.on('error', (e: NodeJS.ErrnoException) => finish(reply.size > 0 ? reply.outcome(performance.now() - t0) : { kind: 'error', code: e.code ?? e.message, ms: performance.now() - t0 }));
    sock.on('close', () => finish(reply.outcome(performance.now() - t0)));
  });
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * True when `bytes` is one HTTP/1.1 request whose end the server finds by its own framing:
 * a plain request line, header lines each `name: value` with CRLF and nothing else, exactly
 * one Content-Length equal to the body, and none of the headers that change how the
 * connection goes on (Transfer-Encoding, Connection other than keep-alive, Expect, Upgrade).
 */
export function exactlyFramed(bytes: Buffer): boolean {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0 || end > MAX_POOLED_HEAD) return false;
  const lines = bytes.toString('latin1', 0, end).split('\r\n');
  if (!/^(GET|POST) [!-~]+ HTTP\/1\.1$/.test(lines[0]!)) return false;
  let length: number | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const c = line.indexOf(':');
    if (c <= 0 || /[\r\n\0]/.test(line)) return false;
    const name = line.slice(0, c);
    if (!TOKEN.test(name)) return false;
    const value = line.slice(c + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    switch (name.toLowerCase()) {
      case 'content-length':
        if (length !== undefined || !/^\d{1,9}$/.test(value)) return false;
        length = Number(value);
        break;
      case 'connection':
        if (value.toLowerCase() !== 'keep-alive') return false;
        break;
      case 'transfer-encoding': case 'expect': case 'upgrade':
        return false;
      default:
    }
  }
  // A GET without Content-Length has no body (RFC 9112 §6.3); a POST must say its length.
  return (length ?? (lines[0]!.startsWith('GET ') ? 0 : -1)) === bytes.length - end - 4;
}

interface Idle {
  sock: net.Socket;
  /** Requests this connection has already answered. */
  served: number;
}

/** Kept-alive connections to one target, each carrying one request at a time. */
export class Pool {
  readonly #target: Target;
  readonly #idle: Idle[] = [];
  readonly #max: number;

  constructor(target: Target, maxIdle: number) {
    this.#target = target;
    this.#max = maxIdle;
  }

  /** Sends on a kept-alive connection when the framing allows it, else on a fresh one. */
  send(bytes: Buffer, timeoutMs = HANG_MS): Promise<Outcome> {
    if (!exactlyFramed(bytes)) return send(this.#target, bytes, timeoutMs);
    return this.#sendPooled(bytes, timeoutMs);
  }

  /** Closes the idle connections (those in use close when their request is done). */
  close(): void {
    for (const c of this.#idle.splice(0)) c.sock.destroy();
  }

  #take(): Idle | undefined {
    for (let c = this.#idle.pop(); c; c = this.#idle.pop()) {
      if (!c.sock.destroyed && c.sock.writable && c.sock.readable) return c;
      c.sock.destroy();
    }
    return undefined;
  }

  #sendPooled(bytes: Buffer, timeoutMs: number): Promise<Outcome> {
    const reused = this.#take();
    const conn: Idle = reused ?? { sock: net.connect({ host: this.#target.host, port: this.#target.port, noDelay: true }), served: 0 };
    const { sock } = conn;
    sock.removeAllListeners('error').removeAllListeners('close').removeAllListeners('data');
    return new Promise<Outcome>((resolve) => {
      const t0 = performance.now();
      const reply = new ReplyReader();
      let settled = false;
      const finish = (o: Outcome, keep: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(backstop);
        sock.removeAllListeners('data').removeAllListeners('end').removeAllListeners('close').removeAllListeners('error');
        if (keep && this.#idle.length < this.#max) {
          conn.served++;
          // An idle connection the server closes (its keep-alive time-out) is dropped from the pool.
          sock.on('error', () => sock.destroy());
          sock.on('close', () => sock.destroy());
          this.#idle.push(conn);
        } else {
          sock.destroy();
        }
        resolve(o);
      };
      const ms = (): number => performance.now() - t0;
      const ended = (o: Outcome): void => {
        // A reused connection closed without a byte of reply: the server may have closed it
        // for idling just as it was taken, so the input goes again on a fresh connection and
        // the outcome is what the server does with the input, not with a stale socket. (The
        // caller still counts it as a dropped connection, in case a worker exited on it.)
        if (reply.size === 0 && reused && !settled) {
          settled = true;
          clearTimeout(timer);
          clearTimeout(backstop);
          sock.destroy();
          resolve(send(this.#target, bytes, timeoutMs).then((r) => ({ ...r, retried: true as const })));
          return;
        }
        finish(o, false);
      };
      const timedOut = (): void => finish(reply.size > 0 ? reply.outcome(ms()) : { kind: 'timeout', ms: ms() }, false);
      let timer: NodeJS.Timeout | undefined;
      const backstop = setTimeout(timedOut, timeoutMs + BACKSTOP_EXTRA_MS);
      sock.on('data', (d: Buffer) => {
        reply.add(d);
        if (reply.untilClose) return;
        if (!reply.complete()) return;
        // Keep the connection only when it is clean: the reply said keep-alive and nothing
        // followed it (a second reply would be read as the answer to the next input).
        const keep = reply.extra === 0 && /\r\nconnection:[ \t]*keep-alive/i.test(reply.head);
        finish(reply.outcome(ms()), keep);
      });
      sock.on('end', () => ended(reply.outcome(ms())));
      sock.on('close', () => ended(reply.outcome(ms())));
      sock.on('error', (e: NodeJS.ErrnoException) => ended(reply.size > 0 ? reply.outcome(ms()) : { kind: 'error', code: e.code ?? e.message, ms: ms() }));
      const write = (): void => {
        sock.write(bytes, (err) => {
          if (err) return; // the 'error' or 'close' handler reports it
          if (!settled) timer = setTimeout(timedOut, timeoutMs);
        });
      };
      if (reused) write();
      else sock.once('connect', write);
    });
  }
}
