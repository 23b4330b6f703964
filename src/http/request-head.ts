// Parsing a complete request head (request line + header lines) into a ParsedRequest shell:
// HTTP/1.x request lines in origin- or absolute-form with query parameters turned into
// headers, and the legacy spamc/RSPAMC text request lines.

import { MailsiftError } from './errors.js';
import type { ParsedRequest } from './request-parser.js';
import { RequestHeaders } from './types.js';

const EMPTY = Buffer.alloc(0);

export function skipLeadingWs(s: string): string {
  let i = 0;
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  return i === 0 ? s : s.slice(i);
}

/** tchar of RFC 9110 §5.6.2; methods and header names must consist of these. */
function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok =
      (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ||
      c === 0x21 || (c >= 0x23 && c <= 0x27) || c === 0x2a || c === 0x2b || c === 0x2d || c === 0x2e ||
      c === 0x5e || c === 0x5f || c === 0x60 || c === 0x7c || c === 0x7e;
    if (!ok) return false;
  }
  return true;
}

/**
 * Methods accepted (any of them may carry a body; the router ignores the method for scans).
 * An unknown method means the peer is not speaking HTTP to us, as in Rspamd's parser.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'PATCH']);

export function parseHeadText(head: string): ParsedRequest {
  const lines = head.split('\n');
  let reqLine = lines[0]!;
  if (reqLine.endsWith('\r')) reqLine = reqLine.slice(0, -1);
  const legacy = legacyRequestLine(reqLine);
  if (legacy) return parseLegacyHead(legacy, lines);
  const sp1 = reqLine.indexOf(' ');
  const sp2 = reqLine.lastIndexOf(' ');
  if (sp1 <= 0 || sp2 === sp1) throw new MailsiftError('ERR_BAD_REQUEST_LINE', 'Malformed request line');
  const method = reqLine.slice(0, sp1);
  const target = reqLine.slice(sp1 + 1, sp2).trim();
  const version = reqLine.slice(sp2 + 1);
  if (!KNOWN_METHODS.has(method)) throw new MailsiftError('ERR_BAD_REQUEST_LINE', 'Unknown HTTP method');
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') {
    if (version.startsWith('HTTP/')) throw new MailsiftError('ERR_UNSUPPORTED_VERSION', 'HTTP version not supported');
    throw new MailsiftError('ERR_BAD_REQUEST_LINE', 'Malformed request line');
  }
  const headers = parseHeaderLines(lines);
  const { path, query } = parseTarget(target);
  for (const [k, v] of query) headers.set(k, v);
  const conn = (headers.last('connection') ?? '').toLowerCase();
  const keepAlive = version === 'HTTP/1.1' ? !conn.includes('close') : conn.includes('keep-alive');
  return { method, path, query, headers, version, body: EMPTY, closeDelimited: false, keepAlive };
}

export type LegacyDialect = 'spamc' | 'rspamc';

/**
 * The verbs of SpamAssassin's spamc protocol (Rspamd's RSPAMC dialect is the same line with
 * another token). Rspamd itself knows only CHECK and SYMBOLS; what the others do is the
 * worker's decision (src/protocol/legacy-command.ts), the transport only frames them.
 */
export const LEGACY_VERBS: ReadonlySet<string> = new Set(['CHECK', 'SYMBOLS', 'REPORT', 'REPORT_IFSPAM', 'PROCESS', 'HEADERS', 'PING', 'SKIP', 'TELL']);

export interface LegacyRequestLine {
  verb: string;
  token: string;
  dialect: LegacyDialect;
}

/**
 * `SYMBOLS SPAMC/1.2`, `CHECK RSPAMC/1.3`: a legacy verb, spaces, a token whose first letter
 * picks the dialect (S: spamc, R: rspamc; as in Rspamd, the rest of the line is not examined).
 * Any other verb followed by a full `SPAMC/` or `RSPAMC/` token is a legacy line too, so that
 * its refusal is answered in the client's dialect. Undefined for anything else (HTTP).
 */
export function legacyRequestLine(line: string): LegacyRequestLine | undefined {
  const sp = line.indexOf(' ');
  if (sp <= 0) return undefined;
  const verb = line.slice(0, sp);
  let at = sp;
  while (line.charCodeAt(at) === 32) at++;
  const end = line.indexOf(' ', at);
  const token = end < 0 ? line.slice(at) : line.slice(at, end);
  if (LEGACY_VERBS.has(verb)) {
    if (token[0] === 'S') return { verb, token, dialect: 'spamc' };
    if (token[0] === 'R') return { verb, token, dialect: 'rspamc' };
    return undefined;
  }
  if (end >= 0) return undefined;
  if (token.startsWith('SPAMC/')) return { verb, token, dialect: 'spamc' };
  if (token.startsWith('RSPAMC/')) return { verb, token, dialect: 'rspamc' };
  return undefined;
}

/** Framed by Content-length (none: no body); never kept alive (Exim reads until the server closes). */
function parseLegacyHead(line: LegacyRequestLine, lines: string[]): ParsedRequest {
  if (!LEGACY_VERBS.has(line.verb)) {
    throw new MailsiftError('ERR_LEGACY_COMMAND', `Unknown ${line.dialect} command: ${line.verb.slice(0, 32)}`);
  }
  const headers = parseHeaderLines(lines);
  return { method: line.verb, path: '', query: new Map(), headers, version: line.token, body: EMPTY, closeDelimited: false, keepAlive: false, legacy: line.dialect };
}

function parseHeaderLines(lines: string[]): RequestHeaders {
  const headers = new RequestHeaders();
  let prev: [string, number] | undefined;
  for (let i = 1; i < lines.length; i++) {
    let line = lines[i]!;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const c0 = line.charCodeAt(0);
    if (c0 === 32 || c0 === 9) {
      // Obsolete line folding: join onto the previous value with one space, as RFC 9112 §5.2 allows.
      if (!prev) throw new MailsiftError('ERR_BAD_HEADER', 'Header continuation without a header');
      // Both views of the headers get the joined value: parse-v2 walks `raw`, lookups read `map`.
      const list = headers.map.get(prev[0])!;
      const joined = list[list.length - 1] + ' ' + line.trim();
      list[list.length - 1] = joined;
      headers.raw[headers.raw.length - 1]![1] = joined;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MailsiftError('ERR_BAD_HEADER', 'Malformed header line');
    const name = line.slice(0, colon);
    if (!isToken(name)) throw new MailsiftError('ERR_BAD_HEADER', 'Malformed header name');
    headers.add(name, skipLeadingWs(line.slice(colon + 1)));
    prev = [name.toLowerCase(), 0];
  }
  return headers;
}

/** Origin-form or absolute-form target → path and query parameters. */
export function parseTarget(target: string): { path: string; query: Map<string, string> } {
  let rest = target;
  if (!rest.startsWith('/')) {
    const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(rest);
    if (!m) throw new MailsiftError('ERR_BAD_REQUEST_LINE', 'bad request URL');
    rest = rest.slice(m[0].length);
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  const query = new Map<string, string>();
  if (q < 0) return { path: rest, query };
  const qs = rest.slice(q + 1);
  for (const pair of qs.split('&')) {
    if (pair.length === 0) continue;
    const eq = pair.indexOf('=');
    const name = (eq < 0 ? pair : pair.slice(0, eq)).toLowerCase();
    let value = eq < 0 ? '' : percentDecode(pair.slice(eq + 1));
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    query.delete(name);
    query.set(percentDecode(name), value);
  }
  return { path: rest.slice(0, q), query };
}

function percentDecode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
