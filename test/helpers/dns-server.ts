// A real DNS server on loopback for tests: answers over UDP and TCP from declarative zone data,
// records every query it receives, and can withhold answers (to test time-outs) or fail names.
// Replies larger than the client's UDP size are truncated so clients must retry over TCP.

import dgram from 'node:dgram';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { decodeMessage, encodeMessage, RCODE } from '../../src/net/dns-wire.js';
import type { DnsMessage, RecordData, RecordType, ResourceRecord } from '../../src/net/dns-wire.js';

export interface ZoneRecord { type: RecordType; data: RecordData; ttl?: number }
/** Owner name → records. `*.name` entries match any name below `name` that has no own entry. */
export type Zone = Record<string, ZoneRecord[]>;

export interface QueryLog { name: string; type: string; transport: 'udp' | 'tcp' }

export interface DnsTestServer {
  /** `127.0.0.1:port`, ready for a resolver's server list. */
  readonly address: string;
  readonly port: number;
  readonly queries: QueryLog[];
  /** Names (lower case) whose queries get no reply at all. */
  readonly withheld: Set<string>;
  /** Names answered SERVFAIL. */
  readonly failing: Set<string>;
  zone: Zone;
  close(): Promise<void>;
}

export interface DnsServerOptions { zone: Zone; defaultTtl?: number }

/** Classic UDP payload limit without EDNS0 (RFC 1035 §4.2.1). */
const PLAIN_UDP_SIZE = 512;
const SOA_TTL = 30;

function lookupOwner(zone: Zone, name: string): ZoneRecord[] | undefined {
  const exact = zone[name];
  if (exact) return exact;
  const labels = name.split('.');
  for (let i = 1; i < labels.length; i++) {
    const w = zone[`*.${labels.slice(i).join('.')}`];
    if (w) return w;
  }
  return undefined;
}

function nameExists(zone: Zone, name: string): boolean {
  if (lookupOwner(zone, name)) return true;
  // An empty non-terminal (a name with children only) exists: NODATA, not NXDOMAIN.
  const suffix = `.${name}`;
  return Object.keys(zone).some((k) => k.endsWith(suffix));
}

export function answer(zone: Zone, query: DnsMessage, defaultTtl: number): DnsMessage {
  const q = query.questions[0]!;
  const reply: DnsMessage = { ...query, response: true, authoritative: true, truncated: false, answers: [], authorities: [], rcode: RCODE.NOERROR };
  delete reply.ednsSize;
  let name = q.name.toLowerCase();
  const answers: ResourceRecord[] = [];
  // Follow CNAMEs inside the zone like a recursive server does, bounded to stop loops.
  for (let hop = 0; hop < 8; hop++) {
    const recs = lookupOwner(zone, name);
    if (!recs) {
      if (!nameExists(zone, name)) reply.rcode = hop === 0 ? RCODE.NXDOMAIN : RCODE.NOERROR;
      break;
    }
    const own = recs.filter((r) => r.type === q.type);
    if (own.length > 0) {
      for (const r of own) answers.push({ name, type: r.type, ttl: r.ttl ?? defaultTtl, data: r.data });
      break;
    }
    const cname = recs.find((r) => r.type === 'CNAME');
    if (!cname) break;
    answers.push({ name, type: 'CNAME', ttl: cname.ttl ?? defaultTtl, data: cname.data });
    name = String(cname.data).toLowerCase();
  }
  reply.answers = answers;
  if (!answers.some((a) => a.type === q.type)) {
    reply.authorities = [{ name: 'test', type: 'SOA', ttl: SOA_TTL, data: { nsname: 'ns.test', hostmaster: 'hostmaster.test', serial: 1, refresh: 60, retry: 60, expire: 600, minttl: SOA_TTL } }];
  }
  return reply;
}

/**
 * A UDP socket and `tcp` listening on the same loopback port number, as a real DNS server does
 * (clients retry over TCP on the address they know). The UDP port the kernel picks may be taken
 * for TCP by another test running at the same time: then another pair is tried.
 */
export async function bindUdpAndTcp(
  tcp: net.Server,
  onMessage: (sock: dgram.Socket) => (msg: Buffer, rinfo: dgram.RemoteInfo) => void,
): Promise<{ udp: dgram.Socket; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const sock = dgram.createSocket('udp4');
    sock.on('message', onMessage(sock));
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
    const port = (sock.address() as AddressInfo).port;
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp: sock, port };
    } catch (err) {
      sock.close();
      if (attempt >= 20) throw err;
    }
  }
}

export async function startDnsServer(opts: DnsServerOptions): Promise<DnsTestServer> {
  const defaultTtl = opts.defaultTtl ?? 300;
  const queries: QueryLog[] = [];
  const withheld = new Set<string>();
  const failing = new Set<string>();
  const state = { zone: opts.zone };

  const respond = (buf: Buffer, transport: 'udp' | 'tcp'): Buffer | undefined => {
    let q: DnsMessage;
    try { q = decodeMessage(buf); } catch { return undefined; }
    const question = q.questions[0];
    if (!question) return undefined;
    const lname = question.name.toLowerCase();
    queries.push({ name: lname, type: question.type, transport });
    if (withheld.has(lname)) return undefined;
    if (failing.has(lname)) return encodeMessage({ ...q, response: true, rcode: RCODE.SERVFAIL, answers: [], authorities: [], ednsSize: undefined as never });
    const reply = answer(state.zone, q, defaultTtl);
    let out = encodeMessage(reply);
    const limit = Math.max(PLAIN_UDP_SIZE, q.ednsSize ?? 0);
    if (transport === 'udp' && out.length > limit) {
      out = encodeMessage({ ...reply, truncated: true, answers: [], authorities: [] });
    }
    return out;
  };

  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const len = buf.readUInt16BE(0);
        const out = respond(buf.subarray(2, 2 + len), 'tcp');
        buf = buf.subarray(2 + len);
        if (out) {
          const prefix = Buffer.alloc(2);
          prefix.writeUInt16BE(out.length);
          sock.write(Buffer.concat([prefix, out]));
        }
      }
    });
  });
  const { udp, port } = await bindUdpAndTcp(tcp, (sock) => (msg, rinfo) => {
    const out = respond(msg, 'udp');
    if (out) sock.send(out, rinfo.port, rinfo.address);
  });

  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    withheld,
    failing,
    get zone() { return state.zone; },
    set zone(z: Zone) { state.zone = z; },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((r) => udp.close(() => r())),
        new Promise<void>((r) => tcp.close(() => r())),
      ]);
    },
  };
}
