// Reads one HTTP/1.x response from an upstream, incrementally: Content-Length, chunked or
// close-delimited bodies, with caps on the head and body so a broken or hostile upstream cannot
// grow the proxy's memory. Interim 1xx responses are skipped. Any framing error is thrown as
// ResponseFormatError; the caller treats it as a failure of that upstream.

/** Largest status line + header block; an upstream reply head is a few hundred bytes. */
export const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;
/** Longest chunk-size line (hex digits, extensions); a longer one is garbage, not a size. */
const MAX_CHUNK_LINE = 1024;
/** Interim (1xx) responses skipped before the real one; more is an upstream looping on 100. */
const MAX_INTERIM_RESPONSES = 4;

export class ResponseFormatError extends Error {}

export interface UpstreamResponse {
  status: number;
  reason: string;
  /** In the order received, names as sent. */
  headers: Array<[string, string]>;
  body: Buffer;
  /** The connection may carry another request (HTTP/1.1 without `close`, or 1.0 with keep-alive). */
  keepAlive: boolean;
}

type Framing = { kind: 'length'; remaining: number } | { kind: 'chunked'; state: 'size' | 'data' | 'data-crlf' | 'trailer'; remaining: number } | { kind: 'close' };

export class ResponseParser {
  readonly #maxBody: number;
  #buf: Buffer = Buffer.alloc(0);
  #head: Omit<UpstreamResponse, 'body'> | undefined;
  #framing: Framing | undefined;
  #body: Buffer[] = [];
  #bodySize = 0;
  #done: UpstreamResponse | undefined;
  #interim = 0;
  /** Some byte of a response arrived (a reused connection that fails before this is just stale). */
  started = false;

  constructor(maxBodyBytes: number) {
    this.#maxBody = maxBodyBytes;
  }

