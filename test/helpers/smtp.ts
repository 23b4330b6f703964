// SMTP on both sides of a real MTA in tests: a client that sends one message per connection and
// reports each reply, and an LMTP sink the MTA delivers to, keeping every delivered message.
// Just enough of RFC 5321 / RFC 2033 for that: no TLS, no AUTH, no pipelining.

import net from 'node:net';

/** Generous: the MTA waits for a scan behind the milter, on a loaded 2-core machine. */
const REPLY_TIMEOUT_MS = 120_000;
/** A sink session whose client sends more than this without finishing a message is cut. */
const MAX_SINK_MESSAGE = 10 * 1024 * 1024;

export interface SmtpReply {
  code: number;
  /** Every line of the reply, without the code and separator. */
  lines: string[];
  text: string;
}

export interface SmtpResult {
  /** The reply to the end of DATA, or to the command that stopped the transaction. */
  final: SmtpReply;
  /** Every reply of the session in order (banner first). */
  replies: SmtpReply[];
}

/** Reads replies (possibly multi-line) from an SMTP server. */
class ReplyReader {
  #buf = '';
  #waiting: Array<() => void> = [];
  #closed = false;

  constructor(socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.#buf += d;
      this.#wake();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#wake();
    });
    socket.on('error', () => undefined);
  }

  #wake(): void {
    const w = this.#waiting;
    this.#waiting = [];
    for (const f of w) f();
  }

  async next(): Promise<SmtpReply> {
    const deadline = Date.now() + REPLY_TIMEOUT_MS;
    for (;;) {
      const lines: string[] = [];
      let at = 0;
      for (;;) {
        const nl = this.#buf.indexOf('\r\n', at);
        if (nl < 0) break;
        const line = this.#buf.slice(at, nl);
        at = nl + 2;
        lines.push(line);
        if (line.length < 4 || line[3] === ' ') {
          this.#buf = this.#buf.slice(at);
          return { code: Number(line.slice(0, 3)), lines: lines.map((l) => l.slice(4)), text: lines.map((l) => l.slice(4)).join('\n') };
        }
      }
      if (this.#closed) throw new Error(`connection closed before a reply (have ${JSON.stringify(this.#buf.slice(0, 200))})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no SMTP reply in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiting.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

/** Lines starting with a dot get another (RFC 5321 §4.5.2); the message ends with CRLF first. */
export function dotStuff(message: Buffer): Buffer {
  let text = message.toString('latin1');
  if (!text.endsWith('\r\n')) text += '\r\n';
  return Buffer.from(text.replace(/^\./gm, '..'), 'latin1');
}

/**
 * One message over one SMTP connection: EHLO, MAIL, RCPT (each), DATA, QUIT. Stops at the first
 * reply that refuses (4xx/5xx) and returns it as `final`.
 */
export async function sendMail(port: number, env: { from: string; to: string[]; helo?: string }, message: Buffer): Promise<SmtpResult> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const reader = new ReplyReader(socket);
  const replies: SmtpReply[] = [];
  const read = async (): Promise<SmtpReply> => {
    const r = await reader.next();
    replies.push(r);
    return r;
  };
  const command = async (line: string): Promise<SmtpReply> => {
    socket.write(`${line}\r\n`, 'latin1');
    return read();
  };
  try {
    const banner = await read();
    if (banner.code !== 220) return { final: banner, replies };
    const steps = [`EHLO ${env.helo ?? 'client.example.org'}`, `MAIL FROM:<${env.from}>`, ...env.to.map((t) => `RCPT TO:<${t}>`)];
    for (const s of steps) {
      const r = await command(s);
      if (r.code >= 400) return { final: r, replies };
    }
    const data = await command('DATA');
    if (data.code !== 354) return { final: data, replies };
    socket.write(Buffer.concat([dotStuff(message), Buffer.from('.\r\n')]));
    const final = await read();
    await command('QUIT').catch(() => undefined);
    return { final, replies };
  } finally {
    socket.destroy();
  }
}

export interface Delivered {
  from: string;
  to: string[];
  /** The message as delivered (dot-unstuffed, CRLF line ends). */
  message: Buffer;
}

export interface LmtpSink {
  port: number;
  delivered: Delivered[];
  /** Resolves with the first delivered message `pred` accepts, waiting for it if need be. */
  waitFor(pred: (d: Delivered) => boolean, what: string, timeoutMs?: number): Promise<Delivered>;
  close(): Promise<void>;
}

/** An LMTP server accepting every recipient and keeping every message (RFC 2033). */
export async function startLmtpSink(): Promise<LmtpSink> {
  const delivered: Delivered[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let from = '';
    let to: string[] = [];
    let inData = false;
    const reply = (s: string): void => void socket.write(`${s}\r\n`);
    reply('220 sink.test LMTP ready');
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length > MAX_SINK_MESSAGE) {
        socket.destroy();
        return;
      }
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          const atStart = buf.subarray(0, 3).toString() === '.\r\n';
          if (end < 0 && !atStart) return;
          const raw = atStart ? Buffer.alloc(0) : buf.subarray(0, end + 2);
          buf = buf.subarray(atStart ? 3 : end + 5);
          const message = Buffer.from(raw.toString('latin1').replace(/^\.\./gm, '.'), 'latin1');
          delivered.push({ from, to, message });
          // LMTP: one reply per accepted recipient.
          for (let i = 0; i < to.length; i++) reply('250 2.0.0 delivered');
          inData = false;
          from = '';
          to = [];
          for (const w of waiters) w();
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.subarray(0, nl).toString('latin1');
        buf = buf.subarray(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'LHLO') reply('250-sink.test\r\n250 8BITMIME');
        else if (verb === 'MAIL') {
          from = /<([^>]*)>/.exec(line)?.[1] ?? '';
          reply('250 2.1.0 ok');
        } else if (verb === 'RCPT') {
          to.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
          reply('250 2.1.5 ok');
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 go ahead');
        } else if (verb === 'RSET') {
          from = '';
          to = [];
          reply('250 2.0.0 ok');
        } else if (verb === 'QUIT') {
          reply('221 2.0.0 bye');
          socket.end();
          return;
        } else if (verb === 'NOOP') reply('250 2.0.0 ok');
        else reply('502 5.5.2 not here');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const port = (server.address() as net.AddressInfo).port;
  const waitFor = (pred: (d: Delivered) => boolean, what: string, timeoutMs = 120_000): Promise<Delivered> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const hit = delivered.find(pred);
        if (!hit) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(hit);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no delivery of ${what} in ${timeoutMs} ms (${delivered.length} delivered)`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return {
    port,
    delivered,
    waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The header fields of a message, unfolded, in order. */
export function headerFields(message: Buffer): Array<[string, string]> {
  const text = message.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const out: Array<[string, string]> = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && out.length > 0) out[out.length - 1]![1] += `\r\n${line}`;
    else {
      const c = line.indexOf(':');
      if (c > 0) out.push([line.slice(0, c), line.slice(c + 1).trim()]);
    }
  }
  return out;
}
