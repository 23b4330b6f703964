// The MTA's side of a milter connection, for the milter surface: frames (encode, split), the
// sender of one fuzzed session, the canary session sent after it, and a model of how far the
// server's frame reader gets through a session (which says whether the server may close it
// without a word).
//
// One session on the wire: connect, write every byte, then wait. A session that reaches QUIT
// (or breaks the framing) is closed by the server: we wait for that, and HANG_MS without a
// byte or the close is a hang. One that does not (no EOB, no QUIT, a frame declared longer
// than what follows) is half-closed by us once the server has been quiet for QUIET_MS (a scan
// still running then is abandoned, as when an MTA goes away), and the server must then close
// within HANG_MS.
import net from 'node:net';
import { HANG_MS, type Outcome, type Target } from './send.js';

/** Frame data above this is refused by the server's reader (src/proxy/milter/frame-reader.ts MAX_FRAME_DATA). */
export const SERVER_MAX_FRAME_DATA = 2 * 64 * 1024;
/** Command letters the server accepts. */
export const VALID_COMMANDS = 'ABCDEHKLMNOQRTU';
/** Silence from the server after our last byte before we half-close a session that did not end itself. */
const QUIET_MS = 500;
/** Reply bytes kept per session. */
const MAX_REPLY_BYTES = 1024 * 1024;
/** On top of HANG_MS, for writing the input, before the backstop calls it a hang. */
const BACKSTOP_EXTRA_MS = 20_000;

export interface Frame {
  cmd: string;
  data: Buffer;
}

export function frame(cmd: string, data: Buffer | string = Buffer.alloc(0)): Buffer {
  const d = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const head = Buffer.alloc(5);
  head.writeUInt32BE(d.length + 1, 0);
  head[4] = cmd.charCodeAt(0);
  return Buffer.concat([head, d]);
}

/** Whole frames of `buf` (any length up to `maxData`); bytes that do not form one are `rest`. */
export function splitFrames(buf: Buffer, maxData = 16 * 1024 * 1024): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let off = 0;
  while (off + 5 <= buf.length) {
    const len = buf.readUInt32BE(off);
    if (len === 0 || len - 1 > maxData || off + 4 + len > buf.length) break;
    frames.push({ cmd: String.fromCharCode(buf[off + 4]!), data: buf.subarray(off + 5, off + 4 + len) });
    off += 4 + len;
  }
  return { frames, rest: buf.subarray(off) };
}

export function encodeFrames(frames: readonly Frame[]): Buffer {
  return Buffer.concat(frames.map((f) => frame(f.cmd, f.data)));
}

/** A frame as a short line (letter and payload, NULs as \0), for notes and findings. */
export function describeFrame(f: Frame): string {
  return `${f.cmd} ${JSON.stringify(f.data.toString('latin1', 0, 120)).slice(1, -1).replace(/\\u0000/g, '\\0')}`;
}

export type ReaderEnd =
  /** A complete QUIT frame is reached with every frame before it well framed. */
  | 'quit'
  /** A frame the reader refuses (length 0, over the cap, unknown letter): the server closes with a log line. */
  | 'bad-frame'
  /** The connection opens like an HTTP request (the ping on the milter port, or an error). */
  | 'http'
  /** The bytes end, within a frame or between frames: the server waits for more. */
  | 'more';

/**
 * How far the server's frame reader gets through `bytes` on framing alone. Payload errors (a
 * macro without its NUL) are not modelled: the server closes on them with a log line too.
 */
export function readerEnd(bytes: Buffer): ReaderEnd {
  let off = 0;
  if (bytes.length >= 3 && bytes.toString('latin1', 0, 3) === 'GET') return 'http';
  if (bytes.length >= 4 && bytes.toString('latin1', 0, 4) === 'POST' && bytes.readUInt32BE(0) - 1 > SERVER_MAX_FRAME_DATA) return 'http';
  while (off + 5 <= bytes.length) {
    const len = bytes.readUInt32BE(off);
    if (len === 0 || len - 1 > SERVER_MAX_FRAME_DATA || !VALID_COMMANDS.includes(String.fromCharCode(bytes[off + 4]!))) return 'bad-frame';
    if (off + 4 + len > bytes.length) return 'more';
    if (bytes[off + 4] === 0x51) return 'quit';
    off += 4 + len;
  }
  return 'more';
}

export interface MilterResult {
  outcome: Outcome;
  /** Frames the server sent, in order. */
  frames: Frame[];
  /** Bytes after the last whole frame (an HTTP pong, or a cut frame). */
  rest: Buffer;
  /** The server closed (or reset) the session before we half-closed it. */
  serverClosedFirst: boolean;
  /** Our end's port: the server's log lines name the session's peer by it. */
  localPort: number;
  /** When the session started (Date.now()). */
  started: number;
}

