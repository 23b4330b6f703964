// HTTP/1.x requests as editable structures, so mutators can change one field and serialize
// the rest faithfully (including lies the serializer would otherwise correct).
import type { Rng } from './rng.js';
import { AWKWARD_STRINGS, mutateString } from './mutate.js';

export interface RawRequest {
  method: string;
  target: string;
  version: string;
  headers: Array<[string, string]>;
  body: Buffer;
  /** Line ending of the head; mutators may make it LF or a bare CR. */
  eol: string;
  /** Content-Length written: 'auto' (the body's length unless a Content-Length header is present), or 'none'. */
  length: 'auto' | 'none';
}

export function request(method: string, target: string, headers: Array<[string, string]>, body: Buffer = Buffer.alloc(0)): RawRequest {
  return { method, target, version: 'HTTP/1.1', headers, body, eol: '\r\n', length: 'auto' };
}

/** Parses a captured request (fixtures' request.bin); undefined when it is not HTTP. */
export function parseRequest(bytes: Buffer): RawRequest | undefined {
  let end = bytes.indexOf('\r\n\r\n');
  let sep = 4;
  if (end < 0) {
    end = bytes.indexOf('\n\n');
    sep = 2;
  }
  if (end < 0) return undefined;
  const lines = bytes.toString('latin1', 0, end).split(/\r?\n/);
  const m = /^(\S+) (\S+)(?: (\S+))?$/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const headers: Array<[string, string]> = [];
  for (const l of lines.slice(1)) {
    const c = l.indexOf(':');
    if (c > 0) headers.push([l.slice(0, c), l.slice(c + 1).trim()]);
  }
  const chunked = headers.some(([n, v]) => n.toLowerCase() === 'transfer-encoding' && /chunked/i.test(v));
  let body = bytes.subarray(end + sep);
  if (chunked) body = dechunk(body) ?? body;
  return {
    method: m[1]!,
    target: m[2]!,
    version: m[3] ?? 'HTTP/1.0',
    headers: headers.filter(([n]) => !/^(content-length|transfer-encoding)$/i.test(n)),
    body,
    eol: '\r\n',
    length: 'auto',
  };
}

