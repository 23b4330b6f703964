// The shared DNS resolver of one worker: queries the configured servers over UDP, falls back to
// TCP when a reply is truncated, retries across servers, caches answers (and "no such name" /
// "no data") for as long as their TTL says, and merges identical lookups in flight.
//
// UDP goes through a few long-lived sockets per server (Rspamd's io channels) rather than one
// socket per query: opening, binding and closing a socket cost more than the query itself at
// the dozens of DNS-list lookups a message makes. Replies are matched by server address, query
// id and question, and each socket is replaced after a bounded number of queries so its source
// port does not stay guessable for long.

import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import { abortWaiters } from './abort-waiters.js';
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
/** UDP sockets kept per server; queries rotate over them (Rspamd's dns_io_per_server is 16). */
const SOCKETS_PER_SERVER = 4;
/** Queries a UDP socket carries before it is replaced by one on a fresh source port. */
const QUERIES_PER_SOCKET = 2048;
/**
 * After a socket to a server could not be connected (no route to it: ENETUNREACH,
 * EADDRNOTAVAIL), queries to that server fail at once for this long instead of each opening a
 * socket that fails the same way: a message makes dozens of lookups and each is tried up to
 * retransmits + 1 times.
 */
const SERVER_DOWN_MS = 1000;

export interface DnsAnswer {
  records: RecordData[];
  /** Smallest TTL among the records, in seconds. */
  ttl: number;
}

interface CacheEntry { expires: number; answer?: DnsAnswer; error?: DnsErrorCode }

interface Server {
  host: string;
  port: number;
  family: 4 | 6;
  channels: UdpChannel[];
  nextChannel: number;
  /** Date.now() before which the server counts as unreachable (its last connect failed). */
  downUntil: number;
}

interface PendingUdp {
  qname: string;
  type: RecordType;
  timer: NodeJS.Timeout;
  resolve: (m: DnsMessage) => void;
  reject: (e: Error) => void;
}

function transportError(code: DnsErrorCode): Error {
  return Object.assign(new Error(code), { dnsCode: code });
}

/**
 * One long-lived UDP socket to one server, with the queries waiting on it by id. Every way the
 * socket can fail (connect, send, a later socket error) ends in #settle with a transport code:
 * nothing here throws out of an event callback, and no query is left to its time-out when the
 * socket already knows it cannot be answered.
 */
class UdpChannel {
  readonly #sock: dgram.Socket;
  readonly #server: Server;
  readonly #pending = new Map<number, PendingUdp>();
  /** Queries made before the socket is connected (id and wire bytes), sent once it is. */
  #queued: Array<{ id: number; query: Buffer }> | undefined = [];
  #uses = 0;
  #closed = false;

  constructor(server: Server) {
    this.#server = server;
    const sock = dgram.createSocket(server.family === 6 ? 'udp6' : 'udp4');
    this.#sock = sock;
    // A worker's idle resolver must not keep its process alive.
    sock.unref();
    sock.on('error', () => this.#fail('NETWORK'));
    sock.on('message', (buf, rinfo) => this.#onMessage(buf, rinfo));
    // Connected: each send skips the address lookup, and the kernel drops datagrams from
    // anyone but the server.
    sock.connect(server.port, server.host, (err?: Error) => {
      const queued = this.#queued ?? [];
      this.#queued = undefined;
      if (err) {
        // No route to the server: sending would throw (the socket has no peer), so the queued
        // queries fail now, as a network error, and the server is skipped for a moment.
        server.downUntil = Date.now() + SERVER_DOWN_MS;
        this.#fail('NETWORK');
        return;
      }
      if (this.#closed) return;
      for (const q of queued) this.#send(q.id, q.query);
    });
  }

  /** Still taking new queries: open, and not yet at its query budget. */
  get usable(): boolean {
    return !this.#closed && this.#uses < QUERIES_PER_SOCKET;
  }

  query(qname: string, type: RecordType, timeoutMs: number): Promise<DnsMessage> {
    this.#uses++;
    let id = randomInt(0, 65536);
    while (this.#pending.has(id)) id = (id + 1) & 0xffff;
    const query = encodeQuery(id, qname, type, EDNS_UDP_SIZE);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.#settle(id, undefined, 'TIMEOUT'), timeoutMs);
      this.#pending.set(id, { qname, type, timer, resolve, reject });
      if (this.#queued) this.#queued.push({ id, query });
      else this.#send(id, query);
    });
  }

  /** Sends one query; a send that fails (at once or later) fails that query as a network error. */
  #send(id: number, query: Buffer): void {
    if (this.#closed) {
      this.#settle(id, undefined, 'NETWORK');
      return;
    }
    try {
      this.#sock.send(query, (err) => {
        if (err) this.#settle(id, undefined, 'NETWORK');
      });
    } catch {
      // dgram throws synchronously on a socket without a peer or already closed.
      this.#settle(id, undefined, 'NETWORK');
    }
  }

