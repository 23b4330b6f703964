// The 64-bit hash functions Rspamd uses for shingles: SipHash-2-4 (algorithm
// `old`), MUM hash (`mumhash`, x86-64 variant) and XXH64 (`xxhash`). Stored shingles are only
// comparable when every scanner computes them bit for bit the same, so these follow the
// reference definitions exactly; BigInt keeps the 64/128-bit arithmetic exact.

const M64 = (1n << 64n) - 1n;

function u64le(b: Uint8Array, off: number): bigint {
  const dv = new DataView(b.buffer, b.byteOffset + off, 8);
  return dv.getBigUint64(0, true);
}

function rotl(x: bigint, r: bigint): bigint {
  return ((x << r) | (x >> (64n - r))) & M64;
}

// SipHash state as 32-bit halves: [v0l, v0h, v1l, v1h, v2l, v2h, v3l, v3h].
const sip = new Uint32Array(8);

function sipRound(v: Uint32Array): void {
  let l: number, h: number, t: number;
  l = (v[0]! + v[2]!) >>> 0; v[1] = v[1]! + v[3]! + (l < v[0]! ? 1 : 0); v[0] = l; // v0 += v1
  h = (v[3]! << 13) | (v[2]! >>> 19); l = (v[2]! << 13) | (v[3]! >>> 19); v[3] = h ^ v[1]!; v[2] = l ^ v[0]!; // v1 = rotl13 ^ v0
  t = v[1]!; v[1] = v[0]!; v[0] = t; // v0 = rotl32
  l = (v[4]! + v[6]!) >>> 0; v[5] = v[5]! + v[7]! + (l < v[4]! ? 1 : 0); v[4] = l; // v2 += v3
  h = (v[7]! << 16) | (v[6]! >>> 16); l = (v[6]! << 16) | (v[7]! >>> 16); v[7] = h ^ v[5]!; v[6] = l ^ v[4]!; // v3 = rotl16 ^ v2
  l = (v[0]! + v[6]!) >>> 0; v[1] = v[1]! + v[7]! + (l < v[0]! ? 1 : 0); v[0] = l; // v0 += v3
  h = (v[7]! << 21) | (v[6]! >>> 11); l = (v[6]! << 21) | (v[7]! >>> 11); v[7] = h ^ v[1]!; v[6] = l ^ v[0]!; // v3 = rotl21 ^ v0
  l = (v[4]! + v[2]!) >>> 0; v[5] = v[5]! + v[3]! + (l < v[4]! ? 1 : 0); v[4] = l; // v2 += v1
  h = (v[3]! << 17) | (v[2]! >>> 15); l = (v[2]! << 17) | (v[3]! >>> 15); v[3] = h ^ v[5]!; v[2] = l ^ v[4]!; // v1 = rotl17 ^ v2
  t = v[5]!; v[5] = v[4]!; v[4] = t; // v2 = rotl32
}

function sipCompress(v: Uint32Array, ml: number, mh: number): void {
  v[6] = v[6]! ^ ml; v[7] = v[7]! ^ mh;
  sipRound(v); sipRound(v);
  v[0] = v[0]! ^ ml; v[1] = v[1]! ^ mh;
}

/**
 * SipHash-2-4 with a 16-byte key; the 8 output bytes read as a little-endian u64. Computed on
 * 32-bit halves in a typed array (which wraps every store to 32 bits): shingles of the default
 * algorithm hash every distinct word 32 times, and BigInt arithmetic there would dominate a scan.
 */
export function siphash24(key: Uint8Array, data: Uint8Array): bigint {
  const kv = new DataView(key.buffer, key.byteOffset, 16);
  const k0l = kv.getUint32(0, true), k0h = kv.getUint32(4, true);
  const k1l = kv.getUint32(8, true), k1h = kv.getUint32(12, true);
  const v = sip;
  v[0] = k0l ^ 0x70736575; v[1] = k0h ^ 0x736f6d65;
  v[2] = k1l ^ 0x6e646f6d; v[3] = k1h ^ 0x646f7261;
  v[4] = k0l ^ 0x6e657261; v[5] = k0h ^ 0x6c796765;
  v[6] = k1l ^ 0x79746573; v[7] = k1h ^ 0x74656462;
  const len = data.length;
  const whole = len - (len % 8);
  const dv = new DataView(data.buffer, data.byteOffset, len);
  for (let i = 0; i < whole; i += 8) sipCompress(v, dv.getUint32(i, true), dv.getUint32(i + 4, true));
  let bl = 0, bh = (len & 0xff) << 24;
  for (let i = 0; i < len % 8; i++) {
    const b = data[whole + i]!;
    if (i < 4) bl |= b << (8 * i);
    else bh |= b << (8 * (i - 4));
  }
  sipCompress(v, bl >>> 0, bh >>> 0);
  v[4] = v[4]! ^ 0xff;
  sipRound(v); sipRound(v); sipRound(v); sipRound(v);
  const rl = (v[0]! ^ v[2]! ^ v[4]! ^ v[6]!) >>> 0;
  const rh = (v[1]! ^ v[3]! ^ v[5]! ^ v[7]!) >>> 0;
  return (BigInt(rh) << 32n) | BigInt(rl);
}

