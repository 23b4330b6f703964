// The benchmark's milter client: the MTA side of a milter connection, as lean as the HTTP
// client in throughput.ts. Each message's frames are built once, before the runs; a loop owns
// one connection (negotiated once, like an MTA's long-lived milter link) and sends a message's
// frames in one write, then reads frames only as far as the verdict's final reply.
//
// What it sends is what the direct HTTP request carries and no more: no CONNECT address, HELO
// or envelope (rspamc without flags sends none either), so the scanner sees the same input on
// both paths and the difference measured is the relay's (plus the milter flag's reply block).
import net from 'node:net';
import { frame } from './fuzz/milter-wire.js';

/** libmilter's MILTER_CHUNK_SIZE: the largest BODY frame an MTA sends. */
const MAX_BODY_CHUNK = 65_535;
/** Header fields sent per message at most; a message with more sends the rest as body (never in the corpus). */
const MAX_HEADER_FIELDS = 2_000;
/** Milter v6, every action, every "no reply" bit (Postfix's offer): the filter answers only OPTNEG and EOB. */
const OPTNEG_VERSION = 6;
const OPTNEG_ACTIONS = 0x1ff;
const OPTNEG_PROTOCOL = 0x1fffff;
/** The proxy's spam_header (workers.proxy default): set on messages whose action is `add header`. */
const SPAM_HEADER = 'x-spam';
/** A reply frame longer than this is not a verdict frame (REPLBODY chunks are at most 64 KiB). */
const MAX_REPLY_FRAME = 1 << 20;

const NUL = Buffer.from([0]);

/** The opening of a session: OPTNEG, then CONNECT with an unknown address family (no IP to check). */
function sessionOpening(): { optneg: Buffer; connect: Buffer } {
  const o = Buffer.alloc(12);
  o.writeUInt32BE(OPTNEG_VERSION, 0);
  o.writeUInt32BE(OPTNEG_ACTIONS, 4);
  o.writeUInt32BE(OPTNEG_PROTOCOL, 8);
  return { optneg: frame('O', o), connect: frame('C', Buffer.from('unknown\0U', 'latin1')) };
}

/** Where the header block ends: the index of the empty line's first byte and the body's start. */
function headerEnd(msg: Buffer): { end: number; body: number } {
  const crlf = msg.indexOf('\r\n\r\n');
  const lf = msg.indexOf('\n\n');
  if (lf >= 0 && (crlf < 0 || lf < crlf)) return { end: lf + 1, body: lf + 2 };
  if (crlf >= 0) return { end: crlf + 2, body: crlf + 4 };
  return { end: msg.length, body: msg.length };
}

/**
 * One message as an MTA sends it after the envelope: a MAIL-stage macro with a queue id, DATA,
 * one HEADER per field (value without the space after the colon, folding kept), EOH, the body in
 * chunks of at most 64 KiB, BODYEOB. Returned as one buffer, written in one go.
 */
export function milterMessage(msg: Buffer, queueId: string): Buffer {
  const parts: Buffer[] = [frame('D', Buffer.from(`M{i}\0${queueId}\0`, 'latin1')), frame('T')];
  const { end, body } = headerEnd(msg);
  let pos = 0;
  let fields = 0;
  let bodyStart = body;
  while (pos < end) {
    // A field runs to the next line that does not start with white space (a continuation).
    let stop = pos;
    for (;;) {
      const nl = msg.indexOf(0x0a, stop);
      if (nl < 0 || nl + 1 >= end) {
        stop = end;
        break;
      }
      stop = nl + 1;
      if (msg[stop] !== 0x20 && msg[stop] !== 0x09) break;
    }
    const colon = msg.indexOf(0x3a, pos);
    if (colon < 0 || colon >= stop || fields >= MAX_HEADER_FIELDS) {
      // Not a header field (an mbox "From " line, garbage): the rest goes as body, as an MTA would.
      bodyStart = pos;
      break;
    }
    let v = colon + 1;
    if (msg[v] === 0x20) v++;
    // The line ending of the field's last line is not part of the value.
    let vEnd = stop;
    if (msg[vEnd - 1] === 0x0a) vEnd--;
    if (msg[vEnd - 1] === 0x0d) vEnd--;
    parts.push(frame('L', Buffer.concat([msg.subarray(pos, colon), NUL, msg.subarray(v, Math.max(v, vEnd)), NUL])));
    fields++;
    pos = stop;
  }
  parts.push(frame('N'));
  for (let off = bodyStart; off < msg.length; off += MAX_BODY_CHUNK) parts.push(frame('B', msg.subarray(off, Math.min(msg.length, off + MAX_BODY_CHUNK))));
  parts.push(frame('E'));
  return Buffer.concat(parts);
}

