// Rspamd's upstream list grammar (src/libutil/upstream.c): an optional
// rotation prefix, then elements separated by commas, semicolons or white space, each
// `host[:port[:priority]]`, `[v6][:port[:priority]]`, a bare IPv6 address, or an absolute unix
// socket path. Pure parsing: names are not resolved here (the connection resolves them).

import { isIP, isIPv6 } from 'node:net';

export type Rotation = 'round-robin' | 'random' | 'master-slave' | 'hash';

export const ROTATIONS: readonly Rotation[] = ['round-robin', 'random', 'master-slave', 'hash'];

/** Rspamd's scan port: an element without a port means this one. */
export const DEFAULT_UPSTREAM_PORT = 11333;

/** Elements in one list at most; a longer list is a pasted file, not a set of scanners. */
export const MAX_HOSTS_PER_LIST = 256;
/** Largest priority (round-robin weight, master-slave rank); higher only overflows the arithmetic. */
export const MAX_PRIORITY = 65_535;
/** Longest element: a host name is at most 253 characters, a socket path at most ~108. */
const MAX_ELEMENT_LENGTH = 300;

export type HostSpec =
  | { kind: 'tcp'; host: string; port: number; priority: number; /** `host:port` as written (the upstream `Host` header). */ name: string }
  | { kind: 'unix'; path: string; priority: number; name: string };

export interface HostList {
  /** The prefix's rotation, or undefined when the list has none (the caller's default applies). */
  rotation: Rotation | undefined;
  hosts: HostSpec[];
}

export type HostListParse = { ok: true; list: HostList } | { ok: false; error: string };

const SEPARATORS = /[,; \t\r\n]+/;
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/;

function parseNumber(text: string, what: string, min: number, max: number): number | string {
  if (!/^\d{1,6}$/.test(text)) return `${what} "${text}" is not a number`;
  const n = Number(text);
  if (n < min || n > max) return `${what} ${n} is outside ${min}..${max}`;
  return n;
}

/** One element; a string result is the reason it is not one. */
export function parseHostElement(el: string): HostSpec | string {
  if (el.length > MAX_ELEMENT_LENGTH) return `longer than ${MAX_ELEMENT_LENGTH} characters`;
  if (el.startsWith('/')) return { kind: 'unix', path: el, priority: 0, name: el };
  if (el.startsWith('.')) return 'a unix socket path must be absolute';
  let host: string;
  let rest: string[];
  if (el.startsWith('[')) {
    const close = el.indexOf(']');
    if (close < 0) return 'an IPv6 address opened with "[" is not closed';
    host = el.slice(1, close);
    if (!isIPv6(host)) return `"${host}" is not an IPv6 address`;
    const after = el.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) return `unexpected "${after}" after "]"`;
    rest = after === '' ? [] : after.slice(1).split(':');
  } else if (isIPv6(el)) {
    // A bare IPv6 address cannot carry a port: its colons are the address's own.
    host = el;
    rest = [];
  } else {
    const parts = el.split(':');
    host = parts[0]!;
    rest = parts.slice(1);
    if (host === '') return 'no host before ":"';
    if (isIP(host) === 0 && !HOSTNAME.test(host)) return `"${host}" is neither an IP address nor a host name`;
  }
  if (rest.length > 2) return 'too many ":" (host[:port[:priority]], IPv6 addresses in brackets)';
  let port = DEFAULT_UPSTREAM_PORT;
  let priority = 0;
  if (rest.length >= 1) {
    const p = parseNumber(rest[0]!, 'port', 1, 65_535);
    if (typeof p === 'string') return p;
    port = p;
  }
  if (rest.length === 2) {
    const w = parseNumber(rest[1]!, 'priority', 0, MAX_PRIORITY);
    if (typeof w === 'string') return w;
    priority = w;
  }
  const name = `${isIPv6(host) ? `[${host}]` : host}:${port}`;
  return { kind: 'tcp', host, port, priority, name };
}

/** Parses a `hosts` value; the error names the element at fault and why. */
export function parseHostList(text: string): HostListParse {
  let body = text.trim();
  let rotation: Rotation | undefined;
  for (const r of ROTATIONS) {
    if (body.length > r.length && body.slice(0, r.length + 1).toLowerCase() === `${r}:`) {
      rotation = r;
      body = body.slice(r.length + 1);
      break;
    }
  }
  const elements = body.split(SEPARATORS).filter((e) => e.length > 0);
  if (elements.length === 0) return { ok: false, error: 'no host in the list' };
  if (elements.length > MAX_HOSTS_PER_LIST) return { ok: false, error: `more than ${MAX_HOSTS_PER_LIST} hosts` };
  const hosts: HostSpec[] = [];
  const seen = new Set<string>();
  for (const el of elements) {
    const h = parseHostElement(el);
    if (typeof h === 'string') return { ok: false, error: `"${el}": ${h}` };
    if (seen.has(h.name)) return { ok: false, error: `"${el}": ${h.name} is listed twice` };
    seen.add(h.name);
    hosts.push(h);
  }
  return { ok: true, list: { rotation, hosts } };
}
