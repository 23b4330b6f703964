// Helpers shared by both Bayes back ends. Tokens are unsigned 64-bit hashes; SQLite stores
// them as signed INTEGERs (same bits), Redis as decimal field names.

const U64_MASK = (1n << 64n) - 1n;

/** A token reduced to 64 bits (callers may hand in any bigint). */
export function u64(t: bigint): bigint {
  return t & U64_MASK;
}

export function toSigned(t: bigint): bigint {
  return BigInt.asIntN(64, t);
}

export function fromSigned(t: bigint): bigint {
  return BigInt.asUintN(64, t);
}

/**
 * The decimal text of the signed 64-bit integer whose halves are `hi` and `lo` (unsigned 32-bit),
 * as SQLite stores a token, without BigInt: a scan writes about 200 of these.
 */
export function signedDecimal(hi: number, lo: number): string {
  let h = hi >>> 0;
  let l = lo >>> 0;
  let sign = '';
  if (h >= 0x80000000) {
    // Two's complement: the magnitude of a negative value is ~x + 1.
    sign = '-';
    l = (~l + 1) >>> 0;
    h = (~h + (l === 0 ? 1 : 0)) >>> 0;
  }
  // h·2^32 + l = h·429 496·10^4 + (h·7 296 + l): both terms stay below 2^53.
  let high = h * 429_496;
  let low = h * 7_296 + l;
  high += Math.floor(low / 10_000);
  low %= 10_000;
  return high > 0 ? `${sign}${high}${String(low).padStart(4, '0')}` : `${sign}${low}`;
}

/** A message counts once per distinct token when it is learned. */
export function distinctTokens(tokens: readonly bigint[]): bigint[] {
  return [...new Set(tokens.map(u64))];
}

/** Rows handed to importTokens or importAll are written in batches of this size (one transaction or pipeline each). */
export const IMPORT_BATCH = 1000;

/** Export reads this many rows per query or HSCAN step, so a big statfile never sits in memory. */
export const EXPORT_PAGE = 1000;

/**
 * Learn-cache entries kept per scope: the digests of the last this-many learns. Rspamd keeps up
 * to 6 × 10 000 ids in rotating hashes; past the bound the oldest learns are forgotten, so
 * learning one of them again counts it twice (or, in the other class, without moving its tokens).
 */
export const DEFAULT_LEARN_CACHE_SIZE = 60_000;
