// The fuzzy storage worker: answers Rspamd's UDP fuzzy protocol, plain and
// encrypted, from a FuzzyStore, so Rspamd scanners can use mailsift's storage.
import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';
import type { KexKeypair } from '../crypto/keypair.js';
import type { Logger } from '../core/logger.js';
import type { FuzzyStore } from '../storage/types.js';
import { FuzzyServerStats } from './server-stats.js';
import {
  FUZZY_CHECK, FUZZY_DEL, FUZZY_PING, FUZZY_STAT, FUZZY_WRITE, MAX_PACKET_BYTES, V2_CAPABILITY,
  decodeCommand, encodeReply, replyLayoutFor, type FuzzyCommand, type FuzzyReply,
} from '../rule-libs/fuzzy/wire.js';
import { decryptCommand, encryptReply, isEncrypted } from '../rule-libs/fuzzy/wire-crypt.js';

/** Default lifetime of a stored hash: 2 days, as Rspamd's `expire`. */
export const DEFAULT_EXPIRE_SECONDS = 172_800;
/** A check this confident re-arms the entry's expiry (REFRESH), so live spam stays stored. */
const REFRESH_PROB = 0.9;
/** How often expired entries are purged. */
const EXPIRE_INTERVAL_MS = 60_000;

export const FUZZY_SKIPPED = 401;
export const FUZZY_ENCRYPTION_REQUIRED = 415;
export const FUZZY_FORBIDDEN = 503;
/**
 * The store failed or did not answer in time (Rspamd's fuzzy storage answers 500 for its own
 * errors): a check reads "not found" at once instead of waiting for the client's retries, and a
 * write or delete is refused, so the learn is not acknowledged.
 */
export const FUZZY_STORE_ERROR = 500;
/** A store outage is logged once per this period, not once per request. */
const STORE_ERROR_LOG_MS = 30_000;

function isStoreError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'STORE_UNAVAILABLE' || code === 'STORE_FAILED';
}

export interface FuzzyServerOptions {
  store: FuzzyStore;
  /** The store as CHECK (on scanners' scan path) uses it, bounded by the scan time-out; `store` when absent. */
  checkStore?: FuzzyStore;
  /** `host:port`; default 127.0.0.1:11335. Port 0 picks a free port. */
  bind?: string;
  keypairs?: KexKeypair[];
  encryptedOnly?: boolean;
  /** Client addresses or CIDR ranges allowed to WRITE/DEL. */
  allowUpdate?: string[];
  readOnly?: boolean;
  expireSeconds?: number;
  /** Hex digests never reported (CHECK → 401) nor stored. */
  skipHashes?: string[];
  log?: Logger;
}

