// Incremental HTTP/1.x request parser. Node's parser cannot give us close-delimited request
// bodies, byte-exact control of limits or (later) the legacy spamc text dialect, so the
// transport reads requests itself. The parser is fed raw socket chunks and yields complete
// requests in order; it never buffers more than the configured limits.

import { MailsiftError } from './errors.js';
import { legacyRequestLine, parseHeadText, skipLeadingWs, type LegacyDialect } from './request-head.js';
import type { RequestHeaders } from './types.js';

export interface ParserLimits {
  /** Bytes of request line + header block (protects memory and the per-line scan). */
  maxHeaderBytes: number;
  /** Bytes of a request body after de-chunking (the `max_message` option). */
  maxBodyBytes: number;
}

/** A request as parsed off the wire, before the server adds peer/tls facts. */
export interface ParsedRequest {
  method: string;
  path: string;
  query: Map<string, string>;
  headers: RequestHeaders;
  version: string;
  body: Buffer;
  /** The body ended with EOF: the connection cannot be reused. */
  closeDelimited: boolean;
  keepAlive: boolean;
  /** Legacy text dialect (`SYMBOLS SPAMC/1.2`, `CHECK RSPAMC/1.3`). */
  legacy?: LegacyDialect;
}

/** Longest chunk-size line (hex digits plus extensions) we accept before calling it garbage. */
const MAX_CHUNK_LINE = 4096;
/** Bytes of chunked trailers accepted; they count against nothing else, so they get their own cap. */
const MAX_TRAILER_BYTES = 16384;

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailers' | 'close';

const EMPTY = Buffer.alloc(0);
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const LF_LF = Buffer.from('\n\n', 'latin1');
/** Smallest store that joined reads are appended into; it doubles as it fills. */
const MIN_STORE_BYTES = 8192;
/** Bytes of an unfinished head examined for a legacy request line: the longest real one is ~25. */
const MAX_LEGACY_LINE_PEEK = 256;

export class RequestParser {
  /** Bytes received and not parsed yet: a read as it came, or a view of the end of #store. */
  #buf: Buffer = EMPTY;
  /**
   * Where reads that have to be joined (a head arriving in many small reads) are appended, with
   * room to spare: copying the whole buffer on every read would cost quadratic time, ~0.7 s of
   * CPU for a 64 KiB head sent one byte per segment. Bytes before #storeUsed never change, so
   * body parts may stay views of it.
   */
  #store: Buffer = EMPTY;
  #storeUsed = 0;
  #scan = 0;
  #state: State = 'head';
  #limits: ParserLimits;
  #req: ParsedRequest | undefined;
  #parts: Buffer[] = [];
  #bodyLen = 0;
  #remaining = 0;
  #trailerBytes = 0;
  #expectContinue = false;
  /** Dialect of the head being parsed, kept when its header lines turn out malformed. */
  #headLegacy: LegacyDialect | undefined;

  constructor(limits: ParserLimits) {
    this.#limits = limits;
  }

