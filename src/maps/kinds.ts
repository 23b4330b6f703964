// Compiled map data per kind. Everything is built once per (re)load; a
// lookup never compiles anything. A map reload builds a new MapData and swaps it in whole.

import type { MapEntry } from './parse-lines.js';
import { RadixTable } from './radix.js';
import type { MapKind } from './types.js';

/** Value of a key listed without one (Rspamd's default map value). */
export const DEFAULT_MAP_VALUE = '1';

export interface MapData {
  get(key: string): string | undefined;
  getAll(key: string): string[];
  readonly size: number;
  /** Entries that could not be compiled (bad regexp, bad CIDR), for a load warning. */
  readonly rejected: number;
  /** The keys, for kinds that store them as written (set, hash). */
  keys?(): Iterable<string>;
}

class HashData implements MapData {
  readonly #m = new Map<string, string>();
  rejected = 0;
  constructor(entries: readonly MapEntry[]) {
    for (const e of entries) if (!this.#m.has(e.key)) this.#m.set(e.key, e.value ?? DEFAULT_MAP_VALUE);
  }
  get size(): number {
    return this.#m.size;
  }
  keys(): Iterable<string> {
    return this.#m.keys();
  }
  get(key: string): string | undefined {
    return this.#m.get(key);
  }
  getAll(key: string): string[] {
    const v = this.#m.get(key);
    return v === undefined ? [] : [v];
  }
}

class RadixData implements MapData {
  readonly #t = new RadixTable();
  rejected = 0;
  constructor(entries: readonly MapEntry[]) {
    for (const e of entries) if (!this.#t.insert(e.key, e.value ?? DEFAULT_MAP_VALUE)) this.rejected++;
  }
  get size(): number {
    return this.#t.size;
  }
  get(key: string): string | undefined {
    return this.#t.lookup(key);
  }
  getAll(key: string): string[] {
    const v = this.#t.lookup(key);
    return v === undefined ? [] : [v];
  }
}

/** JS supports i, m, s, u of PCRE's flags; the rest (x, O, r, L …) change nothing we can honour. */
function jsFlags(flags: string): string {
  let out = '';
  for (const f of 'imsu') if (flags.includes(f)) out += f;
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.+^${}()|[\]\\]/g, '\\$&');
}

/** Shell glob → anchored regexp: `*` any run, `?` one character; everything else literal. */
export function globToRegExp(glob: string): RegExp {
  let src = '';
  for (const c of glob) src += c === '*' ? '.*' : c === '?' ? '.' : escapeRegExp(c);
  return new RegExp(`^${src}$`, 'i');
}

class RegexpData implements MapData {
  readonly #list: Array<{ re: RegExp; value: string }> = [];
  rejected = 0;
  readonly #multi: boolean;
  constructor(entries: readonly MapEntry[], glob: boolean, multi: boolean) {
    this.#multi = multi;
    for (const e of entries) {
      try {
        const re = glob ? globToRegExp(e.key) : e.regexp ? new RegExp(e.regexp.source, jsFlags(e.regexp.flags)) : new RegExp(e.key);
        this.#list.push({ re, value: e.value ?? DEFAULT_MAP_VALUE });
      } catch {
        this.rejected++;
      }
    }
  }
  get size(): number {
    return this.#list.length;
  }
  get(key: string): string | undefined {
    for (const { re, value } of this.#list) if (re.test(key)) return value;
    return undefined;
  }
  getAll(key: string): string[] {
    if (!this.#multi) {
      const v = this.get(key);
      return v === undefined ? [] : [v];
    }
    const out: string[] = [];
    for (const { re, value } of this.#list) if (re.test(key)) out.push(value);
    return out;
  }
}

export function compileMapData(kind: MapKind, entries: readonly MapEntry[]): MapData {
  switch (kind) {
    case 'set':
    case 'hash':
      return new HashData(entries);
    case 'radix':
      return new RadixData(entries);
    case 'regexp':
      return new RegexpData(entries, false, false);
    case 'regexp_multi':
      return new RegexpData(entries, false, true);
    case 'glob':
      return new RegexpData(entries, true, false);
    case 'glob_multi':
      return new RegexpData(entries, true, true);
  }
}

export function isRegexpKind(kind: MapKind): boolean {
  return kind === 'regexp' || kind === 'regexp_multi';
}
