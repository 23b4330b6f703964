// A hash table of Bayes token counts keyed by the token's two 32-bit halves: what a scan
// reads for each of its tokens, in tens of nanoseconds instead of a SQLite B-tree seek and a row
// object (docs/tuning.md, "Bayes token counts held in memory"). Open addressing with linear
// probing over typed arrays: about 17 bytes a slot, no object per token.

/** Slots are doubled when this share of them is used. */
const MAX_LOAD = 0.7;
/** Slots of the smallest table: per-user statistics make many small scopes, each with a table. */
export const MIN_CAPACITY = 64;

/** hi, lo, spam, ham and used of `cap` empty slots. */
function slotArrays(cap: number): [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint8Array] {
  return [new Uint32Array(cap), new Uint32Array(cap), new Uint32Array(cap), new Uint32Array(cap), new Uint8Array(cap)];
}

export class TokenCountTable {
  #hi: Uint32Array;
  #lo: Uint32Array;
  #spam: Uint32Array;
  #ham: Uint32Array;
  /** 1 where a slot holds a token (the pair 0/0 is a valid token, so keys cannot mark it). */
  #used: Uint8Array;
  #mask: number;
  #size = 0;

  constructor(expected = 0) {
    let cap = MIN_CAPACITY;
    while (cap * MAX_LOAD < expected) cap *= 2;
    this.#mask = cap - 1;
    [this.#hi, this.#lo, this.#spam, this.#ham, this.#used] = slotArrays(cap);
  }

  /** Tokens held (with zero counts too, until the table is rebuilt). */
  get size(): number {
    return this.#size;
  }

  /** Bytes of the typed arrays. */
  get bytes(): number {
    return this.#used.length * 17;
  }

  #slot(hi: number, lo: number): number {
    // Tokens are hashes already; the multiply mixes the high half into the bits the mask keeps.
    let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & this.#mask;
    while (this.#used[i] === 1 && (this.#hi[i] !== hi || this.#lo[i] !== lo)) i = (i + 1) & this.#mask;
    return i;
  }

  /** Spam and ham counts of (hi, lo) into out[0] and out[1]; 0 and 0 when absent. */
  get(hi: number, lo: number, out: Uint32Array): void {
    const i = this.#slot(hi >>> 0, lo >>> 0);
    if (this.#used[i] === 1) {
      out[0] = this.#spam[i]!;
      out[1] = this.#ham[i]!;
    } else {
      out[0] = 0;
      out[1] = 0;
    }
  }

  /** Sets the counts of (hi, lo). */
  set(hi: number, lo: number, spam: number, ham: number): void {
    const i = this.#claim(hi >>> 0, lo >>> 0);
    this.#spam[i] = spam;
    this.#ham[i] = ham;
  }

  /**
   * Moves one learn's token, as the store's SQL does: +1 in `add`, −1 (never below 0) in `sub`.
   * `add`/`sub`: 0 none, 1 spam, 2 ham.
   */
  move(hi: number, lo: number, add: 0 | 1 | 2, sub: 0 | 1 | 2): void {
    const i = this.#claim(hi >>> 0, lo >>> 0);
    if (sub === 1 && this.#spam[i]! > 0) this.#spam[i]!--;
    else if (sub === 2 && this.#ham[i]! > 0) this.#ham[i]!--;
    if (add === 1) this.#spam[i]!++;
    else if (add === 2) this.#ham[i]!++;
  }

  #claim(hi: number, lo: number): number {
    let i = this.#slot(hi, lo);
    if (this.#used[i] === 1) return i;
    if (this.#size + 1 > this.#used.length * MAX_LOAD) {
      this.#grow();
      i = this.#slot(hi, lo);
    }
    this.#used[i] = 1;
    this.#hi[i] = hi;
    this.#lo[i] = lo;
    this.#spam[i] = 0;
    this.#ham[i] = 0;
    this.#size++;
    return i;
  }

  #grow(): void {
    const [hi, lo, spam, ham, used] = [this.#hi, this.#lo, this.#spam, this.#ham, this.#used];
    const cap = used.length * 2;
    this.#mask = cap - 1;
    [this.#hi, this.#lo, this.#spam, this.#ham, this.#used] = slotArrays(cap);
    this.#size = 0;
    for (let j = 0; j < used.length; j++) {
      if (used[j] !== 1) continue;
      const i = this.#claim(hi[j]!, lo[j]!);
      this.#spam[i] = spam[j]!;
      this.#ham[i] = ham[j]!;
    }
  }
}
