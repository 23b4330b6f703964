// Digests and shingles exactly as Rspamd computes them: keyed BLAKE2b-512
// digests, and 32 min-hash shingles over a sliding window of 3 stemmed words.
import { blake2b } from '@noble/hashes/blake2.js';
import { mumHash, siphash24, xxHash64 } from './fast-hash.js';

export const SHINGLE_COUNT = 32;
const SHINGLE_WINDOW = 3;
const DIGEST_BYTES = 64;

export type FuzzyAlgorithm = 'old' | 'siphash' | 'mumhash' | 'xxhash';

/** The keys one rule hashes with, derived once per rule. */
export interface FuzzyKeys {
  /** 64-byte key of the digests: BLAKE2b-512(fuzzy_key). */
  hashKey: Uint8Array;
  /** 32 per-shingle keys, 16 bytes each, chained from the shingles key. */
  shingleKeys: Uint8Array[];
  /** First 8 bytes of each shingle key as a little-endian u64 (seeds of the fast hashes). */
  seeds: bigint[];
}

const keyCache = new Map<string, FuzzyKeys>();

/** Keys for `fuzzy_key` / `fuzzy_shingles_key` strings (both default to "rspamd"). */
export function fuzzyKeys(fuzzyKey = 'rspamd', shinglesKey = 'rspamd'): FuzzyKeys {
  const id = `${fuzzyKey}\0${shinglesKey}`;
  let k = keyCache.get(id);
  if (k) return k;
  const hashKey = blake2b(Buffer.from(fuzzyKey));
  let cur = blake2b(Buffer.from(shinglesKey)).subarray(0, 16);
  const shingleKeys: Uint8Array[] = [];
  const seeds: bigint[] = [];
  for (let j = 0; j < SHINGLE_COUNT; j++) {
    cur = blake2b(cur).subarray(0, 16);
    shingleKeys.push(cur);
    seeds.push(Buffer.from(cur).readBigUInt64LE(0));
  }
  k = { hashKey, shingleKeys, seeds };
  keyCache.set(id, k);
  return k;
}

/** The default key: BLAKE2b-512("rspamd"), also the fixed key of MIME part digests. */
export const DEFAULT_KEYS = fuzzyKeys();

/** Keyed BLAKE2b-512 over the concatenation of `chunks`. */
export function keyedDigest(key: Uint8Array, chunks: Iterable<Uint8Array>): Buffer {
  const h = blake2b.create({ key, dkLen: DIGEST_BYTES });
  for (const c of chunks) h.update(c);
  return Buffer.from(h.digest());
}

/** Digest of a long text: keyed BLAKE2b over all stemmed words, no separators. */
export function textDigest(words: readonly string[], keys: FuzzyKeys = DEFAULT_KEYS): Buffer {
  return keyedDigest(keys.hashKey, words.map((w) => Buffer.from(w, 'utf8')));
}

/** Digest of a short text (direct hash): the stripped text followed by the subject. */
export function shortTextDigest(text: string, subject: string | undefined, keys: FuzzyKeys = DEFAULT_KEYS): Buffer {
  const chunks = [Buffer.from(text, 'utf8')];
  if (subject) chunks.push(Buffer.from(subject, 'utf8'));
  return keyedDigest(keys.hashKey, chunks);
}

/** Digest of binary content (images, attachments): always keyed with BLAKE2b-512("rspamd"). */
export function dataDigest(content: Uint8Array): Buffer {
  return keyedDigest(DEFAULT_KEYS.hashKey, [content]);
}

/** 32 shingles of a word list; the window and min-hash follow shingles.c. */
export function shingles(words: readonly string[], alg: FuzzyAlgorithm = 'old', keys: FuzzyKeys = DEFAULT_KEYS): bigint[] {
  const n = words.length;
  const positions = n > SHINGLE_WINDOW ? n - SHINGLE_WINDOW + 1 : 1;
  const min: bigint[] = new Array<bigint>(SHINGLE_COUNT).fill((1n << 64n) - 1n);
  // Every per-word hash depends only on the word and the shingle key: computed once per distinct word.
  const perWord = new Map<string, bigint[]>();
  if (alg === 'old' || alg === 'siphash') {
    // Rspamd 3.4's word cursor does not advance inside a window, so each row is the window's
    // first word repeated once per window slot; stored shingles only match if we do the same.
    const copies = Math.min(n, SHINGLE_WINDOW);
    for (let beg = 0; beg < positions; beg++) {
      const w = words[beg] ?? '';
      if (perWord.has(w)) continue; // same row, same values: the minimum cannot change
      const one = Buffer.from(w, 'utf8');
      const row = Buffer.concat(new Array<Buffer>(copies).fill(one));
      const hs = keys.shingleKeys.map((k) => siphash24(k, row));
      perWord.set(w, hs);
      for (let j = 0; j < SHINGLE_COUNT; j++) if (hs[j]! < min[j]!) min[j] = hs[j]!;
    }
    return min;
  }
  const fast = alg === 'mumhash' ? mumHash : xxHash64;
  const win: bigint[] = new Array<bigint>(SHINGLE_COUNT * SHINGLE_WINDOW).fill(0n);
  for (let beg = 0; beg < positions; beg++) {
    const w = words[beg] ?? '';
    let hs = perWord.get(w);
    if (!hs) {
      const bytes = Buffer.from(w, 'utf8');
      hs = keys.seeds.map((seed) => fast(bytes, seed));
      perWord.set(w, hs);
    }
    for (let j = 0; j < SHINGLE_COUNT; j++) {
      const o = j * SHINGLE_WINDOW;
      win[o] = win[o + 1]!;
      win[o + 1] = win[o + 2]!;
      win[o + 2] = hs[j]!;
      const v = (win[o]! >> 16n) ^ (win[o + 1]! >> 8n) ^ win[o + 2]!;
      if (v < min[j]!) min[j] = v;
    }
  }
  return min;
}

/** Share of equal shingle positions, 0..1. */
export function shingleSimilarity(a: readonly bigint[], b: readonly bigint[]): number {
  let common = 0;
  for (let i = 0; i < SHINGLE_COUNT; i++) if (a[i] === b[i]) common++;
  return common / SHINGLE_COUNT;
}