export interface FuzzyServer {
  readonly address: { host: string; port: number };
  stats(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseRanges(list: readonly string[]): Range[] {
  const out: Range[] = [];
  for (const item of list) {
    const s = item === 'localhost' ? '127.0.0.1/8' : item;
    try {
      out.push(s.includes('/') ? ipaddr.parseCIDR(s) : (() => { const a = ipaddr.parse(s); return [a, a.kind() === 'ipv4' ? 32 : 128] as Range; })());
    } catch {
      throw new RangeError(`fuzzy: allow_update entry is not an address or range: ${item}`);
    }
  }
  return out;
}

function inRanges(ip: string, ranges: readonly Range[]): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let a = ipaddr.parse(ip);
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
  return ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
}

function splitBind(bind: string): { host: string; port: number } {
  const i = bind.lastIndexOf(':');
  const host = bind.slice(0, i).replace(/^\[|\]$/g, '') || '127.0.0.1';
  return { host: host === '*' ? '0.0.0.0' : host, port: Number(bind.slice(i + 1)) };
}

function epochIndex(version: number): number {
  const v = version & ~V2_CAPABILITY;
  return v === 3 ? 0 : v === 4 && !(version & V2_CAPABILITY) ? 1 : 2;
}

/** Start a fuzzy storage worker; resolves once the socket is bound. */
export async function startFuzzyServer(opts: FuzzyServerOptions): Promise<FuzzyServer> {
  const { host, port } = splitBind(opts.bind ?? '127.0.0.1:11335');
  const store = opts.store;
  const checkStore = opts.checkStore ?? store;
  let lastStoreLog = 0;
  let unloggedStoreErrors = 0;
  /** The reply to a command whose store call failed; anything but a store failure is a bug and rethrown. */
  const storeFailed = (err: unknown, cmd: FuzzyCommand, base: FuzzyReply): FuzzyReply => {
    if (!isStoreError(err)) throw err;
    const now = Date.now();
    if (now - lastStoreLog >= STORE_ERROR_LOG_MS) {
      lastStoreLog = now;
      opts.log?.warn('fuzzy storage: store unavailable, answering 500', { err: String(err), cmd: cmd.cmd, ...(unloggedStoreErrors ? { failuresSinceLastLog: unloggedStoreErrors } : {}) });
      unloggedStoreErrors = 0;
    } else unloggedStoreErrors++;
    return { ...base, value: FUZZY_STORE_ERROR };
  };
  const keypairs = opts.keypairs ?? [];
  const allow = parseRanges(opts.allowUpdate ?? ['127.0.0.1', '::1']);
  const skip = new Set((opts.skipHashes ?? []).map((h) => h.toLowerCase()));
  const expire = opts.expireSeconds ?? DEFAULT_EXPIRE_SECONDS;
  const stats = new FuzzyServerStats();
  const sock = dgram.createSocket(ipaddr.isValid(host) && ipaddr.parse(host).kind() === 'ipv6' ? 'udp6' : 'udp4');

  async function answer(cmd: FuzzyCommand, ip: string, keyName: string, encrypted: boolean): Promise<FuzzyReply | undefined> {
    const hex = cmd.digest.toString('hex');
    const base: FuzzyReply = { value: 0, flag: 0, tag: cmd.tag, prob: 0 };
    if (opts.encryptedOnly && !encrypted) return { ...base, value: FUZZY_ENCRYPTION_REQUIRED };
    switch (cmd.cmd) {
      case FUZZY_CHECK: {
        const epoch = epochIndex(cmd.version);
        stats.checked[epoch]!++;
        if (cmd.shingles) stats.shingles[epoch]!++;
        stats.count(keyName, ip, 0, 'checked');
        if (skip.has(hex)) return { ...base, value: FUZZY_SKIPPED };
        let m: Awaited<ReturnType<FuzzyStore['check']>>;
        try {
          m = await checkStore.check(hex, cmd.shingles);
        } catch (err) {
          stats.count(keyName, ip, 0, 'errors');
          return storeFailed(err, cmd, base);
        }
        if (!m) return base;
        if (skip.has(m.digest)) return { ...base, value: FUZZY_SKIPPED };
        stats.found[epoch]!++;
        stats.count(keyName, ip, m.flag, 'matched');
        if (m.prob > REFRESH_PROB && !opts.readOnly) {
          store.add({ digest: m.digest, flag: m.flag, weight: 0 }, expire).catch((e: unknown) => opts.log?.warn('fuzzy refresh failed', { err: String(e) }));
        }
        return { value: m.value, flag: m.flag, tag: cmd.tag, prob: m.prob, digest: Buffer.from(m.digest, 'hex'), ts: m.updated };
      }
      case FUZZY_WRITE:
      case FUZZY_DEL: {
        if (opts.readOnly || !inRanges(ip, allow)) {
          stats.count(keyName, ip, cmd.flag, 'errors');
          return { ...base, value: FUZZY_FORBIDDEN };
        }
        if (cmd.cmd === FUZZY_WRITE && skip.has(hex)) return { ...base, value: FUZZY_SKIPPED };
        // Answered only once the store has answered: a success reply means the hash is stored.
        try {
          if (cmd.cmd === FUZZY_WRITE) await store.add({ digest: hex, flag: cmd.flag, weight: cmd.value, ...(cmd.shingles ? { shingles: cmd.shingles } : {}) }, expire);
          else await store.remove(hex);
        } catch (err) {
          stats.count(keyName, ip, cmd.flag, 'errors');
          return storeFailed(err, cmd, { ...base, flag: cmd.flag });
        }
        stats.count(keyName, ip, cmd.flag, cmd.cmd === FUZZY_WRITE ? 'added' : 'deleted');
        return { ...base, flag: cmd.flag, prob: 1 };
      }
      case FUZZY_STAT: {
        let total = 0;
        for (const n of (await store.count()).values()) total += n;
        return { value: Math.floor(total / 2 ** 32), flag: total % 2 ** 32, tag: cmd.tag, prob: total };
      }
      case FUZZY_PING:
        return { ...base, value: cmd.value, prob: 1 };
      default:
        return undefined;
    }
  }

  sock.on('message', (msg, rinfo) => {
    if (msg.length > MAX_PACKET_BYTES) {
      stats.invalidRequests++;
      return;
    }
    let plain: Buffer = msg;
    let nm: Uint8Array | undefined;
    let keyName = 'unkeyed';
    if (isEncrypted(msg)) {
      const d = decryptCommand(msg, keypairs);
      if (!d) {
        stats.decryptErrors++;
        return;
      }
      plain = d.plain;
      nm = d.nm;
      keyName = Buffer.from(d.keypair.publicKey.subarray(0, 8)).toString('hex');
    }
    const cmd = decodeCommand(plain);
    if (!cmd) {
      stats.invalidRequests++;
      stats.error(rinfo.address);
      return;
    }
    answer(cmd, rinfo.address, keyName, nm !== undefined).then(
      (reply) => {
        if (!reply) return;
        const body = encodeReply(reply, replyLayoutFor(cmd.version));
        try {
          // A failed send later is the socket's 'error' (logged below).
          sock.send(nm ? encryptReply(body, nm) : body, rinfo.port, rinfo.address);
        } catch (err) {
          // dgram throws at once for a socket closed while the store answered, or a peer it
          // cannot send to (source port 0): an exception here would end the worker.
          opts.log?.warn('fuzzy reply not sent', { err: String(err), peer: rinfo.address });
        }
      },
      (err: unknown) => {
        // A store that is down: the client sees no reply, times out and marks us failed.
        stats.count(keyName, rinfo.address, cmd.flag, 'errors');
        opts.log?.warn('fuzzy storage request failed', { err: String(err), cmd: cmd.cmd });
      },
    );
  });

  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(port, host, () => {
      sock.off('error', reject);
      resolve();
    });
  });
  sock.on('error', (err) => opts.log?.error('fuzzy socket error', { err: String(err) }));

  const expireTimer = setInterval(() => {
    store.expire().then((n) => { stats.expired += n; }, () => undefined);
  }, EXPIRE_INTERVAL_MS);
  expireTimer.unref();

  const addr = sock.address();
  return {
    address: { host: addr.address, port: addr.port },
    async stats() {
      let total = 0;
      for (const n of (await store.count()).values()) total += n;
      return stats.toJSON(total);
    },
    close() {
      clearInterval(expireTimer);
      return new Promise<void>((resolve) => sock.close(() => resolve()));
    },
  };
}
