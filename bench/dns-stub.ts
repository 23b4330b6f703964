// The benchmarks' DNS stub, run in a process of its own (`node dist/bench/dns-stub.js --port N`)
// so its CPU is neither a measured server's nor the benchmark client's. Every query, over UDP or
// TCP, is answered at once NXDOMAIN with an SOA of TTL 0 and MINIMUM 0 in the authority section:
// RFC 2308 §5 makes min(TTL, MINIMUM) the time a negative answer may be cached, so a filter that
// honours it (mailsift's resolver does; Rspamd 3.4 keeps no DNS cache at all) asks again on every
// scan, and back-to-back passes measure the same DNS work without an idle minute between them.
// The reply is built from the query's bytes (header and first question echoed as they came, an
// EDNS0 OPT record when the query had one: Rspamd's resolver ignores an EDNS query's reply
// without one), so names a parser would reject (non-ASCII, odd case) are answered too.
import dgram from 'node:dgram';
import net from 'node:net';
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bindUdpAndTcp } from '../test/helpers/dns-server.js';

const HEADER_BYTES = 12;
const RCODE_NXDOMAIN = 3;
const TYPE_SOA = 6;
const TYPE_OPT = 41;
const CLASS_IN = 1;
/** Our EDNS0 UDP size, as the reference stub advertises. */
const EDNS_UDP_SIZE = 1232;
/** A TCP client sending more than this without a complete query is cut off (hostile input has a cap). */
const MAX_TCP_PENDING = 65_537;

/**
 * The authority record: the root zone's SOA (owner `.`, MNAME and RNAME `.`), TTL 0, every
 * timer 0. Any owner would do for a stub; the root keeps it to one byte per name.
 */
const SOA_RR = (() => {
  const rdata = Buffer.alloc(2 + 5 * 4); // MNAME ".", RNAME ".", SERIAL REFRESH RETRY EXPIRE MINIMUM
  rdata.writeUInt32BE(1, 2); // serial 1; the rest stay 0, MINIMUM included
  const rr = Buffer.alloc(1 + 10);
  rr.writeUInt16BE(TYPE_SOA, 1);
  rr.writeUInt16BE(CLASS_IN, 3);
  rr.writeUInt32BE(0, 5); // TTL 0
  rr.writeUInt16BE(rdata.length, 9);
  return Buffer.concat([rr, rdata]);
})();

const OPT_RR = (() => {
  const rr = Buffer.alloc(11);
  rr.writeUInt16BE(TYPE_OPT, 1);
  rr.writeUInt16BE(EDNS_UDP_SIZE, 3);
  return rr;
})();

/** End offset of the first question (name, type, class), or -1 when the query is cut short. */
function questionEnd(q: Buffer): number {
  let i = HEADER_BYTES;
  // Each step advances by at least one byte, so the loop ends within the packet.
  while (i < q.length && q[i] !== 0) {
    if ((q[i]! & 0xc0) !== 0) return -1; // a compression pointer has no place in a question
    i += 1 + q[i]!;
  }
  return i + 5 <= q.length ? i + 5 : -1;
}

/** The NXDOMAIN reply to `q`, or undefined when `q` is no query (too short, or a reply itself). */
export function nxdomainReply(q: Buffer): Buffer | undefined {
  if (q.length < HEADER_BYTES || (q[2]! & 0x80) !== 0) return undefined;
  const end = Number(q.readUInt16BE(4)) >= 1 ? questionEnd(q) : -1;
  const question = end > 0 ? q.subarray(HEADER_BYTES, end) : Buffer.alloc(0);
  // The query's additional section starts right after its only question: an OPT there is EDNS0.
  const edns = end > 0 && q.readUInt16BE(10) >= 1 && q.length >= end + 3 && q[end] === 0 && q.readUInt16BE(end + 1) === TYPE_OPT;
  const head = Buffer.alloc(HEADER_BYTES);
  head.writeUInt16BE(q.readUInt16BE(0), 0); // id
  // QR, the query's opcode and RD, RA; RCODE NXDOMAIN.
  head[2] = 0x80 | (q[2]! & 0x79);
  head[3] = 0x80 | RCODE_NXDOMAIN;
  head.writeUInt16BE(end > 0 ? 1 : 0, 4);
  head.writeUInt16BE(0, 6);
  head.writeUInt16BE(1, 8);
  head.writeUInt16BE(edns ? 1 : 0, 10);
  return Buffer.concat(edns ? [head, question, SOA_RR, OPT_RR] : [head, question, SOA_RR]);
}

export interface RunningStub { port: number; close(): Promise<void> }

/** The first question as `name type` for the query log (`?` when it cannot be read). */
function questionText(q: Buffer): string {
  const end = q.length >= HEADER_BYTES ? questionEnd(q) : -1;
  if (end < 0) return '?';
  const labels: string[] = [];
  for (let i = HEADER_BYTES; q[i] !== 0; i += 1 + q[i]!) labels.push(q.toString('latin1', i + 1, i + 1 + q[i]!));
  return `${labels.join('.')} ${q.readUInt16BE(end - 4)}`;
}

/** Serves on `host`:`port` (UDP and TCP; port 0: a free pair on 127.0.0.1); `log`: a file to append one line per query to. */
export async function serveStub(host: string, port: number, log?: string): Promise<RunningStub> {
  const note = log ? (proto: string, q: Buffer): void => appendFileSync(log, `${(Date.now() / 1000).toFixed(6)} ${proto} ${q.length} bytes id=${q.length >= 2 ? q.readUInt16BE(0) : -1} ${questionText(q)}\n`) : undefined;
  const onQuery = (udp: dgram.Socket) => (q: Buffer, peer: dgram.RemoteInfo): void => {
    note?.('udp', q);
    const r = nxdomainReply(q);
    if (r) udp.send(r, peer.port, peer.address);
  };
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => sock.destroy());
    let buf: Buffer = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const q = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + q.length);
        note?.('tcp', q);
        const r = nxdomainReply(q);
        if (!r) return void sock.destroy();
        const len = Buffer.alloc(2);
        len.writeUInt16BE(r.length);
        sock.write(Buffer.concat([len, r]));
      }
      if (buf.length > MAX_TCP_PENDING) sock.destroy();
    });
  });
  let udp: dgram.Socket;
  let bound: number;
  if (port === 0) {
    // The tests' binder: it retries when the kernel's free UDP port is taken for TCP.
    ({ udp, port: bound } = await bindUdpAndTcp(tcp, onQuery));
  } else {
    udp = dgram.createSocket('udp4');
    udp.on('message', onQuery(udp));
    await new Promise<void>((ok, fail) => { udp.once('error', fail); udp.bind(port, host, () => { udp.off('error', fail); ok(); }); });
    await new Promise<void>((ok, fail) => { tcp.once('error', fail); tcp.listen(port, host, () => { tcp.off('error', fail); ok(); }); }).catch((e: unknown) => {
      udp.close();
      throw e;
    });
    bound = port;
  }
  udp.on('error', () => { /* a send to a vanished client: nothing to do */ });
  return {
    port: bound,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const stub = await serveStub(arg('--addr') ?? '127.0.0.1', Number(arg('--port') ?? 0), arg('--log'));
  // The parent waits for this line before it points a server at the stub.
  process.stdout.write(`listening ${stub.port}\n`);
  const stop = (): void => { void stub.close().then(() => process.exit(0)); };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
