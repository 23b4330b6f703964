// The upstream leg of a relayed request: request bytes built
// from a RelayRequest (the relay's own Host, Connection and Content-Length, a forced Settings-ID,
// zstd of the body, HTTPCrypt around the whole request), and the reply opened back into plain
// status, headers and body.

import { openReplyBody, sealRequest, serializeInnerRequest } from '../../http/crypt/envelope.js';
import { zstdCompress, zstdDecompressBounded } from '../../http/zstd.js';
import type { KexKeypair } from '../../crypto/keypair.js';
import type { RelayRequest } from '../relay-types.js';
import { AttemptError } from './host-pool.js';
import { ResponseParser, type UpstreamResponse } from './response-parser.js';

/** Headers the relay writes itself: a front end's copies are dropped. */
const RELAY_OWNED = new Set(['content-length', 'host', 'connection', 'keep-alive', 'transfer-encoding', 'key', 'proxy-connection', 'te', 'upgrade', 'expect']);
/** Reply headers that describe the upstream leg only. */
const LEG_ONLY_REPLY = new Set(['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'key']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface LegOptions {
  /** `Host` of the upstream leg: the host as written in the list. */
  hostHeader: string;
  keepAlive: boolean;
  /** zstd the body (the group's `compression`). */
  compression: boolean;
  /** Replaces any Settings-ID the client sent (the group's `settings_id`). */
  settingsId?: string | undefined;
  /** Encrypt to this scanner public key (the group's `key`). */
  key?: Uint8Array | undefined;
  /** The proxy's keypair for the encrypted leg; a per-process ephemeral one when absent. */
  clientKeypair?: KexKeypair | undefined;
  userAgent: string;
}

export interface BuiltLeg {
  /** The request as written: one buffer, or head and body (written together, never copied into one). */
  bytes: Buffer | readonly Buffer[];
  /** The shared key of an encrypted leg: the reply is opened with it. */
  nm?: Uint8Array;
  /** The body was zstd-compressed by the relay. */
  compressed: boolean;
}

/** One header line's value: line breaks would let a value start a new header (request smuggling). */
const oneLine = (v: string): string => (/[\r\n\0]/.test(v) ? v.replace(/[\r\n\0]+/g, ' ') : v);

/** v3 takes per-part compression only; a whole-body zstd would not be undone there. */
function isMultipartScan(req: RelayRequest): boolean {
  if (/^\/checkv3(?:[?/]|$)/i.test(req.path)) return true;
  return req.headers.some(([k, v]) => k.toLowerCase() === 'content-type' && /^multipart\//i.test(v.trim()));
}

/** The headers to forward, in order: the request's own minus relay-owned ones, Settings-ID forced. */
function forwardHeaders(req: RelayRequest, opts: LegOptions, compressed: boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let hasUserAgent = false;
  for (const [name, value] of req.headers) {
    const lower = name.toLowerCase();
    if (RELAY_OWNED.has(lower) || !TOKEN.test(name)) continue;
    if (opts.settingsId !== undefined && lower === 'settings-id') continue;
    if (lower === 'user-agent') hasUserAgent = true;
    out.push([name, oneLine(value)]);
  }
  if (opts.settingsId !== undefined) out.push(['Settings-ID', oneLine(opts.settingsId)]);
  if (compressed) out.push(['Compression', 'zstd']);
  if (!hasUserAgent) out.push(['User-Agent', opts.userAgent]);
  return out;
}

export function buildLeg(req: RelayRequest, opts: LegOptions): BuiltLeg {
  const alreadyCompressed = req.headers.some(([k]) => k.toLowerCase() === 'compression');
  const compress = opts.compression && req.body.length > 0 && !alreadyCompressed && !isMultipartScan(req);
  const body = compress ? zstdCompress(req.body) : req.body;
  const headers = forwardHeaders(req, opts, compress);
  const method = TOKEN.test(req.method) ? req.method : 'POST';
  const path = oneLine(req.path).replace(/ /g, '%20') || '/checkv2';
  if (opts.key) {
    const inner = serializeInnerRequest({ method, path, headers, body });
    const sealed = sealRequest(inner, opts.key, { host: opts.hostHeader, keepAlive: opts.keepAlive, ...(opts.clientKeypair ? { clientKeypair: opts.clientKeypair } : {}) });
    return { bytes: sealed.bytes, nm: sealed.nm, compressed: compress };
  }
  let head = `${method} ${path} HTTP/1.1\r\nHost: ${opts.hostHeader}\r\nConnection: ${opts.keepAlive ? 'keep-alive' : 'close'}\r\nContent-Length: ${body.length}\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  head += '\r\n';
  return { bytes: [Buffer.from(head, 'utf8'), body], compressed: compress };
}

export interface OpenedReply {
  status: number;
  reason: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

const namesZstd = (v: string): boolean => /(^|[\s,])zstd($|[\s,;])/i.test(v);

/**
 * The scanner's reply as the front ends see it: decrypted (an encrypted leg), decompressed
 * (whatever asked for it, the relay hands out plain bytes), leg-only headers removed.
 */
export function openLegReply(res: UpstreamResponse, leg: BuiltLeg, maxBytes: number, where: string): OpenedReply {
  let reply: UpstreamResponse = res;
  if (leg.nm) {
    const plain = openReplyBody(leg.nm, res.body);
    if (!plain) throw new AttemptError('failed', `cannot decrypt the reply of ${where} (outer status ${res.status} ${res.reason}): wrong key?`);
    const p = new ResponseParser(maxBytes);
    try {
      reply = p.feed(plain) ?? p.end();
    } catch (err) {
      throw new AttemptError('failed', `decrypted reply of ${where} is not HTTP: ${(err as Error).message}`, { cause: err });
    }
  }
  let zstd = false;
  const headers: Array<[string, string]> = [];
  for (const [k, v] of reply.headers) {
    const lower = k.toLowerCase();
    if (LEG_ONLY_REPLY.has(lower)) continue;
    if (lower === 'compression' || (lower === 'content-encoding' && namesZstd(v))) {
      zstd ||= namesZstd(v);
      continue;
    }
    headers.push([k, v]);
  }
  let body = reply.body;
  if (zstd && body.length > 0) {
    try {
      body = zstdDecompressBounded(body, maxBytes);
    } catch (err) {
      throw new AttemptError('failed', `bad zstd reply from ${where}: ${(err as Error).message}`, { cause: err });
    }
  }
  return { status: reply.status, reason: reply.reason, headers, body };
}