/** The verdict as an action-like label, for the table's action counts (compare with the direct scan's). */
function verdictLabel(frames: Array<[string, Buffer]>): string {
  const last = frames[frames.length - 1]!;
  switch (last[0]) {
    case 'y':
      return last[1][0] === 0x35 ? 'reject' : 'soft reject';
    case 'd':
      return 'discard';
    case 't':
      return 'tempfail';
    case 'r':
      return 'reject';
  }
  if (frames.some(([c]) => c === 'q')) return 'quarantine';
  let label = 'no action';
  for (const [c, d] of frames) {
    // ADDHEADER is `name\0value\0`; CHGHEADER and INSHEADER put a u32 index first.
    const at = c === 'h' ? 0 : c === 'm' || c === 'i' ? 4 : -1;
    if (at < 0) continue;
    const nameEnd = d.indexOf(0, at);
    const name = d.toString('latin1', at, nameEnd).toLowerCase();
    const valued = nameEnd + 1 < d.length - 1;
    if (name === 'subject' && valued) return 'rewrite subject';
    if (name === SPAM_HEADER && valued) label = 'add header';
  }
  return label;
}

interface Waiter { resolve: (label: string) => void; reject: (e: Error) => void }

/** One milter connection; `request` sends a prebuilt message and resolves with its verdict's label. */
export class LeanMilterConnection {
  readonly #host: string;
  readonly #port: number;
  readonly #timeoutMs: number;
  #sock: net.Socket | undefined;
  #ready: Promise<void> | undefined;
  #negotiated = false;
  #buf: Buffer = Buffer.alloc(0);
  #frames: Array<[string, Buffer]> = [];
  #waiter: Waiter | undefined;
  #onOptneg: Waiter | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(server: string, timeoutMs: number) {
    const i = server.lastIndexOf(':');
    this.#host = server.slice(0, i);
    this.#port = Number(server.slice(i + 1));
    this.#timeoutMs = timeoutMs;
  }

  async request(message: Buffer): Promise<string> {
    if (!this.#sock) this.#ready = this.#connect();
    await this.#ready;
    const sock = this.#sock!;
    return new Promise<string>((resolve, reject) => {
      this.#waiter = { resolve, reject };
      this.#frames = [];
      this.#timer = setTimeout(() => this.#fail(new Error(`no verdict within ${this.#timeoutMs} ms`)), this.#timeoutMs);
      sock.write(message);
    });
  }

  close(): void {
    const s = this.#sock;
    this.#sock = undefined;
    if (s && !s.destroyed) s.end(frame('Q'));
  }

  #connect(): Promise<void> {
    const sock = net.connect({ host: this.#host, port: this.#port, noDelay: true });
    this.#sock = sock;
    this.#negotiated = false;
    this.#buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => { if (this.#sock === sock) this.#onData(d); });
    sock.on('error', (e) => { if (this.#sock === sock) this.#fail(e); });
    sock.on('close', () => { if (this.#sock === sock) this.#fail(new Error('milter connection closed before the verdict')); });
    const { optneg, connect } = sessionOpening();
    return new Promise<void>((resolve, reject) => {
      this.#onOptneg = { resolve: () => { sock.write(connect); resolve(); }, reject };
      this.#timer = setTimeout(() => this.#fail(new Error(`no OPTNEG reply within ${this.#timeoutMs} ms`)), this.#timeoutMs);
      sock.write(optneg);
    });
  }

  #fail(e: Error): void {
    clearTimeout(this.#timer);
    this.#sock?.destroy();
    this.#sock = undefined;
    const w = this.#waiter ?? this.#onOptneg;
    this.#waiter = undefined;
    this.#onOptneg = undefined;
    w?.reject(e);
  }

  #onData(d: Buffer): void {
    this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
    let off = 0;
    while (off + 5 <= this.#buf.length) {
      const len = this.#buf.readUInt32BE(off);
      if (len === 0 || len > MAX_REPLY_FRAME) return this.#fail(new Error(`bad milter reply frame length ${len}`));
      if (off + 4 + len > this.#buf.length) break;
      const cmd = String.fromCharCode(this.#buf[off + 4]!);
      const data = this.#buf.subarray(off + 5, off + 4 + len);
      off += 4 + len;
      if (!this.#negotiated) {
        if (cmd !== 'O') return this.#fail(new Error(`expected the OPTNEG reply, got '${cmd}'`));
        this.#negotiated = true;
        clearTimeout(this.#timer);
        const w = this.#onOptneg;
        this.#onOptneg = undefined;
        w?.resolve('');
        continue;
      }
      this.#frames.push([cmd, data]);
      if ('adtyr'.includes(cmd)) {
        clearTimeout(this.#timer);
        const w = this.#waiter;
        this.#waiter = undefined;
        const label = verdictLabel(this.#frames);
        this.#frames = [];
        if (cmd === 't') w?.reject(new Error('TEMPFAIL (the proxy could not scan the message)'));
        else w?.resolve(label);
      }
    }
    // Frame data still referenced by #frames are views of the old buffer; the rest is copied off it.
    this.#buf = off === this.#buf.length ? Buffer.alloc(0) : Buffer.from(this.#buf.subarray(off));
  }
}
