// Test harness for the milter front end: a real listening server running
// handleMilterConnection, a fake upstream ScanRelay that replays recorded scanner replies, a
// small MTA-side milter client over a real socket, and readers for the recorded fixtures.

import net from 'node:net';
import { readFileSync } from 'node:fs';
import { handleMilterConnection, milterOptions, type MilterOptions } from '../../src/proxy/milter/index.js';
import type { RelayRequest, RelayResponse, ScanRelay } from '../../src/proxy/relay-types.js';
import type { Logger } from '../../src/plugin-api/index.js';
import { MailsiftError } from '../../src/http/errors.js';

export const MILTER_FIXTURES = '/work/shared/fixtures/milter';

export interface Frame {
  cmd: string;
  data: Buffer;
}

/** Split a byte stream into milter frames; bytes that do not form a whole frame are `rest`. */
export function splitFrames(buf: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let off = 0;
  while (off + 5 <= buf.length) {
    const len = buf.readUInt32BE(off);
    if (len === 0 || len > 1 << 20 || off + 4 + len > buf.length) break;
    frames.push({ cmd: String.fromCharCode(buf[off + 4]!), data: buf.subarray(off + 5, off + 4 + len) });
    off += 4 + len;
  }
  return { frames, rest: buf.subarray(off) };
}

export function frame(cmd: string, data: Buffer | string = Buffer.alloc(0)): Buffer {
  const d = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const head = Buffer.alloc(5);
  head.writeUInt32BE(d.length + 1, 0);
  head[4] = cmd.charCodeAt(0);
  return Buffer.concat([head, d]);
}

export function optneg(version = 6, actions = 0x1ff, protocol = 0x1fffff): Buffer {
  const d = Buffer.alloc(12);
  d.writeUInt32BE(version, 0);
  d.writeUInt32BE(actions, 4);
  d.writeUInt32BE(protocol, 8);
  return frame('O', d);
}

/** A frame as a line a human can compare: letter, then the payload with NULs shown as \0. */
export function describe(f: Frame): string {
  const d = f.data;
  const text = (b: Buffer): string => JSON.stringify(b.toString('latin1')).slice(1, -1).replace(/\\u0000/g, '\\0');
  switch (f.cmd) {
    case 'O':
      return d.length === 12 ? `O v${d.readUInt32BE(0)} actions=0x${d.readUInt32BE(4).toString(16)} protocol=0x${d.readUInt32BE(8).toString(16)}` : `O ${text(d)}`;
    case 'i':
    case 'm':
      return d.length >= 4 ? `${f.cmd} ${d.readUInt32BE(0)} ${text(d.subarray(4))}` : `${f.cmd} ${text(d)}`;
    default:
      return `${f.cmd} ${text(d)}`;
  }
}

export function frameOf(cmd: string, ...parts: Array<string | number>): Frame {
  const bufs = parts.map((p) => {
    if (typeof p === 'number') {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(p, 0);
      return b;
    }
    return Buffer.from(p, 'utf8');
  });
  return { cmd, data: Buffer.concat(bufs) };
}

// ---------------------------------------------------------------------------------------
// Recorded HTTP legs

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

function splitHead(bin: Buffer): { lines: string[]; body: Buffer } {
  const end = bin.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('no end of HTTP head');
  return { lines: bin.subarray(0, end).toString('utf8').split('\r\n'), body: bin.subarray(end + 4) };
}

function headersOf(lines: string[]): Array<[string, string]> {
  return lines.map((l) => {
    const c = l.indexOf(':');
    return [l.slice(0, c), l.slice(c + 1).trim()] as [string, string];
  });
}

export function readRecordedRequest(path: string): RecordedRequest {
  const { lines, body } = splitHead(readFileSync(path));
  const [method, url] = lines[0]!.split(' ') as [string, string];
  return { method, path: url, headers: headersOf(lines.slice(1)), body };
}

