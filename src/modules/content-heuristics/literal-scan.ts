// Which of a fixed set of lower-case ASCII literals a text contains, ASCII letters in either case,
// in one pass over the text (an Aho–Corasick automaton compiled to a transition table). The body
// rules gate some eighty regexps on over a hundred literals; one `includes` per literal read each
// body that many times. The npm Aho–Corasick packages match by Unicode grapheme and collect match
// objects, which measured over a hundred times slower than the substring searches they replace.

export class LiteralScanner {
  readonly #literals: string[];
  /** Character code (< 128) → alphabet class; 0 for a character no literal contains. */
  readonly #classOf = new Uint8Array(128);
  readonly #width: number;
  /** state × class → next state. */
  readonly #next: Uint16Array;
  /** Per state, the literals ending there (through failure links too); empty for most states. */
  readonly #ends: number[][];
  /** 1 where #ends is not empty: the scan loop tests a byte, not an array length. */
  readonly #final: Uint8Array;

  constructor(literals: Iterable<string>) {
    this.#literals = [...new Set(literals)];
    let width = 1;
    for (const l of this.#literals) {
      for (let i = 0; i < l.length; i++) {
        const c = l.charCodeAt(i);
        if (c >= 128 || (c >= 0x41 && c <= 0x5a)) throw new Error(`literal scanner: not lower-case ASCII: ${JSON.stringify(l)}`);
        if (this.#classOf[c] === 0) this.#classOf[c] = width++;
      }
    }
    this.#width = width;
    // Upper-case ASCII letters take their lower-case letter's class: the text needs no lower-casing.
    for (let c = 0x41; c <= 0x5a; c++) this.#classOf[c] = this.#classOf[c + 0x20]!;
    // The trie, with -1 for a missing edge.
    const edges: Int32Array[] = [new Int32Array(width).fill(-1)];
    const ends: number[][] = [[]];
    this.#literals.forEach((l, id) => {
      let s = 0;
      for (let i = 0; i < l.length; i++) {
        const k = this.#classOf[l.charCodeAt(i)]!;
        if (edges[s]![k]! < 0) {
          edges[s]![k] = edges.length;
          edges.push(new Int32Array(width).fill(-1));
          ends.push([]);
        }
        s = edges[s]![k]!;
      }
      ends[s]!.push(id);
    });
    if (edges.length > 0xffff) throw new Error('literal scanner: too many literals');
    // Breadth first: each missing edge takes the failure state's edge, so every step is one lookup.
    const fail = new Int32Array(edges.length);
    const queue: number[] = [];
    for (let k = 0; k < width; k++) {
      const s = edges[0]![k]!;
      if (s > 0) queue.push(s);
      else edges[0]![k] = 0;
    }
    edges[0]![0] = 0;
    for (let head = 0; head < queue.length; head++) {
      const r = queue[head]!;
      for (let k = 0; k < width; k++) {
        const s = edges[r]![k]!;
        if (k === 0) edges[r]![0] = 0;
        else if (s < 0) edges[r]![k] = edges[fail[r]!]![k]!;
        else {
          fail[s] = edges[fail[r]!]![k]!;
          ends[s] = ends[s]!.concat(ends[fail[s]!]!);
          queue.push(s);
        }
      }
    }
    this.#next = new Uint16Array(edges.length * width);
    edges.forEach((row, s) => this.#next.set(row, s * width));
    this.#ends = ends;
    this.#final = Uint8Array.from(ends, (e) => (e.length > 0 ? 1 : 0));
  }

  /** The literals `text` contains, ignoring the case of ASCII letters. */
  scan(text: string): Set<string> {
    const found = new Set<string>();
    const next = this.#next;
    const classOf = this.#classOf;
    const final = this.#final;
    const width = this.#width;
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      s = next[s * width + (c < 128 ? classOf[c]! : 0)]!;
      if (final[s] === 1) for (const id of this.#ends[s]!) found.add(this.#literals[id]!);
    }
    return found;
  }
}
