// The scanner's reply → a scan result and, for a `body_block` reply, the rewritten body (as
// Rspamd's proxy reads it: proxy_backend_parse_results in rspamd_proxy.c). The
// HTTP status is not looked at: a 500 whose body is not a result fails for lack of JSON or of
// an `action`, like in Rspamd.

import type { RelayResponse } from '../relay-types.js';
import { isJsonObject, JsonSyntaxError, MAX_JSON_DEPTH, parseOrderedJson, type JsonObject, type JsonValue } from './ordered-json.js';

/** The parts of a result the milter reads; the rest (symbols, scores) is only syntax-checked. */
const RESULT_KEYS = new Set(['action', 'messages', 'milter', 'dkim-signature', 'subject']);

export type ReplyReading =
  | { ok: true; result: JsonObject; newBody?: Buffer }
  | { ok: false; reason: string };

function header(res: RelayResponse, name: string): string | undefined {
  const lc = name.toLowerCase();
  for (const [k, v] of res.headers) if (k.toLowerCase() === lc) return v;
  return undefined;
}

/**
 * Rspamd wants `Content-Type` to be exactly `application/json`; parameters such as
 * `; charset=utf-8` are accepted here too (a deliberate leniency: the body is the same JSON).
 */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

export function readScanReply(res: RelayResponse): ReplyReading {
  if (res.body.length === 0) return { ok: false, reason: `empty reply (HTTP ${res.status})` };
  if (!isJson(header(res, 'Content-Type'))) return { ok: false, reason: `reply is not JSON (HTTP ${res.status}, Content-Type ${header(res, 'Content-Type') ?? 'none'})` };
  let json = res.body;
  let newBody: Buffer | undefined;
  const offset = header(res, 'Message-Offset');
  if (offset !== undefined && /^\s*\d+\s*$/.test(offset)) {
    const n = Number(offset);
    // Rspamd uses the offset only when something follows it.
    if (n < res.body.length) {
      json = res.body.subarray(0, n);
      newBody = res.body.subarray(n);
    }
  }
  let result;
  try {
    result = parseResult(json.toString('utf8'));
  } catch (err) {
    if (err instanceof JsonSyntaxError || err instanceof SyntaxError) return { ok: false, reason: `reply JSON does not parse: ${err.message}` };
    throw err;
  }
  if (!result) return { ok: false, reason: 'reply JSON is not an object' };
  return newBody ? { ok: true, result, newBody } : { ok: true, result };
}

const INDEX_LIKE = /^(?:0|[1-9]\d*)$/;

/**
 * JSON.parse is three times faster than the order-keeping reader, and its objects keep the
 * document order of every key that does not look like an array index. So: JSON.parse, and
 * only when a wanted part of the result holds an index-like key ("1", a header named "42"),
 * read the text again keeping the order. Values past MAX_JSON_DEPTH count as a syntax error
 * here too.
 */
function parseResult(text: string): JsonObject | undefined {
  const raw: unknown = JSON.parse(text);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const out: JsonObject = new Map();
  let reparse = false;
  const convert = (v: unknown, depth: number): JsonValue => {
    if (depth > MAX_JSON_DEPTH) throw new JsonSyntaxError('nesting too deep', 0);
    if (v === null || typeof v !== 'object') return v as JsonValue;
    if (Array.isArray(v)) return v.map((x) => convert(x, depth + 1));
    const m: JsonObject = new Map();
    for (const [k, x] of Object.entries(v)) {
      if (INDEX_LIKE.test(k)) reparse = true;
      m.set(k, convert(x, depth + 1));
    }
    return m;
  };
  for (const [k, v] of Object.entries(raw)) if (RESULT_KEYS.has(k)) out.set(k, convert(v, 1));
  if (!reparse) return out;
  const ordered = parseOrderedJson(text, { keepTopLevel: RESULT_KEYS });
  return isJsonObject(ordered) ? ordered : undefined;
}
