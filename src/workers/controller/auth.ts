// Controller authentication: trusted peers (secure_ip with the
// forwarded-for rules), then the normal/enable passwords from the `Password` header or the
// `password` query parameter. Unlike Rspamd 3.4, every refusal is logged with the peer address
// and password guessing from one address is throttled (Rspamd master's 10 per minute).
//
// What the throttle counts. Rspamd master counts every refusal and then
// answers 429 to everything from the address, correct passwords included, so a Prometheus job
// without a password, or a client with a stale one, locks the web UI on the same host out.
// Here only *guesses* count: distinct wrong passwords from an address within the window.
//  - A request without a password guesses nothing: it is refused (or let in, on an open
//    controller) but never counted and never answered 429.
//  - The same wrong password again guesses nothing new: it is refused from memory (no hash
//    computed) and counted once, so a misconfigured client cannot trip the throttle.
//  - A genuine password on an endpoint above its level (the read password on /saveactions)
//    is refused but is not a guess.
//  - secure_ip peers are let in before any of this and are never throttled.
// Once an address has made AUTH_FAIL_LIMIT distinct wrong guesses in the window, every
// request from it that carries a password gets 429 until they age out, without the password
// being looked at: that includes a correct one. Letting a correct password through would
// defeat the throttle: the difference between 200 and 429 tells a guesser which guess was
// right, at any rate it likes, so the limit would bound nothing (and every guess would cost a
// hash again). The only way to be locked out is to share an address with someone who made
// ten wrong guesses in the last minute.

