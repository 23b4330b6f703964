// Decodes a scan reply, whatever shape the server chose: whole-body zstd, JSON or msgpack,
// a `Message-Offset` body block after the result (v2), or a multipart reply with `result`
// and `body` parts, each possibly zstd-compressed (v3).
import { decode as msgpackDecode } from '@msgpack/msgpack';
import { CLIENT_ERROR_CODES, ScanClientError } from './errors.js';
import { boundaryOf, parseMultipart } from './multipart.js';
import type { ScanReply, ScanResultBody } from './types.js';
import { namesZstd, zstdDecompress } from './zstd.js';

export type ReplyHeaders = Record<string, string | string[] | undefined>;

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function badReply(message: string, cause?: unknown): ScanClientError {
  return new ScanClientError(CLIENT_ERROR_CODES.BAD_REPLY, message, cause === undefined ? {} : { cause });
}

function unzstd(buf: Buffer, what: string): Buffer {
  try {
    return zstdDecompress(buf);
  } catch (e) {
    throw badReply(`cannot decompress ${what}: ${(e as Error).message}`, e);
  }
}

function isMsgpack(contentType: string | undefined): boolean {
  return contentType !== undefined && /msgpack/i.test(contentType);
}

function decodeResult(bytes: Buffer, msgpack: boolean): ScanResultBody {
  let value: unknown;
  try {
    value = msgpack ? msgpackDecode(bytes) : JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw badReply(`cannot parse ${msgpack ? 'msgpack' : 'JSON'} result: ${(e as Error).message}`, e);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badReply('the scan result is not an object');
  }
  return value as ScanResultBody;
}

/** The server's error text for a non-2xx reply: the `error` field when the body has one. */
export function errorText(status: number, reason: string | undefined, headers: ReplyHeaders, body: Buffer): string {
  let bytes = body;
  if (namesZstd(first(headers['compression'])) || namesZstd(first(headers['content-encoding']))) {
    try { bytes = zstdDecompress(body); } catch { /* keep the raw bytes: the reason phrase still says enough */ }
  }
  try {
    const v: unknown = isMsgpack(first(headers['content-type'])) ? msgpackDecode(bytes) : JSON.parse(bytes.toString('utf8'));
    if (typeof v === 'object' && v !== null && typeof (v as { error?: unknown }).error === 'string') {
      return (v as { error: string }).error;
    }
  } catch { /* not an error object: fall back to the reason phrase */ }
  return reason || `HTTP ${status}`;
}

/** Decode a 2xx reply body into a ScanReply (elapsedMs is filled in by the caller). */
export function decodeReply(status: number, headers: ReplyHeaders, rawBody: Buffer): Omit<ScanReply, 'elapsedMs'> {
  let body = rawBody;
  if (namesZstd(first(headers['compression'])) || namesZstd(first(headers['content-encoding']))) {
    body = unzstd(body, 'reply body');
  }
  const contentType = first(headers['content-type']) ?? 'application/json';
  if (/^multipart\//i.test(contentType)) {
    const boundary = boundaryOf(contentType);
    if (!boundary) throw badReply(`multipart reply without a boundary: ${contentType}`);
    let parts;
    try {
      parts = parseMultipart(body, boundary);
    } catch (e) {
      throw badReply(`cannot parse multipart reply: ${(e as Error).message}`, e);
    }
    const resultPart = parts.find((p) => p.name === 'result');
    if (!resultPart) throw badReply('multipart reply has no "result" part');
    const resultBytes = namesZstd(resultPart.contentEncoding) ? unzstd(resultPart.body, 'result part') : resultPart.body;
    const msgpack = isMsgpack(resultPart.contentType);
    const reply: Omit<ScanReply, 'elapsedMs'> = {
      status, headers, resultBytes, resultFormat: msgpack ? 'msgpack' : 'json', result: decodeResult(resultBytes, msgpack),
    };
    const bodyPart = parts.find((p) => p.name === 'body');
    if (bodyPart) reply.rewritten = namesZstd(bodyPart.contentEncoding) ? unzstd(bodyPart.body, 'body part') : bodyPart.body;
    return reply;
  }
  let resultBytes = body;
  let rewritten: Buffer | undefined;
  const offsetHeader = first(headers['message-offset']);
  if (offsetHeader !== undefined) {
    const offset = Number(offsetHeader);
    if (!Number.isInteger(offset) || offset < 0 || offset > body.length) {
      throw badReply(`Message-Offset ${offsetHeader} is outside the ${body.length}-byte reply`);
    }
    resultBytes = body.subarray(0, offset);
    rewritten = body.subarray(offset);
  }
  const msgpack = isMsgpack(contentType);
  const reply: Omit<ScanReply, 'elapsedMs'> = {
    status, headers, resultBytes, resultFormat: msgpack ? 'msgpack' : 'json', result: decodeResult(resultBytes, msgpack),
  };
  if (rewritten !== undefined) reply.rewritten = rewritten;
  return reply;
}
