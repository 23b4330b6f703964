// Client side of the fuzzy UDP protocol: send a batch of commands to one
// storage server, match replies by tag, re-send the unanswered ones on time-out.
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { KexKeypair } from '../crypto/keypair.js';
import { decodeReply, encodeCommand, type FuzzyCommand, type FuzzyReply } from './wire.js';
import { decryptReply, encryptCommand } from './wire-crypt.js';

export interface FuzzyUpstream {
  host: string;
  port: number;
}

export interface ExchangeOptions {
  /** Per attempt, in milliseconds. */
  timeoutMs: number;
  /** Extra attempts for commands still unanswered after a time-out. */
  retransmits: number;
  /** The server's public key: encrypt every command. */
  serverPublicKey?: Uint8Array;
  /** This side's keypair for encryption (one per rule and process, as Rspamd). */
  localKeypair?: KexKeypair;
  signal?: AbortSignal;
}

export interface ExchangeResult {
  /** Replies by command tag. */
  replies: Map<number, FuzzyReply>;
  /** Commands that never got an answer. */
  unanswered: number;
}

/** Default port of a fuzzy storage. */
export const FUZZY_PORT = 11335;

export function randomTag(): number {
  return randomBytes(4).readUInt32LE(0);
}

/** `host`, `host:port`, `[v6]:port` → an upstream. */
export function parseUpstream(text: string): FuzzyUpstream {
  const t = text.trim();
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : FUZZY_PORT };
  if (isIP(t) === 6) return { host: t, port: FUZZY_PORT };
  const i = t.lastIndexOf(':');
  if (i < 0) return { host: t, port: FUZZY_PORT };
  return { host: t.slice(0, i), port: Number(t.slice(i + 1)) };
}

/** Send `commands` to `server` and collect the replies. Never throws for network trouble. */
export function exchange(server: FuzzyUpstream, commands: readonly FuzzyCommand[], opts: ExchangeOptions): Promise<ExchangeResult> {
  const replies = new Map<number, FuzzyReply>();
  if (commands.length === 0) return Promise.resolve({ replies, unanswered: 0 });
  const sock = dgram.createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
  const packets = new Map<number, { packet: Buffer; nm?: Uint8Array }>();
  for (const c of commands) {
    const plain = encodeCommand(c);
    if (opts.serverPublicKey && opts.localKeypair) {
      const { packet, nm } = encryptCommand(plain, opts.serverPublicKey, opts.localKeypair);
      packets.set(c.tag, { packet, nm });
    } else packets.set(c.tag, { packet: plain });
  }
  const nm = [...packets.values()][0]?.nm;

  return new Promise<ExchangeResult>((resolve) => {
    let attempts = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', finish);
      try {
        sock.close();
      } catch {
        // already closed by a failed connect
      }
      resolve({ replies, unanswered: packets.size - [...packets.keys()].filter((t) => replies.has(t)).length });
    };
    const sendPending = (): void => {
      if (done) return;
      for (const [tag, p] of packets) {
        if (replies.has(tag)) continue;
        try {
          // A send that fails later reaches the socket's 'error' (finish); the retransmit timer
          // covers a datagram that is lost.
          sock.send(p.packet);
        } catch {
          // dgram throws at once on a socket without a peer or already closed: nothing can be sent.
          return finish();
        }
      }
      timer = setTimeout(() => {
        if (++attempts > opts.retransmits) finish();
        else sendPending();
      }, opts.timeoutMs);
    };
    sock.on('message', (msg) => {
      const plain = nm ? decryptReply(msg, nm) : msg;
      if (!plain) return;
      const r = decodeReply(plain);
      if (!r || !packets.has(r.tag) || replies.has(r.tag)) return;
      replies.set(r.tag, r);
      if (replies.size === packets.size) finish();
    });
    sock.on('error', finish);
    if (opts.signal?.aborted) return finish();
    opts.signal?.addEventListener('abort', finish);
    // Connected: only this server's datagrams reach the socket. A server that cannot be
    // reached (no route, a host name that does not resolve) is a server that did not answer.
    sock.connect(server.port, server.host, (err?: Error) => (err ? finish() : sendPending()));
  });
}
