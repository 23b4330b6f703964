// Client side of Rspamd's fuzzy UDP protocol: send a batch of commands to one
// storage server over a UDP transport, match replies by tag (the transport re-sends the
// unanswered ones on time-out).
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { KexKeypair } from '../../crypto/keypair.js';
import type { UdpRequest, UdpResult } from '../../net/types.js';
import { untaskedUdp } from '../../net/udp.js';
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

/**
 * How the datagrams travel. A scan passes its task's `udp.exchange`, so the exchange runs under
 * the task deadline and counts as the symbol's network call; code that serves no scan (the
 * controller's fuzzy endpoints and /fuzzystat) passes `untaskedUdp()`.
 */
export type UdpTransport = (req: UdpRequest) => Promise<UdpResult>;

/** Send `commands` to `server` and collect the replies. Never throws for network trouble. */
export async function exchange(server: FuzzyUpstream, commands: readonly FuzzyCommand[], opts: ExchangeOptions, send: UdpTransport = untaskedUdp()): Promise<ExchangeResult> {
  const replies = new Map<number, FuzzyReply>();
  if (commands.length === 0) return { replies, unanswered: 0 };
  const datagrams: Buffer[] = [];
  let nm: Uint8Array | undefined;
  for (const c of commands) {
    const plain = encodeCommand(c);
    if (opts.serverPublicKey && opts.localKeypair) {
      const sealed = encryptCommand(plain, opts.serverPublicKey, opts.localKeypair);
      nm ??= sealed.nm;
      datagrams.push(sealed.packet);
    } else datagrams.push(plain);
  }
  const indexOfTag = new Map(commands.map((c, i) => [c.tag, i]));
  const decoded: (FuzzyReply | undefined)[] = [];
  const res = await send({
    host: server.host,
    port: server.port,
    datagrams,
    timeout: opts.timeoutMs / 1000,
    retransmits: opts.retransmits,
    match(msg) {
      const plain = nm ? decryptReply(msg, nm) : msg;
      if (!plain) return undefined;
      const r = decodeReply(plain);
      const i = r ? indexOfTag.get(r.tag) : undefined;
      if (i === undefined || decoded[i]) return i;
      decoded[i] = r;
      return i;
    },
  });
  commands.forEach((c, i) => {
    const r = decoded[i];
    if (res.replies[i] && r) replies.set(c.tag, r);
  });
  return { replies, unanswered: commands.length - replies.size };
}
