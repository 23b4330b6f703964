// A DNS server on loopback that fails in a chosen way, over UDP and TCP on one port: silence,
// SERVFAIL / REFUSED / any other error code, garbage carrying the query's id, or a truncated
// UDP reply whose TCP retry is reset, garbled or left unanswered. The mode can be changed while
// the server runs; every query is counted.

import net from 'node:net';
import { bindUdpAndTcp } from './dns-server.js';

export type DnsFault =
  | 'silent'
  | 'servfail'
  | 'refused'
  /** YXDOMAIN: an error code the resolver has no special case for. */
  | 'yxdomain'
  | 'garbage'
  | 'truncated-tcp-reset'
  | 'truncated-tcp-garbage'
  | 'truncated-tcp-silent';

export interface FaultyDnsServer {
  /** `127.0.0.1:port` for a resolver's server list. */
  readonly address: string;
  mode: DnsFault;
  /** Queries received, per transport. */
  readonly count: { udp: number; tcp: number };
  close(): Promise<void>;
}

const FLAG_QR = 0x80;
const FLAG_TC = 0x02;
const RCODES: Partial<Record<DnsFault, number>> = { servfail: 2, refused: 5, yxdomain: 6 };

/** The query's header and question echoed back as a reply with `rcode` (answer counts zeroed). */
function echoReply(q: Buffer, rcode: number, truncated: boolean): Buffer | undefined {
  if (q.length < 12) return undefined;
  let off = 12;
  // The question's name: labels up to the root label, each step at least one byte further.
  while (off < q.length && q[off] !== 0) off += q[off]! + 1;
  const end = Math.min(q.length, off + 5);
  const r = Buffer.from(q.subarray(0, end));
  r[2] = FLAG_QR | (q[2]! & 0x79) | (truncated ? FLAG_TC : 0);
  r[3] = 0x80 | rcode;
  r.writeUInt16BE(0, 6);
  r.writeUInt16BE(0, 8);
  r.writeUInt16BE(0, 10);
  return r;
}

/** Bytes no DNS reader accepts, but with the query's id so they are not dropped as strangers'. */
function garbage(q: Buffer): Buffer {
  const g = Buffer.alloc(40, 0xff);
  q.copy(g, 0, 0, 2);
  return g;
}

export async function startFaultyDns(mode: DnsFault): Promise<FaultyDnsServer> {
  const state = { mode };
  const count = { udp: 0, tcp: 0 };
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    sock.once('data', (d: Buffer) => {
      count.tcp++;
      if (state.mode === 'truncated-tcp-reset') sock.resetAndDestroy();
      else if (state.mode === 'truncated-tcp-garbage') {
        const body = garbage(d.subarray(2));
        const len = Buffer.alloc(2);
        len.writeUInt16BE(body.length);
        sock.end(Buffer.concat([len, body]));
      }
      // truncated-tcp-silent and the others: hold the connection and say nothing.
    });
  });
  const { udp: u, port } = await bindUdpAndTcp(tcp, (sock) => (q, peer) => {
    count.udp++;
    const m = state.mode;
    let out: Buffer | undefined;
    if (m === 'garbage') out = garbage(q);
    else if (m.startsWith('truncated-')) out = echoReply(q, 0, true);
    else if (RCODES[m] !== undefined) out = echoReply(q, RCODES[m]!, false);
    if (out) sock.send(out, peer.port, peer.address);
  });
  return {
    address: `127.0.0.1:${port}`,
    get mode() { return state.mode; },
    set mode(m: DnsFault) { state.mode = m; },
    count,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => u.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
}