/** A recorded scanner reply as the relay would hand it over (§ relay-types RelayResponse). */
export function readRecordedResponse(path: string): RelayResponse {
  const { lines, body } = splitHead(readFileSync(path));
  const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0]!);
  if (!m) throw new Error(`bad status line in ${path}`);
  const all = headersOf(lines.slice(1));
  const len = all.find(([k]) => k.toLowerCase() === 'content-length');
  const dropped = new Set(['content-length', 'connection', 'compression', 'key']);
  return {
    status: Number(m[1]),
    reason: m[2] ?? '',
    headers: all.filter(([k]) => !dropped.has(k.toLowerCase())),
    body: len ? body.subarray(0, Number(len[1])) : body,
    upstream: '127.0.0.1:25336',
  };
}

// ---------------------------------------------------------------------------------------
// Fake upstream

/** Answers each scan with the next recorded reply; records every request it was given. */
export class ReplayRelay implements ScanRelay {
  readonly requests: RelayRequest[] = [];
  #replies: Array<RelayResponse | Error | 'hang'>;

  constructor(replies: Array<RelayResponse | Error | 'hang'>) {
    this.#replies = [...replies];
  }

  relay(req: RelayRequest, signal?: AbortSignal): Promise<RelayResponse> {
    this.requests.push(req);
    const next = this.#replies.shift();
    if (next === undefined) return Promise.reject(new MailsiftError('ERR_RELAY_NO_BACKEND', 'Backend not found'));
    if (next instanceof Error) return Promise.reject(next);
    if (next === 'hang') {
      return new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(new MailsiftError('ERR_RELAY_FAILED', 'aborted')), { once: true });
      });
    }
    return Promise.resolve(next);
  }
}

export function jsonReply(obj: unknown, extraHeaders: Array<[string, string]> = [], body?: Buffer): RelayResponse {
  const json = Buffer.from(JSON.stringify(obj));
  const headers: Array<[string, string]> = [['Content-Type', 'application/json'], ...extraHeaders];
  if (body) headers.push(['Message-Offset', String(json.length)]);
  return { status: 200, reason: 'OK', headers, body: body ? Buffer.concat([json, body]) : json, upstream: 'fake' };
}

// ---------------------------------------------------------------------------------------
// Server and client

export interface LogLine {
  level: string;
  msg: string;
  extra: Record<string, unknown>;
}

