// The fuzzer's only source of randomness. Every input is drawn from its own generator, seeded
// from (campaign seed, surface, input index), so input N of a surface is the same bytes on every
// run with that seed, whatever the concurrency or the order in which replies arrive.

/** FNV-1a over a string: turns a surface name into 32 bits of seed. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Characters the generators of one input may produce in all. Generators nest (a MIME tree of
 * parts holding messages holding trees, a header of 5 000 addresses copied 5 000 times), so
 * without one budget for the whole input the product of their counts can reach gigabytes.
 */
export const GENERATION_BUDGET = 16 * 1024 * 1024;

/** A small, fast, seedable generator (sfc32) with the helpers the mutators need. */
export class Rng {
  #budget = GENERATION_BUDGET;
  /**
   * a, b, c, d of sfc32. In a typed array, not in four fields: 32-bit values do not fit V8's
   * small integers, so fields would hold boxed numbers and every draw would allocate (a draw
   * cost ~40 ns that way, ~7 ns here; generation makes millions of draws a minute).
   */
  readonly #s = new Int32Array(4);

  constructor(...seeds: number[]) {
    const s = this.#s;
    s[0] = seeds[0] ?? 0;
    s[1] = seeds[1] ?? 0x9e3779b9;
    s[2] = seeds[2] ?? 0x243f6a88;
    s[3] = 1;
    // Mix the state so nearby seeds give unrelated streams.
    for (let i = 0; i < 15; i++) this.u32();
  }

  /** The generator of input `index` of `surface` in the campaign seeded with `seed`. */
  static forInput(seed: number, surface: string, index: number): Rng {
    return new Rng(seed, fnv1a(surface), index);
  }

  /** Takes `n` characters from the input's budget; false once it is spent (the caller stops adding). */
  spend(n: number): boolean {
    this.#budget -= n;
    return this.#budget >= 0;
  }

  u32(): number {
    // Int32Array stores keep the low 32 bits, which is the arithmetic modulo 2^32 sfc32 wants.
    const s = this.#s;
    const a = s[0]!, b = s[1]!, c = s[2]!, d = s[3]!;
    const t = (a + b + d) | 0;
    s[3] = d + 1;
    s[0] = b ^ (b >>> 9);
    s[1] = c + (c << 3);
    s[2] = ((c << 21) | (c >>> 11)) + t;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.u32() / 0x1_0000_0000;
  }

  /** An integer in [0, n); 0 when n <= 0. */
  int(n: number): number {
    return n <= 0 ? 0 : Math.floor(this.float() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(items: ReadonlyArray<readonly [number, T]>): T {
    let total = 0;
    for (const [w] of items) total += w;
    let x = this.float() * total;
    for (const [w, v] of items) {
      x -= w;
      if (x < 0) return v;
    }
    return items[items.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }

  /**
   * A count skewed towards small values but reaching `max` now and then: most mutations want
   * 1–3 of something, the interesting ones want thousands (superlinear costs show up there).
   */
  count(max: number): number {
    const r = this.float();
    if (r < 0.6) return this.range(1, Math.min(3, max));
    if (r < 0.85) return this.range(1, Math.min(50, max));
    if (r < 0.97) return this.range(1, Math.min(2000, max));
    return this.range(1, max);
  }

  /** A string of `n` characters drawn from `alphabet`. */
  str(n: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
}
