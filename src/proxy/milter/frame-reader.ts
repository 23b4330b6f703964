// Incremental milter frame decoder. Bytes arrive in arbitrary
// pieces; a frame is handed out only when all of it is there. A length or command letter that
// cannot be right is reported as soon as the 5-byte frame head is in, so a 100 MB "frame" is
// refused before one byte of its data is buffered.

import { isValidCommand } from './protocol.js';

/**
 * Largest frame data (the length field minus the command byte): 2 × 64 KiB, Rspamd's limit.
 * MTAs send body chunks of at most 65 535 bytes (we never ask for SMFIP_MDS_256K/1M) and a
 * Postfix header is at most 100 KiB; anything larger is an attempt to make us buffer
 * without bound, or not milter at all (`GET ` read as a length is 1.2 GB).
 */
export const MAX_FRAME_DATA = 2 * 64 * 1024;

/**
 * Longest request line we wait for when a connection opens with `GET` (the monitoring ping
 * Rspamd's milter answers): a health check's `GET /ping HTTP/1.1` is 18 bytes; more is not a ping.
 */
export const MAX_PING_LINE = 1024;

export interface MilterFrame {
  cmd: number;
  data: Buffer;
}

export type ReadResult =
  | { kind: 'frame'; frame: MilterFrame }
  | { kind: 'need-more' }
  /** The connection opened with an HTTP request line instead of a frame. */
  | { kind: 'http'; method: string; url: string }
  | { kind: 'error'; message: string };

/** Chunks smaller than this are copied together (see ByteQueue.push). */
const COALESCE_BELOW = 4096;
const COALESCE_BLOCK = 16 * 1024;

/** A queue of received chunks, read from the front without copying until a frame is taken. */
class ByteQueue {
  #chunks: Buffer[] = [];
  #head = 0; // read offset into #chunks[0]
  #length = 0;
  /** Block that small chunks are copied into; the last chunk is a view of it when #lastInBlock. */
  #block: Buffer | undefined;
  #blockStart = 0;
  #blockUsed = 0;
  #lastInBlock = false;

  get length(): number {
    return this.#length;
  }

  /**
   * A peer that trickles a frame one byte per packet would otherwise cost a Buffer object
   * (~100 bytes) per byte held: small chunks are copied into shared blocks instead.
   */
  push(b: Buffer): void {
    if (b.length === 0) return;
    this.#length += b.length;
    if (b.length >= COALESCE_BELOW) {
      this.#chunks.push(b);
      this.#lastInBlock = false;
      return;
    }
    const block = this.#block;
    if (block && this.#blockUsed + b.length <= block.length) {
      if (!this.#lastInBlock) {
        this.#blockStart = this.#blockUsed;
        this.#chunks.push(block.subarray(0, 0));
        this.#lastInBlock = true;
      }
      // Bytes already handed out as views of the block lie before #blockUsed: never overwritten.
      this.#blockUsed += b.copy(block, this.#blockUsed);
      this.#chunks[this.#chunks.length - 1] = block.subarray(this.#blockStart, this.#blockUsed);
      return;
    }
    const fresh = Buffer.allocUnsafe(COALESCE_BLOCK);
    this.#block = fresh;
    this.#blockStart = 0;
    this.#blockUsed = b.copy(fresh, 0);
    this.#chunks.push(fresh.subarray(0, this.#blockUsed));
    this.#lastInBlock = true;
  }

  /** Byte at offset i from the front (i < length). */
  at(i: number): number {
    let off = this.#head + i;
    for (const c of this.#chunks) {
      if (off < c.length) return c[off]!;
      off -= c.length;
    }
    throw new RangeError('ByteQueue.at past the end');
  }

  /** The first n bytes as one Buffer (n ≤ length), without consuming them. */
  peek(n: number): Buffer {
    const first = this.#chunks[0];
    if (first && first.length - this.#head >= n) return first.subarray(this.#head, this.#head + n);
    const out = Buffer.allocUnsafe(n);
    let got = 0;
    let skip = this.#head;
    for (const c of this.#chunks) {
      if (got >= n) break;
      got += c.copy(out, got, skip, Math.min(c.length, skip + n - got));
      skip = 0;
    }
    return out;
  }

  /** Remove and return the first n bytes (n ≤ length). */
  take(n: number): Buffer {
    const out = this.peek(n);
    this.skip(n);
    return out;
  }

  skip(n: number): void {
    this.#length -= n;
    while (n > 0) {
      const c = this.#chunks[0]!;
      const avail = c.length - this.#head;
      if (n < avail) {
        this.#head += n;
        return;
      }
      n -= avail;
      this.#chunks.shift();
      this.#head = 0;
      if (this.#chunks.length === 0) this.#lastInBlock = false;
    }
  }

  indexOfLf(limit: number): number {
    const n = Math.min(limit, this.#length);
    for (let i = 0; i < n; i++) if (this.at(i) === 0x0a) return i;
    return -1;
  }
}

const HEAD = 5; // u32 length + command letter

export class FrameReader {
  #q = new ByteQueue();
  #framesRead = 0;

  /** Bytes received and not yet handed out as frames. */
  get buffered(): number {
    return this.#q.length;
  }

  push(chunk: Buffer): void {
    this.#q.push(chunk);
  }

  /** The next complete frame, or what stands in the way of one. Never consumes a partial frame. */
  next(): ReadResult {
    const q = this.#q;
    if (q.length < HEAD) {
      // Three bytes are enough to see a health check before its length makes sense.
      if (this.#framesRead === 0 && q.length >= 3 && this.#startsWith('GET')) return this.#httpLine();
      return { kind: 'need-more' };
    }
    const head = q.peek(HEAD);
    const len = head.readUInt32BE(0);
    if (len > MAX_FRAME_DATA + 1) {
      if (this.#framesRead === 0 && this.#startsWith('GET')) return this.#httpLine();
      if (this.#framesRead === 0 && this.#startsWith('POST')) return { kind: 'error', message: 'HTTP POST request is not supported in milter mode' };
      return { kind: 'error', message: `frame length ${len} over the ${MAX_FRAME_DATA + 1}-byte cap` };
    }
    if (len === 0) return { kind: 'error', message: 'frame length 0' };
    const cmd = head[4]!;
    if (!isValidCommand(cmd)) return { kind: 'error', message: `unknown command 0x${cmd.toString(16).padStart(2, '0')}` };
    if (q.length < 4 + len) return { kind: 'need-more' };
    q.skip(HEAD);
    const data = q.take(len - 1);
    this.#framesRead++;
    return { kind: 'frame', frame: { cmd, data } };
  }

  #startsWith(s: string): boolean {
    if (this.#q.length < s.length) return false;
    for (let i = 0; i < s.length; i++) if (this.#q.at(i) !== s.charCodeAt(i)) return false;
    return true;
  }

  /** `GET <url> HTTP/x.y` on a milter port: the request line, once it is complete. */
  #httpLine(): ReadResult {
    const lf = this.#q.indexOfLf(MAX_PING_LINE);
    if (lf < 0) {
      if (this.#q.length >= MAX_PING_LINE) return { kind: 'error', message: 'HTTP request line too long in milter mode' };
      return { kind: 'need-more' };
    }
    const line = this.#q.take(lf + 1).toString('latin1').replace(/\r?\n$/, '');
    const parts = line.split(' ');
    return { kind: 'http', method: parts[0] ?? '', url: parts[1] ?? '' };
  }
}