export function collectingLogger(lines: LogLine[]): Logger {
  const at = (level: string) => (msg: string, extra: Record<string, unknown> = {}) => void lines.push({ level, msg, extra });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface TestMilterServer {
  port: number;
  logs: LogLine[];
  close(): Promise<void>;
}

export async function startMilterServer(relay: ScanRelay, opts: Partial<MilterOptions> = {}): Promise<TestMilterServer> {
  const logs: LogLine[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    handleMilterConnection(s, { relay, config: milterOptions(opts), log: collectingLogger(logs) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    logs,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The MTA side of a milter connection, reading the server's bytes as they come. */
export class TestMilterClient {
  readonly socket: net.Socket;
  #buf = Buffer.alloc(0);
  #eof = false;
  #waiters: Array<() => void> = [];
  /** Every byte the server sent, in order. */
  received = Buffer.alloc(0);

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.received = Buffer.concat([this.received, d]);
      this.#wake();
    });
    socket.on('end', () => {
      this.#eof = true;
      this.#wake();
    });
    socket.on('close', () => {
      this.#eof = true;
      this.#wake();
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<TestMilterClient> {
    return TestMilterClient.connectTo({ host: '127.0.0.1', port });
  }

  /** A TCP address or a unix socket (`{ path }`). */
  static connectTo(where: net.NetConnectOpts): Promise<TestMilterClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect(where, () => resolve(new TestMilterClient(s)));
      s.once('error', reject);
    });
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  #wait(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.#waiters.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  get ended(): boolean {
    return this.#eof;
  }

  send(b: Buffer): void {
    this.socket.write(b);
  }

  /** The next frame, or 'eof' when the server closed first. */
  async readFrame(timeoutMs = 20_000): Promise<Frame | 'eof'> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { frames } = splitFrames(this.#buf);
      if (frames.length > 0) {
        const f = frames[0]!;
        this.#buf = this.#buf.subarray(5 + f.data.length);
        return f;
      }
      if (this.#eof) return 'eof';
      const left = deadline - Date.now();
      if (left <= 0 || !(await this.#wait(left))) throw new Error(`no frame within ${timeoutMs} ms (have ${this.#buf.length} bytes)`);
    }
  }

  /** Frames up to and including the final reply of a verdict (`q` is followed by `a`). */
  async readVerdict(timeoutMs = 20_000): Promise<Frame[]> {
    const out: Frame[] = [];
    for (;;) {
      const f = await this.readFrame(timeoutMs);
      if (f === 'eof') throw new Error(`connection closed after ${out.length} verdict frames: ${out.map(describe).join(' | ')}`);
      out.push(f);
      if ('adtyr'.includes(f.cmd)) return out;
    }
  }

  /** Wait until the server closes the connection; true if it did within the time. */
  async waitEnd(timeoutMs = 20_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#eof) {
      const left = deadline - Date.now();
      if (left <= 0 || !(await this.#wait(left))) return this.#eof;
    }
    return true;
  }

  close(): void {
    this.socket.destroy();
  }
}

// ---------------------------------------------------------------------------------------
// An MTA's side of a session, as Postfix sends it

export function macros(stage: string, pairs: Array<[string, string]>): Buffer {
  return frame('D', stage + pairs.map(([k, v]) => `${k}\0${v}\0`).join(''));
}

/** A Postfix-like transaction: envelope, headers, body in one BODY chunk, EOB. */
export function transaction(subject: string, body: string, extraHeaders: Array<[string, string]> = []): Buffer[] {
  const headers: Array<[string, string]> = [
    ['From', 'Alice <alice@example.org>'],
    ['To', '<bob@example.com>'],
    ['Subject', subject],
    ['Date', 'Sat, 22 Nov 2026 02:00:00 +0000'],
    ['Message-ID', `<${subject.replace(/\W/g, '')}@example.org>`],
    ['MIME-Version', '1.0'],
    ['Content-Type', 'text/plain; charset=utf-8'],
    ...extraHeaders,
  ];
  return [
    macros('M', [['i', 'QID1'], ['{auth_authen}', 'alice']]),
    frame('M', '<alice@example.org>\0'),
    frame('R', '<bob@example.com>\0'),
    frame('T'),
    ...headers.map(([k, v]) => frame('L', `${k}\0${v}\0`)),
    frame('N'),
    frame('B', body),
    frame('E'),
  ];
}

/**
 * One connection as Postfix makes it: OPTNEG, CONNECT from 192.0.2.10:41234 with HELO, then each
 * message's frames and its verdict, then QUIT. Returns each message's verdict frames; throws
 * when the server does not close after QUIT.
 */
export async function mtaSession(client: TestMilterClient, messages: Buffer[][]): Promise<Frame[][]> {
  client.send(optneg());
  const neg = await client.readFrame();
  if (neg === 'eof' || neg.cmd !== 'O') throw new Error('no OPTNEG reply');
  client.send(macros('C', [['j', 'mx.test'], ['{daemon_name}', 'smtpd'], ['v', 'Postfix 3.7.11']]));
  const port = Buffer.alloc(2);
  port.writeUInt16BE(41234, 0);
  client.send(frame('C', Buffer.concat([Buffer.from('mail.example.org\x004'), port, Buffer.from('192.0.2.10\0')])));
  client.send(frame('H', 'mail.example.org\0'));
  const out: Frame[][] = [];
  for (const m of messages) {
    for (const f of m) client.send(f);
    out.push(await client.readVerdict(60_000));
  }
  client.send(frame('Q'));
  if (!(await client.waitEnd())) throw new Error('the server did not close after QUIT');
  return out;
}
