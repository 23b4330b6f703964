// Rspamd's fuzzy UDP protocol: command and reply layouts, little-endian, packed.
// Pure encoding and decoding; sockets live in client.ts and storage-server.ts.
import { SHINGLE_COUNT } from './digest.js';

export const FUZZY_CHECK = 0;
export const FUZZY_WRITE = 1;
export const FUZZY_DEL = 2;
export const FUZZY_STAT = 3;
export const FUZZY_PING = 4;
export type FuzzyCommandCode = 0 | 1 | 2 | 3 | 4;

/** Version byte: 3 = epoch 1.0 (16-byte replies), 4 = epoch 1.1 (96 bytes), 5 = epoch 1.2. */
export const PROTOCOL_VERSION = 4;
/** Bit a version-4 client sets to say it understands v2 (144-byte) replies. */
export const V2_CAPABILITY = 0x10;

export const DIGEST_BYTES = 64;
export const CMD_BYTES = 76;
export const SHINGLE_CMD_BYTES = CMD_BYTES + SHINGLE_COUNT * 8;
export const REPLY_V1_BYTES = 16;
export const REPLY_BYTES = 96;
export const REPLY_V2_BYTES = 144;
/** Extra lists a v2 reply can carry beside the primary flag. */
export const MAX_EXTRA_FLAGS = 7;
/** The longest datagram we accept: a shingle command with the largest extension block. */
export const MAX_PACKET_BYTES = 2048;

export interface FuzzyCommand {
  version: number;
  cmd: FuzzyCommandCode;
  flag: number;
  /** WRITE: weight to add; PING: a timestamp echoed back. */
  value: number;
  tag: number;
  /** 64 bytes. */
  digest: Buffer;
  /** 32 shingle hashes of a long text, or absent. */
  shingles?: bigint[];
  /** Raw extension TLVs that followed the command (sender domain, IP). */
  extensions?: Buffer;
}

export interface FuzzyReply {
  /** Hit count (CHECK), or an error code (401 skipped, 403 rate-limited, 415 encryption required, 503 forbidden). */
  value: number;
  flag: number;
  tag: number;
  /** 0..1; above 0.5 means found. */
  prob: number;
  /** Digest that is stored (for shingle matches, the matching entry's). */
  digest?: Buffer;
  /** Unix time the entry was first added. */
  ts?: number;
  /** Other lists the same digest is in (v2 replies). */
  extra?: Array<{ value: number; flag: number }>;
}

export type ReplyLayout = 'v1' | 'v1.1' | 'v2';

export function encodeCommand(c: FuzzyCommand): Buffer {
  const withShingles = c.shingles !== undefined && c.shingles.length === SHINGLE_COUNT;
  const ext = c.extensions ?? Buffer.alloc(0);
  const buf = Buffer.alloc((withShingles ? SHINGLE_CMD_BYTES : CMD_BYTES) + ext.length);
  buf.writeUInt8(c.version, 0);
  buf.writeUInt8(c.cmd, 1);
  buf.writeUInt8(withShingles ? SHINGLE_COUNT : 0, 2);
  buf.writeUInt8(c.flag & 0xff, 3);
  buf.writeInt32LE(c.value | 0, 4);
  buf.writeUInt32LE(c.tag >>> 0, 8);
  c.digest.copy(buf, 12, 0, DIGEST_BYTES);
  if (withShingles) for (let i = 0; i < SHINGLE_COUNT; i++) buf.writeBigUInt64LE(BigInt.asUintN(64, c.shingles![i]!), CMD_BYTES + i * 8);
  ext.copy(buf, withShingles ? SHINGLE_CMD_BYTES : CMD_BYTES);
  return buf;
}

/** Parse a plain command; undefined when the size or fields are not a valid command. */
export function decodeCommand(buf: Buffer): FuzzyCommand | undefined {
  if (buf.length < CMD_BYTES) return undefined;
  const version = buf.readUInt8(0);
  const base = version & ~V2_CAPABILITY;
  if (base < 3 || base > 5) return undefined;
  const cmd = buf.readUInt8(1);
  if (cmd > FUZZY_PING) return undefined;
  const count = buf.readUInt8(2);
  if (count !== 0 && count !== SHINGLE_COUNT) return undefined;
  const size = count ? SHINGLE_CMD_BYTES : CMD_BYTES;
  if (buf.length < size) return undefined;
  // Epoch 1.0 clients send exactly the structure, nothing after it.
  if (base === 3 && buf.length !== size) return undefined;
  const out: FuzzyCommand = {
    version,
    cmd: cmd as FuzzyCommandCode,
    flag: buf.readUInt8(3),
    value: buf.readInt32LE(4),
    tag: buf.readUInt32LE(8),
    digest: Buffer.from(buf.subarray(12, 12 + DIGEST_BYTES)),
  };
  if (count) {
    out.shingles = [];
    for (let i = 0; i < SHINGLE_COUNT; i++) out.shingles.push(buf.readBigUInt64LE(CMD_BYTES + i * 8));
  }
  if (buf.length > size) out.extensions = Buffer.from(buf.subarray(size));
  return out;
}

/** The reply layout a client expects, from its command's version byte. */
export function replyLayoutFor(version: number): ReplyLayout {
  if ((version & ~V2_CAPABILITY) === 3) return 'v1';
  if (version === 5 || (version & V2_CAPABILITY) !== 0) return 'v2';
  return 'v1.1';
}

export function encodeReply(r: FuzzyReply, layout: ReplyLayout): Buffer {
  const size = layout === 'v1' ? REPLY_V1_BYTES : layout === 'v1.1' ? REPLY_BYTES : REPLY_V2_BYTES;
  const buf = Buffer.alloc(size);
  buf.writeInt32LE(r.value | 0, 0);
  buf.writeUInt32LE(r.flag >>> 0, 4);
  buf.writeUInt32LE(r.tag >>> 0, 8);
  buf.writeFloatLE(r.prob, 12);
  if (layout === 'v1') return buf;
  r.digest?.copy(buf, 16, 0, DIGEST_BYTES);
  buf.writeUInt32LE((r.ts ?? 0) >>> 0, 80);
  if (layout === 'v2') {
    const extra = (r.extra ?? []).slice(0, MAX_EXTRA_FLAGS);
    buf.writeUInt8(extra.length, 84);
    extra.forEach((e, i) => {
      buf.writeInt32LE(e.value | 0, 88 + i * 8);
      buf.writeUInt32LE(e.flag >>> 0, 92 + i * 8);
    });
  }
  return buf;
}

/** Parse a plain reply of any of the three layouts (told apart by size). */
export function decodeReply(buf: Buffer): FuzzyReply | undefined {
  if (buf.length !== REPLY_V1_BYTES && buf.length !== REPLY_BYTES && buf.length !== REPLY_V2_BYTES) return undefined;
  const r: FuzzyReply = { value: buf.readInt32LE(0), flag: buf.readUInt32LE(4), tag: buf.readUInt32LE(8), prob: buf.readFloatLE(12) };
  if (buf.length === REPLY_V1_BYTES) return r;
  r.digest = Buffer.from(buf.subarray(16, 16 + DIGEST_BYTES));
  r.ts = buf.readUInt32LE(80);
  if (buf.length === REPLY_V2_BYTES) {
    const n = Math.min(buf.readUInt8(84), MAX_EXTRA_FLAGS);
    r.extra = [];
    for (let i = 0; i < n; i++) r.extra.push({ value: buf.readInt32LE(88 + i * 8), flag: buf.readUInt32LE(92 + i * 8) });
  }
  return r;
}
