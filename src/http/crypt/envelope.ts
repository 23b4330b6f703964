// Wire layouts of HTTPCrypt messages as Rspamd's client writes and reads them
// (as rspamc and Rspamd's HTTP code lay them out): the inner request, the outer `POST /post` around it, and the
// decrypted inner reply. Pure byte functions shared by mailsift's client and the tests.

import { seal, sharedKey, open, BOX_OVERHEAD } from '../../crypto/cryptobox.js';
import { generateKeypair, keyId, type KexKeypair } from '../../crypto/keypair.js';
import { formatKeyHeader } from './key-header.js';

export interface InnerRequest {
  /** Forced like Rspamd's encoder when absent: POST with a body, GET without. */
  method?: string;
  /** Path with query string. */
  path: string;
  /** Sent in this order after Content-Length (and Content-Type, if given). */
  headers: Array<[string, string]>;
  contentType?: string;
  body: Uint8Array;
}

/**
 * The plaintext a client encrypts: HTTP/1.0 request line, `Content-Length` whenever
 * there is a body (a server cannot frame the inner body any other way), then the headers.
 */
export function serializeInnerRequest(req: InnerRequest): Buffer {
  const method = req.method ?? (req.body.length > 0 ? 'POST' : 'GET');
  let head = `${method} ${req.path} HTTP/1.0\r\n`;
  if (req.body.length > 0) {
    head += `Content-Length: ${req.body.length}\r\n`;
    if (req.contentType) head += `Content-Type: ${req.contentType}\r\n`;
  }
  for (const [name, value] of req.headers) {
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'connection') continue;
    if (lower === 'content-type' && req.body.length > 0 && req.contentType) continue;
    head += `${name}: ${value}\r\n`;
  }
  head += '\r\n';
  // UTF-8, as the server decodes request heads; ASCII heads are the same bytes either way.
  return Buffer.concat([Buffer.from(head, 'utf8'), req.body]);
}

export interface SealedRequest {
  /** Every byte of the outer request, ready for the socket. */
  bytes: Buffer;
  /** The shared key; the reply is opened with it. */
  nm: Uint8Array;
}

export interface SealOptions {
  /** The client keypair; a fresh one per request when absent (as rspamc does per connection). */
  clientKeypair?: KexKeypair;
  /** Fixed nonce (golden tests only); random otherwise. */
  nonce?: Uint8Array;
  /**
   * Host name of the server: selects the HTTP/1.1 outer form Rspamd's own clients (the proxy)
   * send, with `Host` and, when `keepAlive`, `Connection: keep-alive`.
   */
  host?: string;
  keepAlive?: boolean;
}

/** Thrown for a server public key that cannot make a shared key (low order point). */
export class BadPeerKeyError extends Error {
  readonly code = 'ERR_CRYPT_BAD_PEER_KEY';
}

/**
 * Encrypts `inner` to the server key and wraps it in the outer request: rspamc's
 * HTTP/1.0 form (`POST /post`, Content-Length, Content-Type, `Connection: close`, `Key`) when
 * no host name is given, else the HTTP/1.1 form with `Connection` and `Host` first.
 */
export function sealRequest(inner: Uint8Array, serverPublicKey: Uint8Array, opts: SealOptions = {}): SealedRequest {
  const client = opts.clientKeypair ?? generateKeypair();
  const nm = sharedKey(client.secretKey, serverPublicKey);
  if (!nm) throw new BadPeerKeyError('the server public key is not a usable X25519 key');
  const box = seal(nm, inner, opts.nonce);
  const key = `Key: ${formatKeyHeader(keyId(serverPublicKey), client.publicKey)}\r\n`;
  const framing = `Content-Length: ${box.length}\r\nContent-Type: application/octet-stream\r\n`;
  const head =
    opts.host === undefined
      ? `POST /post HTTP/1.0\r\n${framing}Connection: close\r\n${key}\r\n`
      : `POST /post HTTP/1.1\r\nConnection: ${opts.keepAlive ? 'keep-alive' : 'close'}\r\nHost: ${opts.host}\r\n${framing}${key}\r\n`;
  return { bytes: Buffer.concat([Buffer.from(head, 'latin1'), box]), nm };
}

/** Opens an encrypted reply body; undefined when shorter than nonce + MAC or the MAC fails. */
export function openReplyBody(nm: Uint8Array, body: Uint8Array): Buffer | undefined {
  if (body.length < BOX_OVERHEAD) return undefined;
  return open(nm, body);
}

export interface ParsedResponse {
  status: number;
  reason: string;
  /** Lower-case names; repeated headers become arrays. */
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/**
 * Parses an HTTP/1.x response held whole in memory (a decrypted inner reply, or an outer
 * reply read to EOF). The body is Content-Length bytes when given, else the rest.
 * Undefined when the bytes are not a response.
 */
export function parseResponse(bytes: Buffer): ParsedResponse | undefined {
  let end = bytes.indexOf('\r\n\r\n', 0, 'latin1');
  let sep = 4;
  if (end < 0) {
    end = bytes.indexOf('\n\n', 0, 'latin1');
    sep = 2;
  }
  if (end < 0) return undefined;
  const lines = bytes.subarray(0, end).toString('latin1').split(/\r?\n/);
  const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
  if (!m) return undefined;
  // Header names are the peer's: no prototype, so `__proto__` is a header like the others and
  // an absent name reads as undefined (a plain object re-parented itself to an array).
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prev = headers[name];
    headers[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  let body = bytes.subarray(end + sep);
  const cl = headers['content-length'];
  if (typeof cl === 'string') {
    if (!/^\d+$/.test(cl) || Number(cl) > body.length) return undefined;
    body = body.subarray(0, Number(cl));
  }
  return { status: Number(m[1]), reason: m[2] ?? '', headers, body };
}
