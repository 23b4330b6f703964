// The shared DNS resolver of one worker: queries the configured servers over UDP, falls back to
// TCP when a reply is truncated, retries across servers, caches answers (and "no such name" /
// "no data") for as long as their TTL says, and merges identical lookups in flight.

import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import { DnsError } from './dns-errors.js';
import type { DnsErrorCode } from './dns-errors.js';
import { decodeMessage, encodeQuery, RCODE } from './dns-wire.js';
import type { DnsMessage, RecordData, RecordType, SoaData } from './dns-wire.js';

export interface ResolverOptions {
  /** `host`, `host:port` or `[v6]:port`. */
  servers: string[];
  /** Seconds to wait for one reply before retrying. */
  timeout: number;
  /** Tries after the first, rotating through the servers. */
  retransmits: number;
  /** Cached names at most; the oldest are dropped first. */
  cacheSize: number;
}

export const DEFAULT_RESOLVER_OPTIONS: ResolverOptions = { servers: ['127.0.0.1:53'], timeout: 1, retransmits: 2, cacheSize: 4096 };

/** EDNS0 payload size we advertise: big enough for most TXT (SPF/DKIM) answers over UDP. */
const EDNS_UDP_SIZE = 4096;
/** Ceiling on cached TTLs: a zone asking for a week is still re-read daily. */
const MAX_CACHE_TTL = 86_400;
/** Negative answers without an SOA are cached this long (RFC 2308 leaves it to us). */
const DEFAULT_NEGATIVE_TTL = 60;
/** Largest TCP reply accepted: DNS messages are capped at 64 KiB by their length prefix. */
const MAX_TCP_REPLY = 65_537;

export interface DnsAnswer {
  records: RecordData[];
  /** Smallest TTL among the records, in seconds. */
  ttl: number;
}

interface CacheEntry { expires: number; answer?: DnsAnswer; error?: DnsErrorCode }

interface Server { host: string; port: number; family: 4 | 6 }

function parseServer(s: string): Server {
  let host = s, port = 53;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (v6) { host = v6[1]!; if (v6[2]) port = Number(v6[2]); }
  else if (s.split(':').length === 2) { const [h, p] = s.split(':'); host = h!; port = Number(p); }
  if (!net.isIP(host)) throw new Error(`DNS server must be an IP address: ${s}`);
  if (!(port > 0 && port < 65536)) throw new Error(`bad DNS server port: ${s}`);
  return { host, port, family: net.isIPv6(host) ? 6 : 4 };
}

export class DnsResolver {
  readonly #servers: Server[];
  readonly #opts: ResolverOptions;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<DnsAnswer>>();
  #next = 0;
  /** Queries sent to a server (not cache hits); for tests and stats. */
  sent = 0;

