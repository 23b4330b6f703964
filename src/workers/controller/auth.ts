// Controller authentication (controller.md §2.3): trusted peers (secure_ip with the
// forwarded-for rules), then the normal/enable passwords from the `Password` header or the
// `password` query parameter. Unlike Rspamd 3.4, every refusal is logged with the peer address
// and repeated failures from one address are throttled before any hash is computed.

import { BlockList, isIP } from 'node:net';
import { verifyPassword } from '../../crypto/password.js';
import type { Request } from '../../http/types.js';
import type { Logger } from '../../plugin-api/index.js';
import type { AuthLevel, ControllerSession } from './types.js';

/** Failures from one address within AUTH_FAIL_WINDOW_MS before it is throttled (Rspamd master's default). */
export const AUTH_FAIL_LIMIT = 10;
/** Window of the failure count; a throttled address is let in again once its failures age out. */
export const AUTH_FAIL_WINDOW_MS = 60_000;
/** Addresses tracked at once; bounds memory under a spray of sources (oldest dropped first). */
const AUTH_FAIL_MAX_TRACKED = 10_000;
/** Verified (reference, password) outcomes kept; hashed references cost ~0.5 s of CPU per check. */
const VERIFY_CACHE_MAX = 64;
/** Rspamd's stock example passwords: refused whatever is configured (§2.3 D.1). */
const DEFAULT_PASSWORDS = new Set(['q1', 'q2']);

export interface AuthConfig {
  password?: string;
  enablePassword?: string;
  /** Addresses and CIDRs (`10.0.0.0/8`, `::1`, `2001:db8::/32`). */
  secureIp: readonly string[];
  /** Failures per address per window before 429; 0 disables; AUTH_FAIL_LIMIT when absent. */
  failLimit?: number;
}

export type AuthOutcome =
  | { ok: true; session: ControllerSession }
  | { ok: false; status: 401 | 429; message: string };

/** `::ffff:1.2.3.4` → `1.2.3.4`; brackets and zone ids dropped. */
export function normaliseIp(addr: string): string {
  let a = addr.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (m) return m[1]!;
  const pct = a.indexOf('%');
  return pct >= 0 ? a.slice(0, pct) : a;
}

/** Compiles secure_ip entries; throws with the offending entry when one is not an address or CIDR. */
export function compileSecureIp(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const raw of entries) {
    const [addrPart, prefixPart] = raw.trim().split('/', 2) as [string, string | undefined];
    const addr = normaliseIp(addrPart);
    const family = isIP(addr);
    if (family === 0) throw new Error(`secure_ip: "${raw}" is not an IP address or CIDR range`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefixPart === undefined) {
      list.addAddress(addr, type);
      continue;
    }
    const prefix = Number(prefixPart);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
      throw new Error(`secure_ip: "${raw}" has an invalid prefix length`);
    }
    list.addSubnet(addr, prefix, type);
  }
  return list;
}