  /** Feeds bytes; returns the response once it is complete. */
  feed(chunk: Buffer): UpstreamResponse | undefined {
    if (this.#done) throw new ResponseFormatError('bytes after the end of the response');
    if (chunk.length > 0) this.started = true;
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    // Each turn consumes bytes from #buf or returns, so the buffered bytes bound it.
    for (;;) {
      if (this.#done) return this.#done;
      if (!this.#head) {
        if (!this.#takeHead()) return undefined;
        continue;
      }
      const f = this.#framing!;
      if (f.kind === 'close') {
        this.#push(this.#buf);
        this.#buf = Buffer.alloc(0);
        return undefined;
      }
      if (f.kind === 'length') {
        const n = Math.min(f.remaining, this.#buf.length);
        this.#push(this.#buf.subarray(0, n));
        this.#buf = this.#buf.subarray(n);
        f.remaining -= n;
        if (f.remaining === 0) return this.#finish();
        return undefined;
      }
      if (!this.#chunkStep(f)) return this.#done;
    }
  }

  /** The peer closed: completes a close-delimited body, else the response was cut short. */
  end(): UpstreamResponse {
    if (this.#done) return this.#done;
    if (this.#head && this.#framing?.kind === 'close') return this.#finish();
    throw new ResponseFormatError(this.#head ? 'the upstream closed the connection in the middle of the body' : 'the upstream closed the connection without a complete reply');
  }

  #takeHead(): boolean {
    let end = this.#buf.indexOf('\r\n\r\n');
    let sep = 4;
    const lf = this.#buf.indexOf('\n\n');
    if (lf >= 0 && (end < 0 || lf < end)) {
      end = lf;
      sep = 2;
    }
    if (end < 0) {
      if (this.#buf.length > MAX_RESPONSE_HEAD_BYTES) throw new ResponseFormatError(`reply head longer than ${MAX_RESPONSE_HEAD_BYTES} bytes`);
      return false;
    }
    if (end > MAX_RESPONSE_HEAD_BYTES) throw new ResponseFormatError(`reply head longer than ${MAX_RESPONSE_HEAD_BYTES} bytes`);
    const lines = this.#buf.subarray(0, end).toString('latin1').split(/\r?\n/);
    this.#buf = this.#buf.subarray(end + sep);
    const m = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
    if (!m) throw new ResponseFormatError(`not an HTTP reply: "${(lines[0] ?? '').slice(0, 40)}"`);
    const minor = m[1]!;
    const status = Number(m[2]);
    const headers: Array<[string, string]> = [];
    for (const line of lines.slice(1)) {
      if (line.startsWith(' ') || line.startsWith('\t')) {
        const last = headers[headers.length - 1];
        if (!last) throw new ResponseFormatError('header continuation without a header');
        last[1] += ` ${line.trim()}`;
        continue;
      }
      const colon = line.indexOf(':');
      if (colon <= 0) throw new ResponseFormatError('malformed header line in the reply');
      headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    if (status >= 100 && status < 200) {
      if (++this.#interim > MAX_INTERIM_RESPONSES) throw new ResponseFormatError('too many interim replies');
      return true; // skipped; the real response follows
    }
    const get = (name: string): string[] => headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);
    const conn = get('connection').join(',').toLowerCase();
    let keepAlive = minor === '1' ? !conn.includes('close') : conn.includes('keep-alive');
    const te = get('transfer-encoding').join(',').toLowerCase();
    const cl = get('content-length');
    if (te.includes('chunked')) {
      this.#framing = { kind: 'chunked', state: 'size', remaining: 0 };
    } else if (cl.length > 0) {
      if (!cl.every((v) => v === cl[0]) || !/^\d{1,15}$/.test(cl[0]!)) throw new ResponseFormatError('bad Content-Length in the reply');
      const n = Number(cl[0]);
      if (n > this.#maxBody) throw new ResponseFormatError(`reply body of ${n} bytes is over the ${this.#maxBody}-byte limit`);
      this.#framing = { kind: 'length', remaining: n };
    } else if (status === 204 || status === 304) {
      this.#framing = { kind: 'length', remaining: 0 };
    } else {
      this.#framing = { kind: 'close' };
      keepAlive = false;
    }
    this.#head = { status, reason: m[3] ?? '', headers, keepAlive };
    if (this.#framing.kind === 'length' && this.#framing.remaining === 0) this.#finish();
    return true;
  }

  /** One step of chunked decoding; false when more bytes are needed or the response is done. */
  #chunkStep(f: Extract<Framing, { kind: 'chunked' }>): boolean {
    if (f.state === 'size' || f.state === 'trailer') {
      const nl = this.#buf.indexOf('\n');
      if (nl < 0) {
        if (this.#buf.length > MAX_CHUNK_LINE) throw new ResponseFormatError('chunk size line too long');
        return false;
      }
      const line = this.#buf.subarray(0, nl).toString('latin1').replace(/\r$/, '');
      this.#buf = this.#buf.subarray(nl + 1);
      if (f.state === 'trailer') {
        if (line === '') {
          this.#finish();
          return false;
        }
        return true; // a trailer field: ignored
      }
      const m = /^([0-9a-fA-F]{1,12})(?:;.*)?$/.exec(line.trim());
      if (!m) throw new ResponseFormatError('bad chunk size in the reply');
      const size = parseInt(m[1]!, 16);
      if (this.#bodySize + size > this.#maxBody) throw new ResponseFormatError(`reply body is over the ${this.#maxBody}-byte limit`);
      if (size === 0) f.state = 'trailer';
      else {
        f.state = 'data';
        f.remaining = size;
      }
      return true;
    }
    if (f.state === 'data') {
      if (this.#buf.length === 0) return false;
      const n = Math.min(f.remaining, this.#buf.length);
      this.#push(this.#buf.subarray(0, n));
      this.#buf = this.#buf.subarray(n);
      f.remaining -= n;
      if (f.remaining === 0) f.state = 'data-crlf';
      return true;
    }
    // data-crlf: the line break after a chunk's data.
    const nl = this.#buf.indexOf('\n');
    if (nl < 0) {
      if (this.#buf.length > 2) throw new ResponseFormatError('missing line break after a chunk');
      return false;
    }
    if (nl > 1 || (nl === 1 && this.#buf[0] !== 0x0d)) throw new ResponseFormatError('missing line break after a chunk');
    this.#buf = this.#buf.subarray(nl + 1);
    f.state = 'size';
    return true;
  }

  #push(b: Buffer): void {
    if (b.length === 0) return;
    this.#bodySize += b.length;
    if (this.#bodySize > this.#maxBody) throw new ResponseFormatError(`reply body is over the ${this.#maxBody}-byte limit`);
    this.#body.push(b);
  }

  #finish(): UpstreamResponse {
    const body = this.#body.length === 1 ? this.#body[0]! : Buffer.concat(this.#body, this.#bodySize);
    this.#done = { ...this.#head!, body };
    // Bytes beyond the response on a kept-alive connection mean the framing is not what we think.
    if (this.#buf.length > 0) this.#done.keepAlive = false;
    return this.#done;
  }
}