/** Sends one session and reads everything the server answers until it closes. */
export function sendMilter(target: Target, bytes: Buffer, timeoutMs = HANG_MS): Promise<MilterResult> {
  return new Promise<MilterResult>((resolve) => {
    const t0 = performance.now();
    const started = Date.now();
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let halfClosed = false;
    let serverClosedFirst = false;
    let localPort = 0;
    let quiet: NodeJS.Timeout | undefined;
    let hang: NodeJS.Timeout | undefined;
    let written = false;
    // The server ends this session itself (QUIT reached, or a frame it refuses).
    const end = readerEnd(bytes);
    const serverEnds = end === 'quit' || end === 'bad-frame';
    const sock = net.connect({ host: target.host, port: target.port, noDelay: true, allowHalfOpen: true });
    const result = (kind: 'end' | 'timeout' | 'error', code = ''): MilterResult => {
      const ms = performance.now() - t0;
      const all = Buffer.concat(chunks, size);
      const { frames, rest } = splitFrames(all);
      let outcome: Outcome;
      if (kind === 'timeout') outcome = { kind: 'timeout', ms };
      else if (size === 0 && kind === 'error') outcome = { kind: 'error', code, ms };
      else if (size === 0) outcome = { kind: 'closed', ms };
      else outcome = { kind: 'reply', status: 0, head: frames.map(describeFrame).join(' | ').slice(0, 400), body: all, ms };
      return { outcome, frames, rest, serverClosedFirst, localPort, started };
    };
    const finish = (kind: 'end' | 'timeout' | 'error', code?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(quiet);
      clearTimeout(hang);
      clearTimeout(backstop);
      sock.destroy();
      resolve(result(kind, code));
    };
    const halfClose = (): void => {
      if (halfClosed || settled) return;
      halfClosed = true;
      sock.end();
      hang = setTimeout(() => finish('timeout'), timeoutMs);
    };
    const armQuiet = (): void => {
      if (!written || halfClosed || settled) return;
      clearTimeout(quiet);
      quiet = serverEnds ? setTimeout(() => finish('timeout'), timeoutMs) : setTimeout(halfClose, QUIET_MS);
    };
    const backstop = setTimeout(() => finish('timeout'), timeoutMs + BACKSTOP_EXTRA_MS);
    sock.on('connect', () => {
      localPort = sock.localPort ?? 0;
      sock.write(bytes, (err) => {
        if (err) return; // the server closed first: 'error'/'close' report it
        written = true;
        armQuiet();
      });
    });
    sock.on('data', (d: Buffer) => {
      if (size < MAX_REPLY_BYTES) {
        chunks.push(d);
        size += d.length;
      }
      armQuiet();
    });
    const closedByServer = (): void => {
      if (!halfClosed) serverClosedFirst = true;
    };
    sock.on('end', () => {
      closedByServer();
      finish('end');
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      // A reset while we still write is the server refusing the stream (it stops reading).
      if (localPort === 0) return finish('error', e.code ?? e.message);
      closedByServer();
      finish('end');
    });
    sock.on('close', () => {
      closedByServer();
      finish('end');
    });
  });
}

// ---------------------------------------------------------------------------------------
// The canary: a well-formed session whose verdicts are known

const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

function macros(stage: string, pairs: Array<[string, string]>): Buffer {
  return frame('D', stage + pairs.map(([k, v]) => `${k}\0${v}\0`).join(''));
}

function transaction(qid: string, subject: string, body: string): Buffer[] {
  const headers: Array<[string, string]> = [
    ['From', 'Alice <alice@example.org>'],
    ['To', '<bob@example.com>'],
    ['Subject', subject],
    ['Date', 'Sat, 22 Nov 2026 02:00:00 +0000'],
    ['Message-ID', `<${qid}@example.org>`],
    ['MIME-Version', '1.0'],
    ['Content-Type', 'text/plain; charset=utf-8'],
  ];
  return [
    macros('M', [['i', qid], ['{auth_authen}', 'alice']]),
    frame('M', '<alice@example.org>\0'),
    frame('R', '<bob@example.com>\0'),
    frame('T'),
    ...headers.map(([k, v]) => frame('L', `${k}\0${v}\0`)),
    frame('N'),
    frame('B', body),
    frame('E'),
  ];
}

/** OPTNEG as Postfix sends it (v6, every action, every protocol bit). */
export function postfixOptneg(): Buffer {
  const d = Buffer.alloc(12);
  d.writeUInt32BE(6, 0);
  d.writeUInt32BE(0x1ff, 4);
  d.writeUInt32BE(0x1fffff, 8);
  return frame('O', d);
}

/** A ham then GTUBE on one connection, then QUIT: two verdicts and the server's close. */
export const CANARY_SESSION: Buffer = (() => {
  const port = Buffer.alloc(2);
  port.writeUInt16BE(41234, 0);
  return Buffer.concat([
    postfixOptneg(),
    macros('C', [['j', 'mx.test'], ['{daemon_name}', 'smtpd'], ['v', 'Postfix 3.7.11']]),
    frame('C', Buffer.concat([Buffer.from('mail.example.org\x004'), port, Buffer.from('192.0.2.10\0')])),
    frame('H', 'mail.example.org\0'),
    ...transaction('CANARY1', 'Lunch', 'Shall we meet at noon?\r\n'),
    ...transaction('CANARY2', 'Test spam', `Body\r\n${GTUBE}\r\n`),
    frame('Q'),
  ]);
})();

/** The final frame of each verdict in a session's replies (`a d t y r`; `q` is followed by `a`). */
export function finalFrames(frames: readonly Frame[]): Frame[] {
  return frames.filter((f) => 'adtyr'.includes(f.cmd));
}

/** What a canary must show: its verdicts' final frames, and the server's close after QUIT. */
export function canarySummary(r: MilterResult): string {
  if (r.outcome.kind === 'timeout') return 'no reply in time';
  const finals = finalFrames(r.frames).map(describeFrame).join(' | ');
  return `${r.frames[0]?.cmd === 'O' ? 'optneg' : 'no optneg'}; ${finals}; ${r.serverClosedFirst ? 'closed after QUIT' : 'not closed'}`;
}

/** The verdict a fresh server gives GTUBE: the canary's second final frame. */
export const GTUBE_REJECT = 'y 554 5.7.1 Gtube pattern\\0';
