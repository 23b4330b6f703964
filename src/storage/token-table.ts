// A hash table of Bayes token counts keyed by the token's two 32-bit halves: what a scan
// reads for each of its tokens, in tens of nanoseconds instead of a SQLite B-tree seek and a row
// object (docs/tuning.md, "Bayes token counts held in memory"). Open addressing with linear
// probing over typed arrays: 13 bytes a slot, no object per token. Counts are 16-bit in the
// slots; the rare token seen more often than that (a very common word of a large installation)
// keeps its counts in a side map.

/** Slots are doubled when this share of them is used. */
const MAX_LOAD = 0.7;
/** Slots of the smallest table: per-user statistics make many small scopes, each with a table. */
export const MIN_CAPACITY = 64;
/** Largest count a slot holds itself. */
const MAX_NARROW = 0xffff;
/** Bytes of a slot: hi and lo (4 each), spam and ham (2 each), state (1). */
const SLOT_BYTES = 13;
/** Rough bytes of a side-map entry (the map's slot and a two-element typed array). */
const WIDE_ENTRY_BYTES = 96;

/** What a slot holds. */
const enum Slot { Empty = 0, Narrow = 1, Wide = 2 }

// The slot arrays are set by #allocate, from the constructor and on growth.
export class TokenCountTable {
  #hi!: Uint32Array;
  #lo!: Uint32Array;
  #spam!: Uint16Array;
  #ham!: Uint16Array;
  /** Slot.*: the pair 0/0 is a valid token, so keys cannot mark an empty slot. */
  #state!: Uint8Array;
  /** Counts of the Wide slots, by slot index: [spam, ham]. */
  #wide!: Map<number, Uint32Array>;
  #mask!: number;
  #size = 0;
  /** One move's counts, read and written back: kept to avoid an array per move. */
  readonly #pair = new Uint32Array(2);

  constructor(expected = 0) {
    let cap = MIN_CAPACITY;
    while (cap * MAX_LOAD < expected) cap *= 2;
    this.#allocate(cap);
  }

  /** Empty slots for `cap` tokens (and an empty side map). */
  #allocate(cap: number): void {
    this.#mask = cap - 1;
    this.#hi = new Uint32Array(cap);
    this.#lo = new Uint32Array(cap);
    this.#spam = new Uint16Array(cap);
    this.#ham = new Uint16Array(cap);
    this.#state = new Uint8Array(cap);
    this.#wide = new Map();
  }

  /** Tokens held (with zero counts too, until the table is rebuilt). */
  get size(): number {
    return this.#size;
  }

  /** Bytes of the typed arrays and the side map. */
  get bytes(): number {
    return this.#state.length * SLOT_BYTES + this.#wide.size * WIDE_ENTRY_BYTES;
  }

  #slot(hi: number, lo: number): number {
    // Tokens are hashes already; the multiply mixes the high half into the bits the mask keeps.
    let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & this.#mask;
    while (this.#state[i] !== Slot.Empty && (this.#hi[i] !== hi || this.#lo[i] !== lo)) i = (i + 1) & this.#mask;
    return i;
  }

  /** Spam and ham counts of slot `i` into out[0] and out[1]; 0 and 0 when it is empty. */
  #read(i: number, out: Uint32Array): void {
    const state = this.#state[i];
    if (state === Slot.Narrow) {
      out[0] = this.#spam[i]!;
      out[1] = this.#ham[i]!;
    } else if (state === Slot.Wide) {
      const w = this.#wide.get(i)!;
      out[0] = w[0]!;
      out[1] = w[1]!;
    } else {
      out[0] = 0;
      out[1] = 0;
    }
  }

  /** Sets the counts of the claimed slot `i`, in the slot or the side map as they fit. */
  #write(i: number, spam: number, ham: number): void {
    if (spam <= MAX_NARROW && ham <= MAX_NARROW) {
      if (this.#state[i] === Slot.Wide) this.#wide.delete(i);
      this.#state[i] = Slot.Narrow;
      this.#spam[i] = spam;
      this.#ham[i] = ham;
      return;
    }
    this.#state[i] = Slot.Wide;
    this.#wide.set(i, Uint32Array.of(spam, ham));
  }

  /** Spam and ham counts of (hi, lo) into out[0] and out[1]; 0 and 0 when absent. */
  get(hi: number, lo: number, out: Uint32Array): void {
    this.#read(this.#slot(hi >>> 0, lo >>> 0), out);
  }

  /** Sets the counts of (hi, lo). */
  set(hi: number, lo: number, spam: number, ham: number): void {
    this.#write(this.#claim(hi >>> 0, lo >>> 0), spam, ham);
  }

  /**
   * Moves one learn's token, as the store's SQL does: +1 in `add`, −1 (never below 0) in `sub`.
   * `add`/`sub`: 0 none, 1 spam, 2 ham.
   */
  move(hi: number, lo: number, add: 0 | 1 | 2, sub: 0 | 1 | 2): void {
    const i = this.#claim(hi >>> 0, lo >>> 0);
    const p = this.#pair;
    this.#read(i, p);
    if (sub === 1 && p[0]! > 0) p[0]!--;
    else if (sub === 2 && p[1]! > 0) p[1]!--;
    if (add === 1) p[0]!++;
    else if (add === 2) p[1]!++;
    this.#write(i, p[0]!, p[1]!);
  }

  #claim(hi: number, lo: number): number {
    let i = this.#slot(hi, lo);
    if (this.#state[i] !== Slot.Empty) return i;
    if (this.#size + 1 > this.#state.length * MAX_LOAD) {
      this.#grow();
      i = this.#slot(hi, lo);
    }
    this.#state[i] = Slot.Narrow;
    this.#hi[i] = hi;
    this.#lo[i] = lo;
    this.#spam[i] = 0;
    this.#ham[i] = 0;
    this.#size++;
    return i;
  }

  #grow(): void {
    const [hi, lo, spam, ham, state, wide] = [this.#hi, this.#lo, this.#spam, this.#ham, this.#state, this.#wide];
    this.#allocate(state.length * 2);
    this.#size = 0;
    for (let j = 0; j < state.length; j++) {
      if (state[j] === Slot.Empty) continue;
      const i = this.#claim(hi[j]!, lo[j]!);
      if (state[j] === Slot.Wide) {
        const w = wide.get(j)!;
        this.#write(i, w[0]!, w[1]!);
      } else {
        this.#spam[i] = spam[j]!;
        this.#ham[i] = ham[j]!;
      }
    }
  }
}