  constructor(opts: Partial<ResolverOptions> = {}) {
    this.#opts = { ...DEFAULT_RESOLVER_OPTIONS, ...opts };
    if (this.#opts.servers.length === 0) throw new Error('no DNS servers configured');
    this.#servers = this.#opts.servers.map(parseServer);
  }

  get options(): Readonly<ResolverOptions> {
    return this.#opts;
  }

  clearCache(): void {
    this.#cache.clear();
  }

  /** Records of `type` for `name`; rejects with a DnsError. `signal` abandons only this caller's wait. */
  lookup(name: string, type: RecordType, signal?: AbortSignal): Promise<DnsAnswer> {
    const qname = name.endsWith('.') ? name.slice(0, -1).toLowerCase() : name.toLowerCase();
    if (qname.length === 0 || qname.length > 253 || qname.split('.').some((l) => l.length === 0 || l.length > 63)) {
      return Promise.reject(new DnsError('BADNAME', name, type));
    }
    const key = `${type}\0${qname}`;
    const hit = this.#cache.get(key);
    if (hit) {
      if (hit.expires > Date.now()) {
        if (hit.answer) return Promise.resolve(hit.answer);
        return Promise.reject(new DnsError(hit.error!, qname, type));
      }
      this.#cache.delete(key);
    }
    let p = this.#inflight.get(key);
    if (!p) {
      p = this.#query(qname, type).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, p);
    }
    if (!signal) return p;
    if (signal.aborted) return Promise.reject(new DnsError('CANCELLED', qname, type));
    return new Promise<DnsAnswer>((resolve, reject) => {
      const onAbort = (): void => reject(new DnsError('CANCELLED', qname, type));
      signal.addEventListener('abort', onAbort, { once: true });
      p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  #store(key: string, entry: CacheEntry): void {
    if (this.#cache.size >= this.#opts.cacheSize) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(key, entry);
  }

  async #query(qname: string, type: RecordType): Promise<DnsAnswer> {
    const key = `${type}\0${qname}`;
    let lastError: DnsErrorCode = 'TIMEOUT';
    for (let attempt = 0; attempt <= this.#opts.retransmits; attempt++) {
      const server = this.#servers[this.#next++ % this.#servers.length]!;
      let reply: DnsMessage;
      try {
        reply = await this.#udp(server, qname, type);
        if (reply.truncated) reply = await this.#tcp(server, qname, type);
      } catch (e) {
        lastError = (e as { dnsCode?: DnsErrorCode }).dnsCode ?? 'NETWORK';
        continue;
      }
      if (reply.rcode === RCODE.SERVFAIL || reply.rcode === RCODE.REFUSED) {
        lastError = reply.rcode === RCODE.SERVFAIL ? 'SERVFAIL' : 'REFUSED';
        continue;
      }
      if (reply.rcode === RCODE.FORMERR) throw new DnsError('FORMERR', qname, type);
      if (reply.rcode === RCODE.NOTIMP) throw new DnsError('NOTIMP', qname, type);
      const records = reply.answers.filter((rr) => rr.type === type);
      if (reply.rcode === RCODE.NXDOMAIN || records.length === 0) {
        const code: DnsErrorCode = reply.rcode === RCODE.NXDOMAIN ? 'NXDOMAIN' : 'NODATA';
        const soa = reply.authorities.find((rr) => rr.type === 'SOA');
        const ttl = soa ? Math.min(soa.ttl, (soa.data as SoaData).minttl) : DEFAULT_NEGATIVE_TTL;
        if (ttl > 0) this.#store(key, { expires: Date.now() + Math.min(ttl, MAX_CACHE_TTL) * 1000, error: code });
        throw new DnsError(code, qname, type);
      }
      const ttl = Math.min(...records.map((r) => r.ttl));
      const answer: DnsAnswer = { records: records.map((r) => r.data), ttl };
      if (ttl > 0) this.#store(key, { expires: Date.now() + Math.min(ttl, MAX_CACHE_TTL) * 1000, answer });
      return answer;
    }
    throw new DnsError(lastError, qname, type);
  }

  #udp(server: Server, qname: string, type: RecordType): Promise<DnsMessage> {
    const id = randomInt(0, 65536);
    const query = encodeQuery(id, qname, type, EDNS_UDP_SIZE);
    this.sent++;
    return new Promise((resolve, reject) => {
      const sock = dgram.createSocket(server.family === 6 ? 'udp6' : 'udp4');
      const timer = setTimeout(() => finish(undefined, 'TIMEOUT'), this.#opts.timeout * 1000);
      const finish = (m: DnsMessage | undefined, code?: DnsErrorCode): void => {
        clearTimeout(timer);
        sock.removeAllListeners('message');
        sock.on('error', () => {});
        try { sock.close(); } catch { /* already closed */ }
        if (m) resolve(m);
        else reject(Object.assign(new Error(code), { dnsCode: code }));
      };
      sock.on('error', () => finish(undefined, 'NETWORK'));
      sock.on('message', (buf, rinfo) => {
        // Only the server we asked, with our id and question, may answer (spoofing defence).
        if (rinfo.address !== server.host || rinfo.port !== server.port) return;
        let m: DnsMessage;
        try { m = decodeMessage(buf); } catch { return; }
        if (!m.response || m.id !== id || !sameQuestion(m, qname, type)) return;
        finish(m);
      });
      sock.send(query, server.port, server.host, (err) => { if (err) finish(undefined, 'NETWORK'); });
    });
  }

  #tcp(server: Server, qname: string, type: RecordType): Promise<DnsMessage> {
    const id = randomInt(0, 65536);
    const query = encodeQuery(id, qname, type);
    this.sent++;
    return new Promise((resolve, reject) => {
      const sock = net.connect({ host: server.host, port: server.port });
      const chunks: Buffer[] = [];
      let size = 0;
      const timer = setTimeout(() => finish(undefined, 'TIMEOUT'), this.#opts.timeout * 1000);
      const finish = (m: DnsMessage | undefined, code?: DnsErrorCode): void => {
        clearTimeout(timer);
        sock.removeAllListeners('data');
        sock.on('error', () => {});
        sock.destroy();
        if (m) resolve(m);
        else reject(Object.assign(new Error(code), { dnsCode: code }));
      };
      sock.on('error', () => finish(undefined, 'NETWORK'));
      sock.on('connect', () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(query.length);
        sock.write(Buffer.concat([len, query]));
      });
      sock.on('data', (d: Buffer) => {
        chunks.push(d);
        size += d.length;
        if (size > MAX_TCP_REPLY) return finish(undefined, 'FORMERR');
        const all = Buffer.concat(chunks);
        if (all.length < 2) return;
        const want = all.readUInt16BE(0);
        if (all.length < want + 2) return;
        try {
          const m = decodeMessage(all.subarray(2, 2 + want));
          if (m.id !== id || !sameQuestion(m, qname, type)) return finish(undefined, 'FORMERR');
          finish(m);
        } catch {
          finish(undefined, 'FORMERR');
        }
      });
      sock.on('end', () => finish(undefined, 'NETWORK'));
    });
  }
}

function sameQuestion(m: DnsMessage, qname: string, type: string): boolean {
  const q = m.questions[0];
  return q !== undefined && q.name.toLowerCase() === qname && q.type === type;
}
