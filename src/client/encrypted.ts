// One HTTP-encrypted exchange, as rspamc does it: a fresh client
// keypair, the whole request sealed inside `POST /post`, one connection per request (the
// outer request says `Connection: close`), and the reply opened and parsed from the inside.

import net from 'node:net';
import { openReplyBody, parseResponse, sealRequest, serializeInnerRequest } from '../http/crypt/envelope.js';
import { CLIENT_ERROR_CODES, ScanClientError } from './errors.js';
import { errorText } from './reply.js';

export interface PlainRequest {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

export interface PlainReply {
  status: number;
  reason: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface Endpoint {
  host?: string;
  port?: number;
  socketPath?: string;
}

export function sendEncrypted(
  to: Endpoint,
  serverKey: Uint8Array,
  req: PlainRequest,
  opts: { timeoutMs: number; maxReplyBytes: number },
): Promise<PlainReply> {
  const where = to.socketPath ?? `${to.host}:${to.port}`;
  let sealed;
  try {
    sealed = sealRequest(serializeInnerRequest({ path: req.path, headers: req.headers, body: req.body }), serverKey);
  } catch (e) {
    return Promise.reject(new ScanClientError(CLIENT_ERROR_CODES.BAD_REQUEST, `cannot encrypt to ${where}: ${(e as Error).message}`, { cause: e }));
  }
  const { bytes, nm } = sealed;
  return new Promise<PlainReply>((resolve, reject) => {
    const socket = to.socketPath ? net.connect({ path: to.socketPath }) : net.connect({ host: to.host ?? 'localhost', port: to.port ?? 0 });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: ScanClientError | undefined, reply?: PlainReply): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(reply!);
    };
    const timer = setTimeout(() => finish(new ScanClientError(CLIENT_ERROR_CODES.TIMEOUT, `no reply from ${where} within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    // No half-close after the request: Rspamd treats an early EOF as the client going away.
    socket.on('connect', () => socket.write(bytes));
    socket.on('error', (e: NodeJS.ErrnoException) => finish(new ScanClientError(CLIENT_ERROR_CODES.CONNECT, `cannot talk to ${where}: ${e.code ?? e.message}`, { cause: e })));
    let expected = -1; // total outer reply bytes, once its head is in (Infinity: read to EOF)
    socket.on('data', (c: Buffer) => {
      size += c.length;
      if (size > opts.maxReplyBytes) {
        finish(new ScanClientError(CLIENT_ERROR_CODES.BAD_REPLY, `reply from ${where} exceeds ${opts.maxReplyBytes} bytes`));
        return;
      }
      chunks.push(c);
      if (expected < 0) {
        const head = Buffer.concat(chunks, size);
        chunks.length = 0;
        chunks.push(head);
        const end = head.indexOf('\r\n\r\n', 0, 'latin1');
        if (end >= 0) {
          const m = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head.subarray(0, end).toString('latin1'));
          expected = m ? end + 4 + Number(m[1]) : Infinity;
        }
      }
      // The outer reply is complete once Content-Length bytes are in: no need to wait for EOF.
      if (size >= expected) done(Buffer.concat(chunks, size));
    });
    socket.on('end', () => done(Buffer.concat(chunks, size)));

    function done(whole: Buffer): void {
      if (settled) return;
      if (whole.length === 0) {
        finish(new ScanClientError(CLIENT_ERROR_CODES.CONNECT, `${where} closed the connection without a reply (does the server have this key?)`));
        return;
      }
      const outer = parseResponse(whole);
      if (!outer) {
        finish(new ScanClientError(CLIENT_ERROR_CODES.BAD_REPLY, `reply from ${where} is not HTTP`));
        return;
      }
      const plain = openReplyBody(nm, outer.body);
      if (!plain) {
        // A plaintext reply is how a server reports a request it could not decrypt.
        const text = outer.status === 200 ? 'bad MAC or not encrypted' : errorText(outer.status, outer.reason, outer.headers, outer.body);
        finish(new ScanClientError(CLIENT_ERROR_CODES.BAD_REPLY, `cannot decrypt the reply from ${where} (outer status ${outer.status}): ${text}`, { status: outer.status, serverError: text }));
        return;
      }
      const inner = parseResponse(plain);
      if (!inner) {
        finish(new ScanClientError(CLIENT_ERROR_CODES.BAD_REPLY, `decrypted reply from ${where} is not an HTTP response`));
        return;
      }
      finish(undefined, { status: inner.status, reason: inner.reason || undefined, headers: inner.headers, body: inner.body });
    }
  });
}
