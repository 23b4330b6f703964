// Value types that appear in several config keys: sizes ("50M"), durations ("8s"), listen
// addresses ("127.0.0.1:11333"), server addresses, Unix-domain socket paths. Each parser returns undefined (or false) for
// a bad value so the schema can report what was expected instead of guessing a fallback.

import { isIPv6 } from 'node:net';

const SIZE_RE = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(i?b)?\s*$/i;
const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** Bytes from a non-negative integer or a string like `50M`, `512k`, `1.5GiB` (binary units, as Rspamd). */
export function parseSize(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = SIZE_RE.exec(v);
  if (!m) return undefined;
  const n = Math.floor(Number(m[1]) * (SIZE_UNITS[(m[2] ?? '').toLowerCase()] ?? 1));
  return Number.isSafeInteger(n) ? n : undefined;
}

const DURATION_RE = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h)?\s*$/i;
const DURATION_UNITS: Record<string, number> = { ms: 0.001, s: 1, '': 1, m: 60, min: 60, h: 3600 };

/** Seconds from a non-negative number or a string like `8s`, `500ms`, `2min`. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = DURATION_RE.exec(v);
  if (!m) return undefined;
  return Number(m[1]) * (DURATION_UNITS[(m[2] ?? '').toLowerCase()] ?? 1);
}

export interface ListenAddress {
  host: string;
  port: number;
}

const MAX_PORT = 65535;

/** `host:port`, `[v6]:port` or `*:port` (all interfaces). Port 0 asks the OS for a free port. */
export function parseBind(v: unknown): ListenAddress | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(v.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > MAX_PORT) return undefined;
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '*' ? '0.0.0.0' : host, port };
}

/**
 * A server to connect to as the Redis stores read it: `host`, `host:port`, `[v6]`, `[v6]:port`
 * or a bare IPv6 address (the default port is the service's own).
 */
export function isServerAddress(v: string): boolean {
  if (isIPv6(v)) return true;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]/]+))(?::(\d{1,5}))?$/.exec(v);
  if (!m) return false;
  if (m[1] !== undefined && !isIPv6(m[1])) return false;
  const port = m[3] === undefined ? 1 : Number(m[3]);
  return port >= 1 && port <= MAX_PORT;
}

/**
 * Longest Unix-domain socket path, in bytes: Linux's `sun_path` holds 108 with the terminating
 * NUL. libuv cuts a longer path short without a word, which could reach another socket.
 */
export const MAX_SOCKET_PATH_BYTES = 107;

/** A host naming a Unix-domain socket rather than a network peer. */
export function isSocketPath(host: string): host is `/${string}` {
  return host.startsWith('/');
}

/** Why `path` cannot be a socket address, or undefined when it can. */
export function socketPathProblem(path: string): string | undefined {
  if (path.includes('\0')) return 'the socket path contains a NUL byte';
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) return `the socket path is ${bytes} bytes, longer than the ${MAX_SOCKET_PATH_BYTES} a socket address holds`;
  return undefined;
}
