// Typed values flowing through a selector pipeline. Rspamd's types are kept by
// name: strings, tables (plain records: addresses, headers, Received hops, symbols) and
// "userdata" (objects with methods: URLs, e-mail addresses found in text, IP addresses), each
// alone or as a list. Implicit conversion to text follows Rspamd: a table gives its `value`
// field, else its `addr` field, else a dump; an object gives its text form.

import type { FoundUrl } from '../message/types.js';

export type SelectorType = 'string' | 'string_list' | 'table' | 'table_list' | 'userdata' | 'userdata_list';

/** A plain record, read with `:field` (numeric names index arrays, 1-based). */
export type SelectorTable = { [key: string]: unknown };

/** An object with methods, called with `:name(args)` or `apply_methods`. */
export interface SelectorObject {
  /** Text form used by the implicit conversion (URL text, address text). */
  toString(): string;
  /** The method's result, or undefined when the object has no such method. */
  call(name: string, args: readonly string[]): unknown;
}

export interface Typed {
  value: unknown;
  type: SelectorType;
}

export function listElemType(t: SelectorType): 'string' | 'table' | 'userdata' | undefined {
  if (t === 'string_list') return 'string';
  if (t === 'table_list') return 'table';
  if (t === 'userdata_list') return 'userdata';
  return undefined;
}

export function isSelectorObject(v: unknown): v is SelectorObject {
  return typeof v === 'object' && v !== null && typeof (v as SelectorObject).call === 'function';
}

/** Longest dump of a table without `value`/`addr` (a dump is a debugging aid, not data). */
const MAX_TABLE_DUMP_CHARS = 4096;

function dumpTable(t: SelectorTable): string {
  let s: string;
  try {
    s = JSON.stringify(t, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v instanceof Set ? [...v] : v)) ?? '';
  } catch {
    s = '{…}';
  }
  return s.length > MAX_TABLE_DUMP_CHARS ? s.slice(0, MAX_TABLE_DUMP_CHARS) : s;
}

/** Rspamd's `implicit_tostring` for one element of the given scalar type. */
export function implicitString(type: 'string' | 'table' | 'userdata', v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (type === 'table' && typeof v === 'object' && !isSelectorObject(v)) {
    const t = v as SelectorTable;
    if (typeof t.value === 'string' && t.value !== '') return t.value;
    if (typeof t.addr === 'string' && t.addr !== '') return t.addr;
    return dumpTable(t);
  }
  return String(v);
}

/** A method result as a typed value: strings stay strings, arrays become string lists. */
export function methodResult(ret: unknown): Typed | undefined {
  if (ret === undefined || ret === null) return undefined;
  if (typeof ret === 'string') return { value: ret, type: 'string' };
  if (Array.isArray(ret)) return { value: ret.filter((x) => x !== undefined && x !== null).map((x) => (typeof x === 'string' ? x : String(x))), type: 'string_list' };
  if (typeof ret === 'object' && !isSelectorObject(ret)) return { value: implicitString('table', ret), type: 'string' };
  return { value: String(ret), type: 'string' };
}

/** Lua's `tostring(boolean)` spelling; booleans from methods read as 'true'/'false'. */
function boolText(b: boolean): string {
  return b ? 'true' : 'false';
}

/** A URL found in the message (the `urls`, `specific_urls` extractors). */
export class UrlObject implements SelectorObject {
  constructor(readonly url: FoundUrl) {}
  toString(): string {
    return this.url.url;
  }
  #parsed(): URL | undefined {
    try {
      return new URL(this.url.url);
    } catch {
      return undefined;
    }
  }
  call(name: string): unknown {
    const u = this.url;
    switch (name) {
      case 'get_host':
        return u.host;
      case 'get_tld':
        return u.tld ?? u.host;
      case 'get_text':
      case 'get_raw':
        return u.url;
      case 'get_scheme':
      case 'get_protocol':
        return u.scheme;
      case 'get_path': {
        const p = this.#parsed()?.pathname;
        return p === undefined ? undefined : p.replace(/^\//, '');
      }
      case 'get_query': {
        const q = this.#parsed()?.search;
        return q ? q.slice(1) : undefined;
      }
      case 'get_fragment': {
        const f = this.#parsed()?.hash;
        return f ? f.slice(1) : undefined;
      }
      case 'get_port': {
        const p = this.#parsed()?.port;
        return p ? p : undefined;
      }
      case 'get_user': {
        const user = this.#parsed()?.username;
        return user ? decodeURIComponent(user) : undefined;
      }
      case 'get_flags':
        return [...u.flags];
      case 'is_phished':
        return boolText(u.flags.has('phished'));
      case 'is_redirected':
        return boolText(u.flags.has('redirected'));
      case 'is_obscured':
        return boolText(u.flags.has('obscured'));
      case 'is_html_displayed':
        return boolText(u.flags.has('html_displayed'));
      case 'is_subject':
        return boolText(u.flags.has('subject'));
      default:
        return undefined;
    }
  }
}

/** An e-mail address found in the body (the `emails` extractor): Rspamd models it as a URL. */
export class EmailObject implements SelectorObject {
  constructor(readonly user: string, readonly host: string, readonly tld: string) {}
  toString(): string {
    return `${this.user}@${this.host}`;
  }
  call(name: string): unknown {
    switch (name) {
      case 'get_host':
        return this.host;
      case 'get_user':
        return this.user;
      case 'get_tld':
        return this.tld;
      case 'get_text':
      case 'get_raw':
        return this.toString();
      case 'get_scheme':
      case 'get_protocol':
        return 'mailto';
      default:
        return undefined;
    }
  }
}

/** The sender's IP address (the `ip` extractor). */
export class IpObject implements SelectorObject {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
  call(name: string): unknown {
    switch (name) {
      case 'to_string':
        return this.text;
      case 'get_version':
        return this.text.includes(':') ? '6' : '4';
      case 'is_valid':
        return 'true';
      case 'is_local':
        return boolText(/^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|::1$|f[cd]|fe80:)/i.test(this.text));
      default:
        return undefined;
    }
  }
}

/** Lua string methods reachable as `:name` on a string value (`header(X):lower`). */
export function stringMethod(s: string, name: string, args: readonly string[]): unknown {
  switch (name) {
    case 'lower':
      return s.toLowerCase();
    case 'upper':
      return s.toUpperCase();
    case 'len':
      return String(Buffer.byteLength(s, 'utf8'));
    case 'reverse':
      return [...s].reverse().join('');
    case 'sub':
      return luaSub(s, Number(args[0] ?? 1), args[1] === undefined ? -1 : Number(args[1]));
    default:
      return undefined;
  }
}

/** Lua's `string.sub` on bytes: 1-based, inclusive, negative counts from the end. */
export function luaSub(s: string, i: number, j: number): string {
  const b = Buffer.from(s, 'utf8');
  const len = b.length;
  let start = Number.isFinite(i) ? Math.trunc(i) : 1;
  let end = Number.isFinite(j) ? Math.trunc(j) : -1;
  if (start < 0) start = Math.max(len + start + 1, 1);
  else if (start === 0) start = 1;
  if (end < 0) end = len + end + 1;
  else if (end > len) end = len;
  if (start > end) return '';
  return b.subarray(start - 1, end).toString('utf8');
}