function matches(list: BlockList, addr: string): boolean {
  const a = normaliseIp(addr);
  const family = isIP(a);
  if (family === 0) return false;
  return list.check(a, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * A header as the client sent it. The transport also copies query parameters into the headers
 * (the scan protocol's rule), appending them after the real ones; the controller must tell a
 * `Password` header from a `password` parameter (§2.3 B), so it skips those copies.
 */
export function sentHeader(req: Request, lowerName: string): string | undefined {
  const real = req.headers.raw.length - req.query.size;
  for (let i = 0; i < real; i++) {
    const [k, v] = req.headers.raw[i]!;
    if (k.toLowerCase() === lowerName) return v;
  }
  return undefined;
}

/** The text after the last comma of a forwarded-for value (the hop closest to the trusted proxy). */
function lastHop(value: string): string {
  const i = value.lastIndexOf(',');
  return (i >= 0 ? value.slice(i + 1) : value).replace(/^[\s,]+/, '').trim();
}

export class Authenticator {
  readonly #cfg: AuthConfig;
  readonly #secure: BlockList | undefined;
  readonly #log: Logger;
  /** address → failure times (ms), oldest first. */
  readonly #failures = new Map<string, number[]>();
  /**
   * `reference \0 password` → outcome, filled only from requests that were let in, so only
   * genuine passwords are remembered (as Rspamd caches a password once it has matched).
   */
  readonly #verified = new Map<string, boolean>();

  constructor(cfg: AuthConfig, log: Logger) {
    this.#cfg = cfg;
    this.#secure = compileSecureIp(cfg.secureIp);
    this.#log = log;
  }

  /** Decides one request at `level` (never 'none': those routes skip authentication). */
  check(req: Request, level: Exclude<AuthLevel, 'none'>, now = Date.now()): AuthOutcome {
    const peer = normaliseIp(req.peer.address);
    const trusted = this.#trustedPeer(req, peer);
    if (trusted) return { ok: true, session: { peer, readOnly: false, via: 'secure_ip' } };
    if (this.#throttled(peer, now)) {
      this.#log.warn('controller authentication throttled', { peer, path: req.path });
      return { ok: false, status: 429, message: 'Too many authentication failures' };
    }
    const decided = this.#passwordCheck(req, level, peer);
    if (decided) return { ok: true, session: decided };
    this.#noteFailure(peer, now);
    this.#log.warn('controller authentication refused', { peer, path: req.path, level });
    return { ok: false, status: 401, message: 'Unauthorized' };
  }

  #trustedPeer(req: Request, peer: string): boolean {
    const secure = this.#secure;
    if (!secure || !matches(secure, peer)) return false;
    const xff = sentHeader(req, 'x-forwarded-for');
    const fwd = xff ?? sentHeader(req, 'x-real-ip');
    if (fwd === undefined) return true;
    const hop = xff !== undefined ? lastHop(fwd) : fwd.trim();
    return matches(secure, hop);
  }

  #passwordCheck(req: Request, level: 'normal' | 'enable', peer: string): ControllerSession | undefined {
    const given = sentHeader(req, 'password') ?? req.query.get('password');
    const computed = new Map<string, boolean>();
    const verify = (ref: string, pw: string): boolean => {
      const key = `${ref}\0${pw}`;
      const known = this.#verified.get(key) ?? computed.get(key);
      if (known !== undefined) return known;
      const ok = verifyPassword(ref, pw);
      computed.set(key, ok);
      return ok;
    };
    const session = this.#decide(given, level, peer, verify);
    if (session && computed.size) {
      for (const [k, v] of computed) {
        if (this.#verified.size >= VERIFY_CACHE_MAX) this.#verified.delete(this.#verified.keys().next().value!);
        this.#verified.set(k, v);
      }
    }
    return session;
  }

  #decide(given: string | undefined, level: 'normal' | 'enable', peer: string, check: (ref: string, pw: string) => boolean): ControllerSession | undefined {
    const { password, enablePassword } = this.#cfg;
    if (given === undefined) {
      if (this.#secure) return undefined;
      if (level === 'normal' && password === undefined) return { peer, readOnly: true, via: 'no_password' };
      if (level === 'enable' && password === undefined && enablePassword === undefined) return { peer, readOnly: false, via: 'no_password' };
      return undefined;
    }
    if (DEFAULT_PASSWORDS.has(given)) return undefined;
    if (level === 'enable') {
      const ref = enablePassword ?? password;
      if (ref === undefined || !check(ref, given)) return undefined;
      return { peer, readOnly: false, via: enablePassword !== undefined ? 'enable_password' : 'password' };
    }
    if (password !== undefined && check(password, given)) {
      const readOnly = enablePassword !== undefined && !check(enablePassword, given);
      return { peer, readOnly, via: 'password' };
    }
    if (enablePassword !== undefined && check(enablePassword, given)) return { peer, readOnly: false, via: 'enable_password' };
    return undefined;
  }

  #recent(peer: string, now: number): number[] {
    const list = this.#failures.get(peer);
    if (!list) return [];
    while (list.length && now - list[0]! > AUTH_FAIL_WINDOW_MS) list.shift();
    if (list.length === 0) this.#failures.delete(peer);
    return list;
  }

  #throttled(peer: string, now: number): boolean {
    const limit = this.#cfg.failLimit ?? AUTH_FAIL_LIMIT;
    return limit > 0 && this.#recent(peer, now).length >= limit;
  }

  #noteFailure(peer: string, now: number): void {
    const list = this.#recent(peer, now);
    if (list.length === 0) {
      if (this.#failures.size >= AUTH_FAIL_MAX_TRACKED) {
        const oldest = this.#failures.keys().next().value;
        if (oldest !== undefined) this.#failures.delete(oldest);
      }
      this.#failures.set(peer, list);
    }
    list.push(now);
  }
}
