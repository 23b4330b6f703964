// One fuzz input on the wire: a fresh connection, the raw bytes, a half-close (so a server
// waiting for more body sees the end and must answer now: silence after that is a hang, not
// a request still arriving), then everything the server sends until it closes.
import net from 'node:net';

/** No reply (nor close) within this long after the input was written is a hang. */
export const HANG_MS = 10_000;
/** Time given to writing the input, on top of HANG_MS, before the backstop calls it a hang. */
const BACKSTOP_EXTRA_MS = 20_000;
/** Reply bytes kept; a reply longer than this is cut (the status line is all we need). */
const MAX_REPLY_BYTES = 4 * 1024 * 1024;

export type Outcome =
  /** A reply was read (the first one, when the input made the server answer several). */
  | { kind: 'reply'; status: number; head: string; body: Buffer; ms: number }
  /** The server closed the connection without a byte. */
  | { kind: 'closed'; ms: number }
  /** The connection failed (refused, reset…). */
  | { kind: 'error'; code: string; ms: number }
  | { kind: 'timeout'; ms: number };

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

export function send(target: Target, bytes: Buffer, timeoutMs = HANG_MS): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    const t0 = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
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
    const fromChunks = (): Outcome => {
      const ms = performance.now() - t0;
      if (size === 0) return { kind: 'closed', ms };
      const r = parseFirstReply(Buffer.concat(chunks, size));
      // Bytes that are not an HTTP reply: report them as a reply with status 0.
      return r ? { kind: 'reply', ...r, ms } : { kind: 'reply', status: 0, head: Buffer.concat(chunks, size).toString('latin1', 0, 200), body: Buffer.alloc(0), ms };
    };
    // Started once the input is written: a slow write of a big input is not the server hanging.
    let timer: NodeJS.Timeout | undefined;
    // Backstop: a server that neither reads the whole input nor answers would leave the write
    // pending forever, and the timer above would never start.
    const backstop = setTimeout(() => finish(size > 0 ? fromChunks() : { kind: 'timeout', ms: performance.now() - t0 }), timeoutMs + BACKSTOP_EXTRA_MS);
    sock.on('connect', () => {
      sock.write(bytes, () => {
        sock.end();
        if (!settled) timer = setTimeout(() => finish(size > 0 ? fromChunks() : { kind: 'timeout', ms: performance.now() - t0 }), timeoutMs);
      });
    });
    sock.on('data', (d: Buffer) => {
      if (size < MAX_REPLY_BYTES) {
        chunks.push(d);
        size += d.length;
      }
      // A complete first reply is enough: a server that keeps the connection open after it
      // (keep-alive with more pipelined input) is not hanging.
      const r = parseFirstReply(Buffer.concat(chunks, size));
      if (r) {
        const len = /\r\ncontent-length:[ \t]*(\d+)/i.exec(r.head);
        if (len && r.body.length >= Number(len[1])) finish({ kind: 'reply', ...r, ms: performance.now() - t0 });
      }
    });
    sock.on('end', () => finish(fromChunks()));
    sock.on('error', (e: NodeJS.ErrnoException) => finish(size > 0 ? fromChunks() : { kind: 'error', code: e.code ?? e.message, ms: performance.now() - t0 }));
    sock.on('close', () => finish(fromChunks()));
  });
}
