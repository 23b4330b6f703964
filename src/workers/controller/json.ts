// Controller reply bodies as Rspamd 3.4 writes them: compact
// JSON where fields typed "double" keep their decimal form (`15.0`, `0.000323`), and the error
// body `{"error":"<text>"}`. Every family builds its replies with these helpers so the framing
// (content types, reason phrases) is decided in one place.

import { statusForbidsBody } from '../../http/reply.js';
import type { Reply } from '../../http/types.js';

/** Marks a number that Rspamd emits as a C double (`4.0`, `8.875000`), not as an integer. */
export class Double {
  constructor(readonly value: number) {}
}

export const dbl = (v: number): Double => new Double(v);

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** Rspamd's number format: one decimal when integral within int32, six otherwise, null for NaN/±Infinity. */
export function formatDouble(v: number): string {
  if (!Number.isFinite(v)) return 'null';
  if (Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX) return `${v}.0`;
  return v.toFixed(6);
}

/** JSON.stringify with Double support; key order is insertion order, no whitespace. */
export function renderJson(value: unknown): string {
  if (value instanceof Double) return formatDouble(value.value);
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(renderJson).join(',')}]`;
      let out = '';
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v === undefined) continue;
        out += `${out ? ',' : ''}${JSON.stringify(k)}:${renderJson(v)}`;
      }
      return `{${out}}`;
    }
    default:
      return 'null';
  }
}

export const JSON_TYPE = 'application/json';

export function jsonReply(value: unknown): Reply {
  return { status: 200, contentType: JSON_TYPE, body: renderJson(value) };
}

export const SUCCESS_BODY = '{"success":true}';

export function successReply(): Reply {
  return { status: 200, contentType: JSON_TYPE, body: SUCCESS_BODY };
}

/**
 * Rspamd's controller error reply: reason phrase = text, body `{"error":"<text>"}`. Rspamd 3.4 inserts
 * the text unescaped; here it is a JSON string, because texts carry request data (a Classifier
 * header, a Message-ID, a plugin's message) that could otherwise end the string and add keys
 * (`"success":true`) or make the body unparseable. For the ordinary texts (printable ASCII
 * without `"` or `\`) the bytes are the same as 3.4's.
 */
export function controllerError(status: number, text: string): Reply {
  // A 204 (learn refusals) may not carry a body; 3.4 sends one, which is invalid HTTP. The text
  // stays in the reason phrase, which is what the web UI shows.
  if (statusForbidsBody(status)) return { status, reason: text, body: '' };
  return { status, reason: text, contentType: JSON_TYPE, body: `{"error":${JSON.stringify(text)}}` };
}

/** A coded error a family throws; index.ts turns it into ERR(status, message). */
export class ControllerError extends Error {
  readonly code = 'ERR_CONTROLLER';
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'ControllerError';
  }
}

/** Replies Rspamd never gzips even when the client accepts it (scan results). */
const UNCOMPRESSED = new WeakSet<Reply>();

export function markUncompressed(reply: Reply): Reply {
  UNCOMPRESSED.add(reply);
  return reply;
}

export function isUncompressed(reply: Reply): boolean {
  return UNCOMPRESSED.has(reply);
}