import { createHmac, randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { verifyPassword } from '../../crypto/password.js';
import type { ControllerWorkerConfig } from '../../config/load.js';
import type { Request } from '../../http/types.js';
import type { Logger } from '../../plugin-api/index.js';
import type { AuthLevel, ControllerSession } from './types.js';

/** Distinct wrong passwords from one address within AUTH_FAIL_WINDOW_MS before it is throttled (Rspamd master's default). */
export const AUTH_FAIL_LIMIT = 10;
/** Window of a wrong guess; a throttled address is let in again once its guesses age out. */
export const AUTH_FAIL_WINDOW_MS = 60_000;
/** Addresses tracked at once; bounds memory under a spray of sources (oldest dropped first). */
const AUTH_FAIL_MAX_TRACKED = 10_000;
/** Verified (reference, password) outcomes kept; hashed references cost ~0.5 s of CPU per check. */
const VERIFY_CACHE_MAX = 64;
/** Rspamd's stock example passwords: refused whatever is configured. */
const DEFAULT_PASSWORDS = new Set(['q1', 'q2']);
/** Passwords are remembered only as keyed digests; the key lives in this process only. */
const FINGERPRINT_KEY = randomBytes(32);

function fingerprint(password: string): string {
  return createHmac('sha256', FINGERPRINT_KEY).update(password, 'utf8').digest('base64');
}

export interface AuthConfig {
  password?: string;
  enablePassword?: string;
  /** Addresses and CIDRs (`10.0.0.0/8`, `::1`, `2001:db8::/32`). */
  secureIp: readonly string[];
  /** Distinct wrong passwords per address per window before 429; 0 disables; AUTH_FAIL_LIMIT when absent. */
  failLimit?: number;
}

/** The authentication part of the controller's configuration. */
export function authConfigOf(c: ControllerWorkerConfig): AuthConfig {
  return {
    ...(c.password !== undefined ? { password: c.password } : {}),
    ...(c.enablePassword !== undefined ? { enablePassword: c.enablePassword } : {}),
    secureIp: c.secureIp,
    failLimit: c.authFailLimit,
  };
}

/**
 * What an administrator must be told when the controller is open to anyone who can reach it
 * without a password (logged at start, and in /auth); undefined when every level needs a
 * password or a secure_ip address.
 */
export function openAccessWarning(cfg: Pick<AuthConfig, 'password' | 'enablePassword' | 'secureIp'>): string | undefined {
  if (cfg.password !== undefined) return undefined;
  if (cfg.secureIp.length > 0) {
    return cfg.enablePassword === undefined
      ? `no controller password is configured: only secure_ip peers (${cfg.secureIp.join(', ')}) can use the controller`
      : undefined;
  }
  return cfg.enablePassword === undefined
    ? 'no controller password and no secure_ip are configured: anyone who can connect to the controller can read statistics and change thresholds, scores and maps'
    : 'no controller read password and no secure_ip are configured: anyone who can connect to the controller can read statistics and history and scan messages';
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
 * `Password` header from a `password` parameter, so it skips those copies.
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

/** The candidate password decided: a session, a genuine password below the level, or a wrong one. */
type Evaluation = ControllerSession | 'insufficient' | 'wrong';

export class Authenticator {
  readonly #cfg: AuthConfig;
  readonly #secure: BlockList | undefined;
  readonly #log: Logger;
  readonly #limit: number;
  /** address → fingerprint of each distinct wrong password → when it was first refused (ms). */
  readonly #guesses = new Map<string, Map<string, number>>();
  /**
   * `reference \0 fingerprint` → outcome, filled only from requests whose password was genuine
   * (let in, or a real password below the level), so a guesser cannot fill it.
   */
  readonly #verified = new Map<string, boolean>();

  constructor(cfg: AuthConfig, log: Logger) {
    this.#cfg = cfg;
    this.#secure = compileSecureIp(cfg.secureIp);
    this.#log = log;
    this.#limit = cfg.failLimit ?? AUTH_FAIL_LIMIT;
  }

  /** Decides one request at `level` (never 'none': those routes skip authentication). */
  check(req: Request, level: Exclude<AuthLevel, 'none'>, now = Date.now()): AuthOutcome {
    const peer = normaliseIp(req.peer.address);
    if (this.#trustedPeer(req, peer)) return { ok: true, session: { peer, readOnly: false, via: 'secure_ip' } };
    const given = sentHeader(req, 'password') ?? req.query.get('password');
    if (given === undefined) {
      const session = this.#withoutPassword(level, peer);
      if (session) return { ok: true, session };
      this.#log.info('controller authentication refused: no password', { peer, path: req.path, authLevel: level });
      return UNAUTHORIZED;
    }
    const fp = fingerprint(given);
    const guesses = this.#recentGuesses(peer, now);
    if (this.#limit > 0 && guesses && guesses.size >= this.#limit) return THROTTLED;
    if (guesses?.has(fp)) {
      this.#log.warn('controller authentication refused: the same wrong password again', { peer, path: req.path, authLevel: level });
      return UNAUTHORIZED;
    }
    const decided = this.#passwordCheck(given, fp, level, peer);
    if (typeof decided === 'object') return { ok: true, session: decided };
    if (decided === 'insufficient') {
      this.#log.warn('controller authentication refused: the password does not grant this level', { peer, path: req.path, authLevel: level });
      return UNAUTHORIZED;
    }
    this.#log.warn('controller authentication refused: wrong password', { peer, path: req.path, authLevel: level });
    this.#noteGuess(peer, fp, now);
    return UNAUTHORIZED;
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

  /**
   * Rspamd's password check, with one deliberate difference from 3.4: when no password at all is configured
   * (and no secure_ip), a normal-level session is not read-only, because enable-level
   * endpoints let it in too; 3.4 says read_only:true there and the web UI hides controls
   * that work. /auth and /stat now say what the session can do.
   */
  #withoutPassword(level: 'normal' | 'enable', peer: string): ControllerSession | undefined {
    const { password, enablePassword } = this.#cfg;
    if (this.#secure) return undefined;
    if (level === 'normal' && password === undefined) return { peer, readOnly: enablePassword !== undefined, via: 'no_password' };
    if (level === 'enable' && password === undefined && enablePassword === undefined) return { peer, readOnly: false, via: 'no_password' };
    return undefined;
  }

  #passwordCheck(given: string, fp: string, level: 'normal' | 'enable', peer: string): Evaluation {
    const computed = new Map<string, boolean>();
    const verify = (ref: string): boolean => {
      const key = `${ref}\0${fp}`;
      const known = this.#verified.get(key) ?? computed.get(key);
      if (known !== undefined) return known;
      const ok = verifyPassword(ref, given);
      computed.set(key, ok);
      return ok;
    };
    const outcome = this.#evaluate(given, level, peer, verify);
    if (outcome !== 'wrong') {
      for (const [k, v] of computed) {
        if (this.#verified.size >= VERIFY_CACHE_MAX) this.#verified.delete(this.#verified.keys().next().value!);
        this.#verified.set(k, v);
      }
    }
    return outcome;
  }

  /** One password against the level asked for; the stock example passwords never match. */
  #evaluate(given: string, level: 'normal' | 'enable', peer: string, check: (ref: string) => boolean): Evaluation {
    const { password, enablePassword } = this.#cfg;
    if (DEFAULT_PASSWORDS.has(given)) return 'wrong';
    if (level === 'enable') {
      const ref = enablePassword ?? password;
      if (ref !== undefined && check(ref)) return { peer, readOnly: false, via: enablePassword !== undefined ? 'enable_password' : 'password' };
      // Not a guess when it is the read password (only then can it differ from the reference).
      return enablePassword !== undefined && password !== undefined && check(password) ? 'insufficient' : 'wrong';
    }
    if (password !== undefined && check(password)) {
      const readOnly = enablePassword !== undefined && !check(enablePassword);
      return { peer, readOnly, via: 'password' };
    }
    if (enablePassword !== undefined && check(enablePassword)) return { peer, readOnly: false, via: 'enable_password' };
    return 'wrong';
  }

  /** The address's distinct wrong passwords still within the window (pruned), if any. */
  #recentGuesses(peer: string, now: number): Map<string, number> | undefined {
    const list = this.#guesses.get(peer);
    if (!list) return undefined;
    for (const [fp, t] of list) if (now - t > AUTH_FAIL_WINDOW_MS) list.delete(fp);
    if (list.size === 0) {
      this.#guesses.delete(peer);
      return undefined;
    }
    return list;
  }

  #noteGuess(peer: string, fp: string, now: number): void {
    // With the throttle off nothing is remembered: there is nothing to count towards.
    if (this.#limit <= 0) return;
    let list = this.#guesses.get(peer);
    if (!list) {
      if (this.#guesses.size >= AUTH_FAIL_MAX_TRACKED) {
        const oldest = this.#guesses.keys().next().value;
        if (oldest !== undefined) this.#guesses.delete(oldest);
      }
      this.#guesses.set(peer, (list = new Map()));
    }
    list.set(fp, now);
    if (list.size === this.#limit) {
      this.#log.warn('controller authentication throttled: too many wrong passwords from this address; its requests with a password get 429 until they age out', { peer, guesses: list.size, windowSeconds: AUTH_FAIL_WINDOW_MS / 1000 });
    }
  }
}

const UNAUTHORIZED: AuthOutcome = { ok: false, status: 401, message: 'Unauthorized' };
const THROTTLED: AuthOutcome = { ok: false, status: 429, message: 'Too many authentication failures' };
