// /checkv3: multipart/form-data with an optional `metadata` part (JSON, or msgpack when the
// part's type says so) and a required `message` part (per-part zstd). Metadata fields map
// onto the same ScanMeta the v2 headers produce; values of the
// wrong type are ignored. Every failure is a 400 naming the problem.

import { decode as msgpackDecode } from '@msgpack/msgpack';
import { MailsiftError } from '../http/errors.js';
import type { Request } from '../http/types.js';
import { zstdDecompressBounded } from '../http/zstd.js';
import { emptyMeta, type ScanMeta } from '../core/scan-types.js';
import { jsonShapeProblem, msgpackShapeProblem } from './metadata-shape.js';
import { boundaryFromContentType, MAX_FORM_PARTS, parseFormData, type FormPart } from './multipart.js';
import { addFlags, applyFrom, applyIp, applyRcpt, type ProtocolLog } from './parse-v2.js';
import type { ScanRequest } from './scan-request.js';
import { parseSettingsValue } from './settings-parse.js';

/** Request headers that name message sources or encodings; metadata may not inject them. */
const RESERVED_HEADERS = new Set(['shm', 'shm-offset', 'shm-length', 'file', 'path', 'dictionary', 'compression', 'content-encoding']);

function v3Error(code: string, message: string): MailsiftError {
  return new MailsiftError(code, message);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array) ? (v as Record<string, unknown>) : undefined;
}

/**
 * Largest metadata part decoded: an envelope with the most recipients a client may send (long
 * lists are capped later, with a symbol option) fits many times over. The shape checks below
 * bound the decoding cost, which grows with the arrays and maps, not with the bytes.
 */
export const MAX_METADATA_BYTES = 4 * 1024 * 1024;

export function decodeMetadata(part: FormPart): { data: Record<string, unknown>; msgpack: boolean } {
  const msgpack = (part.contentType ?? '').includes('msgpack');
  if (part.body.length > MAX_METADATA_BYTES) {
    throw v3Error('ERR_V3_BAD_METADATA', `metadata part is ${part.body.length} bytes, more than the ${MAX_METADATA_BYTES} read`);
  }
  // A fuzz finding: 4 MiB of nested msgpack arrays cost 2 s of a worker's CPU in the decoder.
  const shape = msgpack ? msgpackShapeProblem(part.body) : jsonShapeProblem(part.body);
  if (shape) throw v3Error('ERR_V3_BAD_METADATA', `metadata refused: ${shape}`);
  let parsed: unknown;
  try {
    parsed = msgpack ? msgpackDecode(part.body) : JSON.parse(part.body.toString('utf8'));
  } catch (err) {
    throw v3Error('ERR_V3_BAD_METADATA', `cannot parse metadata: ${(err as Error).message}`);
  }
  const data = obj(parsed);
  if (!data) throw v3Error('ERR_V3_BAD_METADATA', 'metadata is not a valid object');
  return { data, msgpack };
}

export function metaFromMetadata(data: Record<string, unknown>, base: ScanMeta, log?: ProtocolLog): ScanMeta {
  const meta = base;
  const from = str(data.from);
  if (from !== undefined) applyFrom(meta, from, log);
  const rcpt = data.rcpt;
  if (typeof rcpt === 'string') applyRcpt(meta, rcpt, false, log);
  else if (Array.isArray(rcpt)) {
    for (const r of rcpt) if (typeof r === 'string' && !applyRcpt(meta, r, false, log)) break;
  }
  const ip = str(data.ip);
  if (ip !== undefined) applyIp(meta, ip, log);
  const set = <K extends keyof ScanMeta>(key: K, v: ScanMeta[K] | undefined): void => {
    if (v !== undefined) meta[key] = v;
  };
  set('helo', str(data.helo));
  set('hostname', str(data.hostname));
  set('queueId', str(data.queue_id));
  set('user', str(data.user));
  const deliver = str(data.deliver_to);
  if (deliver !== undefined) meta.deliverTo = deliver.trim().replace(/^<(.*)>$/, '$1');
  set('settingsId', str(data.settings_id));
  const settings = obj(data.settings);
  if (settings) meta.settings = settings;
  const tls = obj(data.tls);
  if (tls) {
    meta.tls = {};
    if (str(tls.cipher) !== undefined) {
      meta.tls.cipher = str(tls.cipher);
      meta.flags.add('ssl');
    }
    if (str(tls.version) !== undefined) meta.tls.version = str(tls.version);
    if (str(tls.cert_issuer) !== undefined) meta.tls.certIssuer = str(tls.cert_issuer);
  }
  const mta = obj(data.mta);
  if (mta) {
    set('mtaTag', str(mta.tag));
    set('mtaName', str(mta.name));
  }
  if (Array.isArray(data.flags)) for (const f of data.flags) if (typeof f === 'string') addFlags(meta, f, log);
  if (typeof data.raw === 'boolean') meta.raw = data.raw;
  set('logTag', str(data.log_tag));
  set('filename', str(data.filename));
  set('subject', str(data.subject));
  if (str(data.pass) === 'all') meta.pass = 'all';
  if (str(data.url_format) === 'extended') meta.urlFormat = 'extended';
  const headers = obj(data.headers);
  if (headers) {
    for (const [name, value] of Object.entries(headers)) {
      const key = name.toLowerCase();
      if (RESERVED_HEADERS.has(key)) continue;
      const values = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : [];
      if (values.length === 0) continue;
      const list = meta.requestHeaders.get(key);
      if (list) list.push(...values);
      else meta.requestHeaders.set(key, values);
    }
  }
  if (meta.flags.has('pass_all')) meta.pass = 'all';
  else if (meta.pass === 'all') meta.flags.add('pass_all');
  if (meta.flags.has('no_log')) meta.log = false;
  if (meta.flags.has('ext_urls')) meta.urlFormat = 'extended';
  else if (meta.urlFormat === 'extended') meta.flags.add('ext_urls');
  return meta;
}

