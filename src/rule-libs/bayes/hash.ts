// 64-bit token hashing for the Bayes tokeniser. Rspamd uses XXH64 over the word's bytes;
// storage compatibility with Rspamd is not a goal, so mailsift hashes the
// word's UTF-16 code units directly with two independent 32-bit murmur3-style lanes: no UTF-8
// encoding and no BigInt on the hot path. Tokens stay as (hi, lo) uint32 pairs until they
// reach a store, which wants bigint.

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
/** Lane seeds: any two distinct odd constants; changing them invalidates learned statistics. */
const SEED_HI = 0xdeadbabe;
const SEED_LO = 0x9e3779b9;

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Writes the two 32-bit halves of the hash of `s` into out[0] (high) and out[1] (low). */
export function hashWord(s: string, out: Uint32Array): void {
  let a = SEED_HI;
  let b = SEED_LO;
  const n = s.length;
  let i = 0;
  // Two code units per block: a 32-bit value per round, like murmur3's 4-byte blocks.
  for (; i + 1 < n; i += 2) {
    const k0 = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
    let k = Math.imul(k0, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    a ^= k;
    a = (a << 13) | (a >>> 19);
    a = (Math.imul(a, 5) + 0xe6546b64) | 0;
    let m = Math.imul(k0 ^ 0x5bd1e995, C2);
    m = (m << 17) | (m >>> 15);
    m = Math.imul(m, C1);
    b ^= m;
    b = (b << 11) | (b >>> 21);
    b = (Math.imul(b, 9) + 0x52dce729) | 0;
  }
  if (i < n) {
    const k0 = s.charCodeAt(i);
    let k = Math.imul(k0, C1);
    k = (k << 15) | (k >>> 17);
    a ^= Math.imul(k, C2);
    let m = Math.imul(k0 ^ 0x5bd1e995, C2);
    m = (m << 17) | (m >>> 15);
    b ^= Math.imul(m, C1);
  }
  a ^= n;
  b ^= n * 3;
  out[0] = fmix(a);
  out[1] = fmix(b ^ fmix(a));
}

/** The (hi, lo) pair as one unsigned 64-bit bigint. */
export function toBigInt(hi: number, lo: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}
