// Raw-socket helpers for the encryption tests: send exact bytes, read the whole answer.
import net from 'node:net';
import { BOX_OVERHEAD, open } from '../../src/crypto/cryptobox.js';
import { parseResponse, type ParsedResponse } from '../../src/http/crypt/envelope.js';

/** Longest a test waits for a server to answer and close. */
const EXCHANGE_TIMEOUT_MS = 5000;

export interface RawOptions {
  host?: string;
  /** Bind the client side to this local address (to appear as a non-local peer). */
  localAddress?: string;
  /** Half-close after writing (a client that stops mid-body). */
  end?: boolean;
}

/** Writes `bytes`, collects everything until the server closes. */
export function exchange(port: number, bytes: Buffer, opts: RawOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: opts.host ?? '127.0.0.1', port, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no close within ${EXCHANGE_TIMEOUT_MS} ms; got ${Buffer.concat(chunks).toString('latin1').slice(0, 200)}`));
    }, EXCHANGE_TIMEOUT_MS);
    s.on('connect', () => (opts.end ? s.end(bytes) : s.write(bytes)));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    s.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

/** Parses an outer reply and opens its body with `nm`; the inner reply, or undefined if it is not sealed. */
export function openReply(nm: Uint8Array, bytes: Buffer): { outer: ParsedResponse; inner: ParsedResponse | undefined } {
  const outer = parseResponse(bytes);
  if (!outer) throw new Error(`not an HTTP reply: ${bytes.toString('latin1').slice(0, 200)}`);
  const plain = outer.body.length >= BOX_OVERHEAD ? open(nm, outer.body) : undefined;
  return { outer, inner: plain ? parseResponse(plain) : undefined };
}

/** Splits a stream of several replies (keep-alive) by their Content-Length. */
export function splitReplies(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const m = /\r\ncontent-length: *(\d+)/i.exec(rest.subarray(0, end).toString('latin1'));
    const total = end + 4 + (m ? Number(m[1]) : rest.length);
    out.push(rest.subarray(0, total));
    rest = rest.subarray(total);
  }
  return out;
}
