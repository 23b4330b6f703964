// Turns ScanOptions + message bytes into what goes on the wire: v2 headers and body, or a v3
// multipart body. Pure functions; the transport lives in scan-client.ts.
import { encode as msgpackEncode } from '@msgpack/msgpack';
import type { ScanOptions } from './types.js';
import { buildMultipart, newBoundary, type OutgoingPart } from './multipart.js';
import { hasZstdMagic, zstdCompress } from './zstd.js';
import { CLIENT_ERROR_CODES, ScanClientError } from './errors.js';

/** Header lines as [name, value] pairs, in send order; repeated names (Rcpt) stay separate. */
export type HeaderPairs = Array<[string, string]>;

export interface BuiltRequest {
  method: 'POST';
  path: string;
  headers: HeaderPairs;
  body: Buffer;
}

/**
 * A header value stays on its line: line breaks become spaces, other control characters `?`.
 * Text beyond ASCII is kept; the transports send it as UTF-8, which is how the server reads
 * request heads (scan-client.ts, crypt/envelope.ts).
 */
function headerSafe(value: string): string {
  // eslint-disable-next-line no-control-regex -- stripping control characters is the point
  return value.replace(/[\r\n\0]/g, ' ').replace(/[\x01-\x08\x0b-\x1f\x7f]/g, '?');
}

function settingsText(settings: ScanOptions['settings']): string | undefined {
  if (settings === undefined) return undefined;
  return typeof settings === 'string' ? settings : JSON.stringify(settings);
}

function flagList(opts: ScanOptions): string[] {
  const flags = new Set<string>(opts.flags ?? []);
  if (opts.passAll) flags.add('pass_all');
  if (opts.profile) flags.add('profile');
  if (opts.bodyBlock !== false) flags.add('body_block');
  return [...flags];
}

/** A `/checkv2` request carrying the options as headers. */
export function buildV2Request(message: Buffer, opts: ScanOptions): BuiltRequest {
  const h: HeaderPairs = [];
  const add = (name: string, value: string | undefined): void => {
    if (value !== undefined) h.push([name, headerSafe(value)]);
  };
  add('IP', opts.ip);
  add('From', opts.from);
  add('User', opts.user);
  for (const r of opts.rcpt ?? []) add('Rcpt', r);
  add('Deliver-To', opts.deliverTo);
  add('Helo', opts.helo);
  add('Hostname', opts.hostname);
  add('Queue-Id', opts.queueId);
  add('Password', opts.password);
  add('Settings', settingsText(opts.settings));
  add('Settings-ID', opts.settingsId);
  add('MTA-Tag', opts.mtaTag);
  add('MTA-Name', opts.mtaName);
  add('Log-Tag', opts.logTag);
  add('Filename', opts.filename);
  if (opts.raw) add('Raw', 'yes');
  if (opts.extendedUrls) add('URL-Format', 'extended');
  if (opts.msgpack) add('Accept', 'application/msgpack');
  let body = message;
  if (opts.compress) {
    // Input that is already a zstd frame goes as it is (as rspamc does).
    if (!hasZstdMagic(body)) body = zstdCompress(body);
    add('Compression', 'zstd');
    add('Content-Encoding', 'zstd');
    add('Accept-Encoding', 'zstd');
    add('Content-Type', 'application/x-compressed');
  } else {
    add('Content-Type', 'text/plain');
  }
  const flags = flagList(opts);
  if (flags.length) add('Flags', flags.join(','));
  for (const [name, value] of opts.headers ?? []) add(name, value);
  return { method: 'POST', path: opts.path ?? '/checkv2', headers: h, body };
}

/** The v3 metadata object for these options. */
export function v3Metadata(opts: ScanOptions): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) meta[key] = value;
  };
  set('ip', opts.ip);
  set('from', opts.from);
  if (opts.rcpt?.length) meta.rcpt = opts.rcpt;
  set('helo', opts.helo);
  set('hostname', opts.hostname);
  set('user', opts.user);
  set('deliver_to', opts.deliverTo);
  set('queue_id', opts.queueId);
  set('settings_id', opts.settingsId);
  set('log_tag', opts.logTag);
  if (opts.raw) meta.raw = true;
  if (opts.mtaTag !== undefined || opts.mtaName !== undefined) {
    meta.mta = { ...(opts.mtaTag !== undefined && { tag: opts.mtaTag }), ...(opts.mtaName !== undefined && { name: opts.mtaName }) };
  }
  // Names from the caller's -H options: no prototype, so `__proto__` stays a header (see
  // src/core/records.ts).
  const headers = Object.create(null) as Record<string, string | string[]>;
  if (opts.settings !== undefined) {
    if (typeof opts.settings === 'string') {
      // v3 wants an object; UCL text that is not JSON still reaches the server as a request header.
      try {
        const parsed: unknown = JSON.parse(opts.settings);
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) meta.settings = parsed;
        else headers.Settings = opts.settings;
      } catch {
        headers.Settings = opts.settings;
      }
    } else {
      meta.settings = opts.settings;
    }
  }
  const flags = flagList(opts);
  if (opts.extendedUrls && !flags.includes('ext_urls')) flags.push('ext_urls');
  if (flags.length) meta.flags = flags;
  for (const [name, value] of opts.headers ?? []) {
    const prev = headers[name];
    headers[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  if (Object.keys(headers).length) meta.headers = headers;
  return meta;
}

/** A `/checkv3` multipart request: metadata (JSON or msgpack) and the message part (zstd on demand). */
export function buildV3Request(message: Buffer, opts: ScanOptions): BuiltRequest {
  const boundary = newBoundary();
  const meta = v3Metadata(opts);
  let metaBody: Buffer;
  try {
    metaBody = opts.msgpack ? Buffer.from(msgpackEncode(meta)) : Buffer.from(JSON.stringify(meta));
  } catch (e) {
    throw new ScanClientError(CLIENT_ERROR_CODES.BAD_REQUEST, `cannot encode v3 metadata: ${(e as Error).message}`, { cause: e });
  }
  const parts: OutgoingPart[] = [
    { name: 'metadata', contentType: opts.msgpack ? 'application/msgpack' : 'application/json', body: metaBody },
  ];
  const messagePart: OutgoingPart = { name: 'message', contentType: 'application/octet-stream', body: message };
  if (opts.filename !== undefined) messagePart.filename = opts.filename;
  if (opts.compress) {
    messagePart.body = hasZstdMagic(message) ? message : zstdCompress(message);
    messagePart.contentEncoding = 'zstd';
  }
  parts.push(messagePart);
  const h: HeaderPairs = [
    ['Content-Type', `multipart/form-data; boundary=${boundary}`],
    ['Accept', 'multipart/form-data, multipart/mixed;q=0.9'],
  ];
  if (opts.compress) h.push(['Accept-Encoding', 'zstd']);
  if (opts.password !== undefined) h.push(['Password', headerSafe(opts.password)]);
  return { method: 'POST', path: opts.path ?? '/checkv3', headers: h, body: buildMultipart(boundary, parts) };
}