  #onMessage(buf: Buffer, rinfo: dgram.RemoteInfo): void {
    // Only the server we asked, with an id we are waiting for and its question, may answer
    // (spoofing defence); anything else is dropped and the query keeps waiting.
    if (rinfo.address !== this.#server.host || rinfo.port !== this.#server.port) return;
    if (buf.length < 2) return;
    const p = this.#pending.get(buf.readUInt16BE(0));
    if (!p) return;
    let m: DnsMessage;
    try { m = decodeMessage(buf); } catch { return; }
    if (!m.response || !sameQuestion(m, p.qname, p.type)) return;
    this.#settle(m.id, m);
  }

  #settle(id: number, m: DnsMessage | undefined, code?: DnsErrorCode): void {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    clearTimeout(p.timer);
    if (m) p.resolve(m);
    else p.reject(transportError(code!));
    this.#closeIfSpent();
  }

  /** A socket error fails every query on it; the socket is dropped and a new one made later. */
  #fail(code: DnsErrorCode): void {
    this.#closed = true;
    this.#queued = undefined;
    for (const id of [...this.#pending.keys()]) this.#settle(id, undefined, code);
    this.#closeIfSpent();
  }

  #closeIfSpent(): void {
    if (this.usable || this.#pending.size > 0) return;
    this.#closed = true;
    try { this.#sock.close(); } catch { /* already closed */ }
  }
}

function normaliseName(name: string): string {
  return name.endsWith('.') ? name.slice(0, -1).toLowerCase() : name.toLowerCase();
}

/**
 * The name a failure's message quotes: the caller's spelling for the refusals made before asking
 * (a name that is no name, a lookup past the task's cap), the normalised one that was asked for
 * the rest.
 */
export function failedName(code: DnsErrorCode, name: string): string {
  return code === 'BADNAME' || code === 'LIMIT' ? name : normaliseName(name);
}

/** 1–253 characters in labels of 1–63. */
function validQname(qname: string): boolean {
  if (qname.length === 0 || qname.length > 253) return false;
  let start = 0;
  for (;;) {
    const dot = qname.indexOf('.', start);
    const end = dot < 0 ? qname.length : dot;
    if (end === start || end - start > 63) return false;
    if (dot < 0) return true;
    start = dot + 1;
  }
}

function parseServer(s: string): Server {
  let host = s, port = 53;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (v6) { host = v6[1]!; if (v6[2]) port = Number(v6[2]); }
  else if (s.split(':').length === 2) { const [h, p] = s.split(':'); host = h!; port = Number(p); }
  if (!net.isIP(host)) throw new Error(`DNS server must be an IP address: ${s}`);
  if (!(port > 0 && port < 65536)) throw new Error(`bad DNS server port: ${s}`);
  return { host, port, family: net.isIPv6(host) ? 6 : 4, channels: [], nextChannel: 0, downUntil: 0 };
}

export class DnsResolver {
  readonly #servers: Server[];
  readonly #opts: ResolverOptions;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<DnsAnswer | DnsErrorCode>>();
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

  /**
   * The cached outcome of a lookup, without starting one: an answer, the code of a cached
   * negative answer, or undefined when the cache cannot answer (also for invalid names, which
   * `lookup` rejects). Most DNS-list lookups of a message repeat names seen moments before, and
   * answering those synchronously spares the promise chain of a real lookup.
   */
  cached(name: string, type: RecordType): DnsAnswer | DnsErrorCode | undefined {
    const hit = this.#cache.get(`${type}\0${normaliseName(name)}`);
    if (!hit || hit.expires <= Date.now()) return undefined;
    return hit.answer ?? hit.error;
  }

  /** Records of `type` for `name`; rejects with a DnsError. `signal` abandons only this caller's wait. */
  lookup(name: string, type: RecordType, signal?: AbortSignal): Promise<DnsAnswer> {
    return this.resolve(name, type, signal).then((o) => (typeof o === 'string' ? Promise.reject(new DnsError(o, failedName(o, name), type)) : o));
  }

  /**
   * What `lookup` gives, as a value: the answer, or the code of the failure (NXDOMAIN, TIMEOUT,
   * CANCELLED, …); never rejects. Most lookups of a message end in NXDOMAIN from a DNS list, and
   * an error object and a rejected promise chain for each cost more than the rest of the lookup's
   * JavaScript; the task's DNS API turns codes into results without ever making one.
   */
  resolve(name: string, type: RecordType, signal?: AbortSignal): Promise<DnsAnswer | DnsErrorCode> {
    const qname = normaliseName(name);
    if (!validQname(qname)) return Promise.resolve('BADNAME');
    const key = `${type}\0${qname}`;
    const hit = this.#cache.get(key);
    if (hit) {
      if (hit.expires > Date.now()) return Promise.resolve(hit.answer ?? hit.error!);
      this.#cache.delete(key);
    }
    // Checked before a query is started, which would otherwise run for nobody.
    if (signal?.aborted) return Promise.resolve('CANCELLED');
    let p = this.#inflight.get(key);
    if (!p) {
      const started = this.#query(qname, type);
      p = started;
      this.#inflight.set(key, started);
      // The entry goes when the query settles (#query never rejects).
      void started.then(() => this.#inflight.delete(key));
    }
    if (!signal) return p;
    const waiters = abortWaiters(signal);
    const shared = p;
    return new Promise<DnsAnswer | DnsErrorCode>((resolve) => {
      const wait = waiters.add(() => resolve('CANCELLED'));
      void shared.then((o) => {
        waiters.remove(wait);
        resolve(o);
      });
    });
  }

  #store(key: string, entry: CacheEntry): void {
    if (this.#cache.size >= this.#opts.cacheSize) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(key, entry);
  }

  /** The outcome of asking the servers; never rejects (callers wait on it without a handler). */
  async #query(qname: string, type: RecordType): Promise<DnsAnswer | DnsErrorCode> {
    try {
      const key = `${type}\0${qname}`;
      let lastError: DnsErrorCode = 'TIMEOUT';
      for (let attempt = 0; attempt <= this.#opts.retransmits; attempt++) {
        const server = this.#servers[this.#next++ % this.#servers.length]!;
        let reply: DnsMessage;
        try {
          reply = await this.#udp(server, qname, type);
          if (reply.truncated) reply = await this.#tcp(server, qname, type);
        } catch (e) {
          // A name the wire cannot carry (a label over 63 bytes once UTF-8 encoded) is no query.
          if ((e as { code?: unknown }).code === 'DNS_WIRE_FORMAT') return 'BADNAME';
          lastError = (e as { dnsCode?: DnsErrorCode }).dnsCode ?? 'NETWORK';
          continue;
        }
        if (reply.rcode === RCODE.SERVFAIL || reply.rcode === RCODE.REFUSED) {
          lastError = reply.rcode === RCODE.SERVFAIL ? 'SERVFAIL' : 'REFUSED';
          continue;
        }
        if (reply.rcode === RCODE.FORMERR) return 'FORMERR';
        if (reply.rcode === RCODE.NOTIMP) return 'NOTIMP';
        // Any other code (YXDOMAIN, NOTAUTH, BADVERS, …) is no answer either: read as "no records"
        // it would be cached as a negative answer, and a DNS list would read "not listed".
        if (reply.rcode !== RCODE.NOERROR && reply.rcode !== RCODE.NXDOMAIN) {
          lastError = 'SERVFAIL';
          continue;
        }
        const records = reply.answers.filter((rr) => rr.type === type);
        if (reply.rcode === RCODE.NXDOMAIN || records.length === 0) {
          const code: DnsErrorCode = reply.rcode === RCODE.NXDOMAIN ? 'NXDOMAIN' : 'NODATA';
          const soa = reply.authorities.find((rr) => rr.type === 'SOA');
          const ttl = soa ? Math.min(soa.ttl, (soa.data as SoaData).minttl) : DEFAULT_NEGATIVE_TTL;
          if (ttl > 0) this.#store(key, { expires: Date.now() + Math.min(ttl, MAX_CACHE_TTL) * 1000, error: code });
          return code;
        }
        const ttl = Math.min(...records.map((r) => r.ttl));
        const answer: DnsAnswer = { records: records.map((r) => r.data), ttl };
        if (ttl > 0) this.#store(key, { expires: Date.now() + Math.min(ttl, MAX_CACHE_TTL) * 1000, answer });
        return answer;
      }
      return lastError;
    } catch {
      // Nothing above is expected to throw; if it does, the lookup is a network failure.
      return 'NETWORK';
    }
  }

  #udp(server: Server, qname: string, type: RecordType): Promise<DnsMessage> {
    if (server.downUntil > Date.now()) return Promise.reject(transportError('NETWORK'));
    this.sent++;
    const i = server.nextChannel++ % SOCKETS_PER_SERVER;
    let ch = server.channels[i];
    if (!ch || !ch.usable) server.channels[i] = ch = new UdpChannel(server);
    return ch.query(qname, type, this.#opts.timeout * 1000);
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

/**
 * Whether a reply answers our question. Names go out as UTF-8 but the wire reader gives each
 * byte as one latin1 character, so a name with non-ASCII characters is compared in that form
 * (comparing the UTF-8 text never matched: such lookups waited for every time-out instead).
 */
function sameQuestion(m: DnsMessage, qname: string, type: string): boolean {
  const q = m.questions[0];
  if (q === undefined || q.type !== type) return false;
  const wire = ASCII.test(qname) ? qname : Buffer.from(qname, 'utf8').toString('latin1');
  return q.name.toLowerCase() === wire.toLowerCase();
}

const ASCII = /^[\x00-\x7f]*$/;