function dechunk(b: Buffer): Buffer | undefined {
  const out: Buffer[] = [];
  let pos = 0;
  for (let guard = 0; guard < 100_000; guard++) {
    const nl = b.indexOf('\r\n', pos);
    if (nl < 0) return undefined;
    const size = parseInt(b.toString('latin1', pos, nl).split(';')[0]!, 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(out);
    out.push(b.subarray(nl + 2, nl + 2 + size));
    pos = nl + 2 + size + 2;
  }
  return undefined;
}

export function header(r: RawRequest, name: string): string | undefined {
  const l = name.toLowerCase();
  return r.headers.find(([n]) => n.toLowerCase() === l)?.[1];
}

export function setHeader(r: RawRequest, name: string, value: string): void {
  const l = name.toLowerCase();
  r.headers = r.headers.filter(([n]) => n.toLowerCase() !== l);
  r.headers.push([name, value]);
}

export function serialize(r: RawRequest): Buffer {
  let head = `${r.method} ${r.target}${r.version ? ` ${r.version}` : ''}${r.eol}`;
  const hasLength = r.headers.some(([n]) => n.toLowerCase() === 'content-length');
  const chunked = r.headers.some(([n, v]) => n.toLowerCase() === 'transfer-encoding' && /chunked/i.test(v));
  if (r.length === 'auto' && !hasLength && !chunked && (r.body.length > 0 || r.method.toUpperCase() === 'POST')) head += `Content-Length: ${r.body.length}${r.eol}`;
  for (const [n, v] of r.headers) head += `${n}: ${v}${r.eol}`;
  head += r.eol;
  return Buffer.concat([Buffer.from(head, 'latin1'), r.body]);
}

const METHODS = ['GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'PATCH', 'CONNECT', 'TRACE', 'post', 'Get', '', 'POST POST', 'P'.repeat(5000), 'PRI', 'SPAMC/1.5'];
const VERSIONS = ['HTTP/1.0', 'HTTP/1.1', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', 'http/1.1', 'HTTP/1.1x', '', 'HTTP/', 'HTTP/1.', 'HTTP/11', 'HTTP/1.1 extra', 'RSPAMC/1.3', 'SPAMC/1.5'];

/** Mutations of the request line and the framing, common to every HTTP surface. */
export function mutateRequestLine(rng: Rng, r: RawRequest, paths: readonly string[]): void {
  switch (rng.int(5)) {
    case 0: r.method = rng.pick(METHODS); break;
    case 1: r.version = rng.pick(VERSIONS); break;
    case 2: r.target = rng.pick(paths); break;
    case 3: r.target = mutateString(rng, r.target); break;
    default: r.eol = rng.pick(['\n', '\r', '\r\n', '\n\r', '\r\r\n']);
  }
}

/** Content-Length lies and framing conflicts. */
export function lieAboutLength(rng: Rng, r: RawRequest): void {
  const n = r.body.length;
  r.headers = r.headers.filter(([h]) => h.toLowerCase() !== 'content-length');
  switch (rng.int(9)) {
    case 0: r.headers.push(['Content-Length', String(Math.max(0, n - rng.count(n + 1)))]); break;
    case 1: r.headers.push(['Content-Length', String(n + rng.count(100_000))]); break;
    case 2: r.headers.push(['Content-Length', rng.pick(['-1', '1e3', ` ${n}`, `${n} `, `+${n}`, `0x${n.toString(16)}`, `${n}, ${n}`, `${n},${n + 1}`, '18446744073709551616', '99999999999999999999', '', 'abc', `0${n}`])]); break;
    case 3: r.headers.push(['Content-Length', String(n)], ['Content-Length', String(n + 1)]); break;
    case 4: r.headers.push(['Content-Length', String(n)], ['Transfer-Encoding', 'chunked']); break;
    case 5: r.length = 'none'; break;
    case 6: r.headers.push(['Transfer-Encoding', rng.pick(['gzip', 'identity', 'chunked, identity', 'CHUNKED', ' chunked', 'chunked;q=1'])]); break;
    case 7: r.headers.push(['content-length', String(n)]); r.version = 'HTTP/1.0'; break;
    default: r.headers.push(['Content-Length', String(n)]); r.body = Buffer.concat([r.body, serialize(request('GET', '/ping', []))]);
  }
}

/** Header name mutations: case, whitespace, non-token bytes, obs-fold. */
export function mutateHeaderName(rng: Rng, name: string): string {
  switch (rng.int(7)) {
    case 0: return name.toUpperCase();
    case 1: return `${name} `;
    case 2: return ` ${name}`;
    case 3: return `${name}${rng.pick(['\0', '\x7f', '(', '@', 'é', '\t'])}`;
    case 4: return '';
    case 5: return name.repeat(rng.count(2000));
    default: return mutateString(rng, name);
  }
}

/** Many headers: one repeated, many distinct, or one huge value. */
export function headerFlood(rng: Rng, r: RawRequest, names: readonly string[]): void {
  const n = rng.count(20_000);
  switch (rng.int(4)) {
    case 0: { const h = rng.pick(names); const v = rng.pick(AWKWARD_STRINGS); for (let i = 0; i < n; i++) r.headers.push([h, v]); break; }
    case 1: for (let i = 0; i < n; i++) r.headers.push([`X-Fuzz-${i}`, String(i)]); break;
    case 2: r.headers.push([rng.pick(names), 'A'.repeat(rng.count(200_000))]); break;
    default: { const h = rng.pick(names); for (let i = 0; i < n; i++) r.headers.push([h, `${rng.str(4)}@example.${rng.str(2)}`]); }
  }
}