// MUM hash constants (x86-64 build: unroll factor 4, so only the first 4 primes are used;
// checked against Rspamd 3.4 with a 47-byte word, which takes the unrolled path).
const MUM_PRIMES = [0x9ebdcae10d981691n, 0x32b9b9b97a27ac7dn, 0x29b5584d83d35bbdn, 0x4b04e0e61401255fn];
const MUM_BLOCK_START = 0xc42b5e2e6480b23bn;
const MUM_UNROLL = 0x7b51ec3d22f7096fn;
const MUM_TAIL = 0xaf47d47c99b1461bn;
const MUM_FINISH1 = 0xa9a7ae7ceff79f3fn;
const MUM_FINISH2 = 0xaf47d47c99b1461bn;
const MUM_UNROLL_FACTOR = 4;

function mum(v: bigint, p: bigint): bigint {
  const r = v * p;
  return ((r >> 64n) + (r & M64)) & M64;
}

/** Vladimir Makarov's MUM hash, as Rspamd's `mum_hash(data, len, seed)`. */
export function mumHash(data: Uint8Array, seed: bigint): bigint {
  let len = data.length;
  let off = 0;
  let r = (seed + BigInt(len)) & M64;
  r = mum(r, MUM_BLOCK_START);
  while (len > MUM_UNROLL_FACTOR * 8) {
    for (let i = 0; i < MUM_UNROLL_FACTOR; i++) r ^= mum(u64le(data, off + 8 * i), MUM_PRIMES[i]!);
    len -= MUM_UNROLL_FACTOR * 8;
    off += MUM_UNROLL_FACTOR * 8;
    r = mum(r, MUM_UNROLL);
  }
  const n = Math.floor(len / 8);
  for (let i = 0; i < n; i++) r ^= mum(u64le(data, off + 8 * i), MUM_PRIMES[i]!);
  off += n * 8;
  len -= n * 8;
  if (len > 0) {
    let t = 0n;
    for (let i = 0; i < len; i++) t |= BigInt(data[off + i]!) << BigInt(8 * i);
    r ^= mum(t, MUM_TAIL);
  }
  r ^= mum(r, MUM_FINISH1);
  r ^= mum(r, MUM_FINISH2);
  return r;
}

const P1 = 11400714785074694791n;
const P2 = 14029467366897019727n;
const P3 = 1609587929392839161n;
const P4 = 9650029242287828579n;
const P5 = 2870177450012600261n;

function xxRound(acc: bigint, input: bigint): bigint {
  acc = (acc + input * P2) & M64;
  acc = rotl(acc, 31n);
  return (acc * P1) & M64;
}

function xxMerge(acc: bigint, val: bigint): bigint {
  acc ^= xxRound(0n, val);
  return (acc * P1 + P4) & M64;
}

/** XXH64 with a 64-bit seed. */
export function xxHash64(data: Uint8Array, seed: bigint): bigint {
  const len = data.length;
  let off = 0;
  let h: bigint;
  if (len >= 32) {
    let v1 = (seed + P1 + P2) & M64;
    let v2 = (seed + P2) & M64;
    let v3 = seed & M64;
    let v4 = (seed - P1) & M64;
    while (off + 32 <= len) {
      v1 = xxRound(v1, u64le(data, off));
      v2 = xxRound(v2, u64le(data, off + 8));
      v3 = xxRound(v3, u64le(data, off + 16));
      v4 = xxRound(v4, u64le(data, off + 24));
      off += 32;
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    h = xxMerge(h, v1); h = xxMerge(h, v2); h = xxMerge(h, v3); h = xxMerge(h, v4);
  } else {
    h = (seed + P5) & M64;
  }
  h = (h + BigInt(len)) & M64;
  while (off + 8 <= len) {
    h ^= xxRound(0n, u64le(data, off));
    h = (rotl(h, 27n) * P1 + P4) & M64;
    off += 8;
  }
  if (off + 4 <= len) {
    const w = BigInt(new DataView(data.buffer, data.byteOffset + off, 4).getUint32(0, true));
    h ^= (w * P1) & M64;
    h = (rotl(h, 23n) * P2 + P3) & M64;
    off += 4;
  }
  while (off < len) {
    h ^= (BigInt(data[off]!) * P5) & M64;
    h = (rotl(h, 11n) * P1) & M64;
    off++;
  }
  h ^= h >> 33n; h = (h * P2) & M64;
  h ^= h >> 29n; h = (h * P3) & M64;
  h ^= h >> 32n;
  return h;
}
