// Reply framing in Rspamd's byte order: status line, Connection, Server, Date,
// Content-Length, Content-Type, then extra headers. Error replies are built here too so
// every layer produces the same `{"error","error_domain"}` shape.

import { classifyError, type ErrorDomain } from './errors.js';
import type { Reply } from './types.js';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  413: 'Request Entity Too Large',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  505: 'HTTP Version Not Supported',
};

let cachedDate = '';
let cachedSecond = -1;

/** RFC 1123 date, recomputed at most once a second (it is on every reply). */
export function httpDate(now = Date.now()): string {
  const sec = Math.floor(now / 1000);
  if (sec !== cachedSecond) {
    cachedSecond = sec;
    cachedDate = new Date(sec * 1000).toUTCString();
  }
  return cachedDate;
}

/** A reason phrase must stay on one line and within latin1 to be a valid status line. */
function safeReason(reason: string): string {
  let out = '';
  for (let i = 0; i < reason.length && out.length < 256; i++) {
    const c = reason.charCodeAt(i);
    out += c < 0x20 || c > 0x7e ? ' ' : reason[i];
  }
  return out;
}

/**
 * 1xx, 204 and 304 replies end at their header block (RFC 9110 §6.4.1): a body there would be
 * read by the client as the start of the next reply. Rspamd 3.4 sends its 204 learn refusals
 * with a body anyway; here the text travels in the reason phrase only.
 */
export function statusForbidsBody(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** The bytes to send after the head: none for a status that forbids a body. */
export function replyBodyBytes(reply: Reply): Buffer {
  if (statusForbidsBody(reply.status)) return Buffer.alloc(0);
  return typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
}

export function serializeReplyHead(reply: Reply, bodyLength: number, keepAlive: boolean, serverName: string): string {
  const reason = safeReason(reply.reason ?? STATUS_TEXT[reply.status] ?? 'Unknown');
  let head =
    `HTTP/1.1 ${reply.status} ${reason}\r\n` +
    `Connection: ${keepAlive ? 'keep-alive' : 'close'}\r\n` +
    `Server: ${serverName}\r\n` +
    `Date: ${httpDate()}\r\n`;
  // RFC 9110 §8.6: no Content-Length (nor a type: there is no content) on a bodiless status.
  if (!statusForbidsBody(reply.status)) {
    head += `Content-Length: ${bodyLength}\r\n`;
    if (reply.contentType) head += `Content-Type: ${reply.contentType}\r\n`;
  }
  if (reply.headers) for (const [k, v] of reply.headers) head += `${k}: ${v}\r\n`;
  return head + '\r\n';
}

/** Builds the JSON error reply for a message with an explicit status and domain. */
export function errorReply(status: number, message: string, domain: ErrorDomain, close = false): Reply {
  const body = JSON.stringify({ error: message, error_domain: domain });
  return { status, reason: message, contentType: 'application/json', body, close };
}

/**
 * Turns anything thrown into its reply through the one code table; unknown errors become
 * 500 and are handed to `onUnknown` (the error ring / log).
 */
export function replyForError(err: unknown, onUnknown?: (err: unknown) => void): Reply {
  const shape = classifyError(err);
  if (!shape.known && onUnknown) onUnknown(err);
  // Framing errors leave the byte stream in an unknown state: never reuse the connection.
  const close = shape.domain === 'transport-error' || !shape.known;
  return errorReply(shape.status, shape.message, shape.domain, close);
}