  feed(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.#buf.length === 0) {
      this.#buf = chunk;
      return;
    }
    const need = this.#buf.length + chunk.length;
    const tailOfStore =
      this.#buf.buffer === this.#store.buffer && this.#buf.byteOffset + this.#buf.length === this.#store.byteOffset + this.#storeUsed;
    if (tailOfStore && this.#storeUsed + chunk.length <= this.#store.length) {
      chunk.copy(this.#store, this.#storeUsed);
      this.#storeUsed += chunk.length;
    } else {
      // Not pooled: a pooled slice could share its ArrayBuffer with a socket read.
      const store = Buffer.allocUnsafeSlow(Math.max(MIN_STORE_BYTES, need * 2));
      this.#buf.copy(store, 0);
      chunk.copy(store, this.#buf.length);
      this.#store = store;
      this.#storeUsed = need;
    }
    this.#buf = this.#store.subarray(this.#storeUsed - need, this.#storeUsed);
  }

  /** True when bytes of an unfinished request are held (idle keep-alive vs. slow client). */
  get inRequest(): boolean {
    return this.#state !== 'head' || this.#buf.length > 0;
  }

  /** Waiting for an EOF-delimited body and none of it has arrived yet. */
  get awaitingCloseBody(): boolean {
    return this.#state === 'close' && this.#bodyLen === 0 && this.#buf.length === 0;
  }

  /**
   * The legacy text dialect of the request being read, known as soon as its request line has
   * arrived (even when the rest of its head is malformed or never comes): its errors are
   * answered in that dialect instead of HTTP.
   */
  get legacyDialect(): LegacyDialect | undefined {
    if (this.#req) return this.#req.legacy;
    if (this.#headLegacy) return this.#headLegacy;
    if (this.#state !== 'head') return undefined;
    let start = 0;
    while (start < this.#buf.length && (this.#buf[start] === 13 || this.#buf[start] === 10)) start++;
    const window = this.#buf.subarray(start, start + MAX_LEGACY_LINE_PEEK);
    let nl = window.indexOf(10);
    if (nl < 0) nl = window.length;
    return legacyRequestLine(window.subarray(0, nl).toString('latin1').replace(/\r$/, ''))?.dialect;
  }

  /**
   * True once per request whose head asked `Expect: 100-continue` and whose body has not
   * arrived yet: the server answers `100 Continue` so curl-like clients do not stall.
   */
  takeExpectContinue(): boolean {
    const v = this.#expectContinue;
    this.#expectContinue = false;
    return v;
  }

  /** Next complete request, or undefined when more bytes are needed. Throws MailsiftError. */
  next(): ParsedRequest | undefined {
    if (this.#state === 'head') {
      if (!this.#parseHead()) return undefined;
    }
    for (;;) {
      switch (this.#state) {
        case 'length': {
          const take = Math.min(this.#remaining, this.#buf.length);
          if (take > 0) {
            this.#push(this.#buf.subarray(0, take));
            this.#buf = this.#buf.subarray(take);
            this.#remaining -= take;
          }
          if (this.#remaining > 0) return undefined;
          return this.#finish(false);
        }
        case 'chunk-size': {
          const nl = this.#buf.indexOf(10);
          if (nl < 0) {
            if (this.#buf.length > MAX_CHUNK_LINE) throw new MailsiftError('ERR_BAD_CHUNK', 'Invalid chunk size line');
            return undefined;
          }
          // The same cap when the whole line came in one read: the answer must not depend on how
          // the bytes were split.
          if (nl > MAX_CHUNK_LINE) throw new MailsiftError('ERR_BAD_CHUNK', 'Invalid chunk size line');
          const line = this.#buf.subarray(0, nl).toString('latin1');
          this.#buf = this.#buf.subarray(nl + 1);
          const size = parseChunkSize(line);
          if (size === 0) {
            this.#state = 'trailers';
          } else {
            if (this.#bodyLen + size > this.#limits.maxBodyBytes) throw tooLarge();
            this.#remaining = size;
            this.#state = 'chunk-data';
          }
          break;
        }
        case 'chunk-data': {
          const take = Math.min(this.#remaining, this.#buf.length);
          if (take > 0) {
            this.#push(this.#buf.subarray(0, take));
            this.#buf = this.#buf.subarray(take);
            this.#remaining -= take;
          }
          if (this.#remaining > 0) return undefined;
          this.#state = 'chunk-crlf';
          break;
        }
        case 'chunk-crlf': {
          if (this.#buf.length === 0) return undefined;
          if (this.#buf[0] === 10) {
            this.#buf = this.#buf.subarray(1);
          } else if (this.#buf[0] === 13) {
            if (this.#buf.length < 2) return undefined;
            if (this.#buf[1] !== 10) throw new MailsiftError('ERR_BAD_CHUNK', 'Invalid chunk terminator');
            this.#buf = this.#buf.subarray(2);
          } else {
            throw new MailsiftError('ERR_BAD_CHUNK', 'Invalid chunk terminator');
          }
          this.#state = 'chunk-size';
          break;
        }
        case 'trailers': {
          const nl = this.#buf.indexOf(10);
          if (nl < 0) {
            if (this.#trailerBytes + this.#buf.length > MAX_TRAILER_BYTES) {
              throw new MailsiftError('ERR_HEADERS_TOO_LARGE', 'Chunked trailers too large');
            }
            return undefined;
          }
          // Decoded as the header block is (UTF-8), so a value reads the same in either place.
          let line = this.#buf.subarray(0, nl).toString('utf8');
          this.#buf = this.#buf.subarray(nl + 1);
          this.#trailerBytes += nl + 1;
          if (this.#trailerBytes > MAX_TRAILER_BYTES) throw new MailsiftError('ERR_HEADERS_TOO_LARGE', 'Chunked trailers too large');
          if (line.endsWith('\r')) line = line.slice(0, -1);
          if (line.length === 0) return this.#finish(false);
          // Trailers are accepted and kept with the other headers; none of them has protocol meaning.
          const colon = line.indexOf(':');
          if (colon > 0 && this.#req) this.#req.headers.add(line.slice(0, colon), skipLeadingWs(line.slice(colon + 1)));
          break;
        }
        case 'close': {
          if (this.#buf.length > 0) {
            if (this.#bodyLen + this.#buf.length > this.#limits.maxBodyBytes) throw tooLarge();
            this.#push(this.#buf);
            this.#buf = EMPTY;
          }
          return undefined;
        }
        case 'head':
          return undefined;
      }
    }
  }

  /** The peer half-closed: completes a close-delimited body, or reports a truncated request. */
  end(): ParsedRequest | undefined {
    if (this.#state === 'close') {
      this.next();
      return this.#finish(true);
    }
    if (this.#state !== 'head') throw new MailsiftError('ERR_TRUNCATED_BODY', 'Request body truncated');
    if (this.#buf.length > 0 && this.#buf.toString('latin1').trim().length > 0) {
      throw new MailsiftError('ERR_BAD_REQUEST', 'Incomplete request header');
    }
    return undefined;
  }

  /** Give up waiting for an EOF-delimited body that never started: the body is empty. */
  finishEmptyCloseBody(): ParsedRequest | undefined {
    if (this.#state !== 'close' || this.#bodyLen > 0) return undefined;
    const r = this.#finish(false);
    return r;
  }

  #push(b: Buffer): void {
    this.#parts.push(b);
    this.#bodyLen += b.length;
  }

  #finish(closeDelimited: boolean): ParsedRequest {
    const req = this.#req!;
    req.body = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#bodyLen);
    // Body buffers may be views of a larger socket chunk; copy small ones so it can be freed.
    req.closeDelimited = closeDelimited;
    if (closeDelimited) req.keepAlive = false;
    this.#req = undefined;
    this.#parts = [];
    this.#bodyLen = 0;
    this.#remaining = 0;
    this.#trailerBytes = 0;
    this.#expectContinue = false;
    this.#headLegacy = undefined;
    this.#state = 'head';
    this.#scan = 0;
    return req;
  }

  #parseHead(): boolean {
    // Skip empty lines a client may send between pipelined requests (RFC 9112 §2.2).
    let start = 0;
    while (start < this.#buf.length && (this.#buf[start] === 13 || this.#buf[start] === 10)) start++;
    if (start > 0) {
      this.#buf = this.#buf.subarray(start);
      this.#scan = 0;
    }
    const from = Math.max(0, this.#scan - 3);
    const crlf = this.#buf.indexOf(CRLF_CRLF, from);
    const lf = this.#buf.indexOf(LF_LF, from);
    let end = -1;
    let bodyStart = -1;
    if (crlf >= 0 && (lf < 0 || crlf < lf)) {
      end = crlf;
      bodyStart = crlf + 4;
    } else if (lf >= 0) {
      end = lf;
      bodyStart = lf + 2;
    }
    if (end < 0) {
      this.#scan = this.#buf.length;
      if (this.#buf.length > this.#limits.maxHeaderBytes) {
        throw new MailsiftError('ERR_HEADERS_TOO_LARGE', 'Request header block too large');
      }
      return false;
    }
    if (bodyStart > this.#limits.maxHeaderBytes) {
      throw new MailsiftError('ERR_HEADERS_TOO_LARGE', 'Request header block too large');
    }
    // Header values are UTF-8 on the wire in practice (Settings JSON, addresses); ASCII is unaffected.
    const head = this.#buf.subarray(0, end).toString('utf8');
    this.#buf = this.#buf.subarray(bodyStart);
    this.#scan = 0;
    const firstLine = head.slice(0, Math.min(head.length, MAX_LEGACY_LINE_PEEK)).split('\n', 1)[0]!.replace(/\r$/, '');
    this.#headLegacy = legacyRequestLine(firstLine)?.dialect;
    this.#req = parseHeadText(head);
    this.#chooseFraming();
    const expect = this.#req.headers.first('expect');
    this.#expectContinue = expect !== undefined && expect.toLowerCase() === '100-continue' && this.#req.version === 'HTTP/1.1';
    return true;
  }

  #chooseFraming(): void {
    const req = this.#req!;
    const te = req.headers.map.get('transfer-encoding');
    if (te) {
      const last = te[te.length - 1]!.split(',').pop()!.trim().toLowerCase();
      if (last !== 'chunked') throw new MailsiftError('ERR_BAD_REQUEST', `Unsupported Transfer-Encoding: ${te.join(', ')}`);
      this.#state = 'chunk-size';
      return;
    }
    const cl = req.headers.map.get('content-length');
    if (cl) {
      let n = -1;
      for (const v of cl) {
        const t = v.trim();
        if (!/^\d{1,16}$/.test(t)) throw new MailsiftError('ERR_BAD_HEADER', 'Invalid Content-Length');
        const k = Number(t);
        if (n >= 0 && k !== n) throw new MailsiftError('ERR_BAD_HEADER', 'Conflicting Content-Length values');
        n = k;
      }
      if (n > this.#limits.maxBodyBytes) throw tooLarge();
      this.#remaining = n;
      this.#state = 'length';
      return;
    }
    // HTTP/1.1 without framing has no body; an HTTP/1.0 body may run until the client
    // half-closes — unless the client asked to reuse the connection, or the method is a
    // GET/HEAD (a liveness probe), where following bytes are the next request.
    const closeBody = req.version === 'HTTP/1.0' && !req.keepAlive && req.method !== 'GET' && req.method !== 'HEAD' && !req.legacy;
    this.#state = closeBody ? 'close' : 'length';
    this.#remaining = 0;
  }
}

function tooLarge(): MailsiftError {
  return new MailsiftError('ERR_BODY_TOO_LARGE', 'Request entity too large');
}

function parseChunkSize(line: string): number {
  let end = line.length;
  const semi = line.indexOf(';');
  if (semi >= 0) end = semi;
  const hex = line.slice(0, end).trim();
  if (hex.length === 0 || hex.length > 12 || !/^[0-9a-fA-F]+$/.test(hex)) {
    throw new MailsiftError('ERR_BAD_CHUNK', 'Invalid chunk size');
  }
  return parseInt(hex, 16);
}