export interface V3Options {
  maxMessage: number;
  log?: ProtocolLog;
}

export function decodeV3Request(req: Request, opts: V3Options): ScanRequest {
  const ct = req.headers.first('content-type');
  if (ct === undefined) throw v3Error('ERR_V3_NO_CONTENT_TYPE', 'missing Content-Type header for v3 request');
  const boundary = boundaryFromContentType(ct);
  if (!boundary) throw v3Error('ERR_V3_NO_BOUNDARY', 'cannot extract boundary from Content-Type');
  const parts = parseFormData(req.body, boundary);
  if (parts.length > 2) {
    const n = parts.length > MAX_FORM_PARTS ? `more than ${MAX_FORM_PARTS}` : String(parts.length);
    throw v3Error('ERR_V3_TOO_MANY_PARTS', `v3 request must contain at most 2 parts (metadata + message), got ${n}`);
  }
  const metaPart = parts.find((p) => p.name === 'metadata');
  const msgPart = parts.find((p) => p.name === 'message');
  const meta = emptyMeta();
  // HTTP headers are not protocol headers in v3, but rules can still read them.
  for (const [k, v] of req.headers.map) meta.requestHeaders.set(k, [...v]);
  const httpSettings = req.headers.first('settings');
  if (httpSettings !== undefined) {
    const s = parseSettingsValue(httpSettings);
    if (s) meta.settings = s;
  }
  let metadataMsgpack = false;
  if (metaPart && metaPart.body.length > 0) {
    const { data, msgpack } = decodeMetadata(metaPart);
    metadataMsgpack = msgpack;
    metaFromMetadata(data, meta, opts.log);
  }
  if (!msgPart || msgPart.body.length === 0) throw v3Error('ERR_V3_NO_MESSAGE', "missing 'message' part in v3 request");
  let message = msgPart.body;
  if (msgPart.encoding?.includes('zstd')) {
    try {
      message = zstdDecompressBounded(message, opts.maxMessage, undefined, 'message decompression error: ');
    } catch (err) {
      // v3 reports a bad part as a protocol error; an oversized one keeps its 413.
      if ((err as { code?: unknown }).code === 'ERR_DECOMPRESSION') throw v3Error('ERR_V3_DECOMPRESSION', (err as Error).message);
      throw err;
    }
  }
  if (msgPart.contentType && msgPart.contentType !== 'application/octet-stream') meta.contentType = msgPart.contentType;
  if (msgPart.filename !== undefined && meta.filename === undefined) meta.filename = msgPart.filename;
  const accept = req.headers.first('accept') ?? '';
  const acceptEnc = (req.headers.first('accept-encoding') ?? '').toLowerCase();
  return {
    message,
    meta,
    want: {
      layout: 'v2',
      msgpack: metadataMsgpack || accept.includes('application/x-msgpack') || accept.includes('application/msgpack'),
      compress: acceptEnc.includes('zstd') || meta.flags.has('zstd'),
      multipartType: accept.includes('multipart/form-data') ? 'multipart/form-data' : 'multipart/mixed',
    },
  };
}
