// One declared map: its sources, the compiled data currently in use, and reloading. A reload
// re-reads only sources that changed, and swaps in a freshly compiled MapData built from the
// latest text of every source, so a lookup always sees one consistent version.

import type { Logger } from '../core/logger.js';
import { compileMapData, isRegexpKind, type MapData } from './kinds.js';
import { parseMapText } from './parse-lines.js';
import type { SourceState } from './sources.js';
import type { MapHandle, MapKind } from './types.js';

const EMPTY: MapData = { get: () => undefined, getAll: () => [], size: 0, rejected: 0 };

export class LoadedMap implements MapHandle {
  readonly kind: MapKind;
  readonly description: string | undefined;
  readonly sources: readonly SourceState[];
  readonly #texts: Array<string | undefined>;
  #data: MapData = EMPTY;
  #version = 0;
  readonly #log: Logger;
  /** Serialises reloads: a timer and a savemap may ask at the same time. */
  #reloading: Promise<boolean> | undefined;

  constructor(kind: MapKind, description: string | undefined, sources: readonly SourceState[], log: Logger) {
    this.kind = kind;
    this.description = description;
    this.sources = sources;
    this.#texts = sources.map(() => undefined);
    this.#log = log;
  }

  get size(): number {
    return this.#data.size;
  }

  get version(): number {
    return this.#version;
  }

  keys(): Iterable<string> {
    return this.#data.keys?.() ?? [];
  }

  get(key: string): string | undefined {
    return this.#data.get(key);
  }

  getAll(key: string): string[] {
    return this.#data.getAll(key);
  }

  has(key: string): boolean {
    return this.#data.get(key) !== undefined;
  }

  weight(key: string): number | undefined {
    const v = this.#data.get(key);
    if (v === undefined) return undefined;
    const n = Number(v);
    return v.trim() !== '' && Number.isFinite(n) ? n : 1;
  }

  /** Re-read the chosen sources (all by default); true when the data changed. */
  reload(which: (s: SourceState) => boolean = () => true): Promise<boolean> {
    const run = async (): Promise<boolean> => {
      let changed = false;
      for (let i = 0; i < this.sources.length; i++) {
        const src = this.sources[i]!;
        if (!which(src)) continue;
        try {
          const text = await src.fetch();
          if (text !== undefined) {
            this.#texts[i] = text;
            changed = true;
          }
        } catch (err) {
          // Keep the last good data: a flaky source must not empty a blocklist.
          this.#log.warn('map source failed to load; keeping its previous data', { uri: src.uri, error: (err as Error).message });
        }
      }
      if (changed) this.#rebuild();
      return changed;
    };
    const next = (this.#reloading ?? Promise.resolve(false)).then(run, run);
    this.#reloading = next;
    return next;
  }

  #rebuild(): void {
    const regexpKeys = isRegexpKind(this.kind);
    const entries = this.#texts.flatMap((t) => (t === undefined ? [] : parseMapText(t, { regexpKeys })));
    const data = compileMapData(this.kind, entries);
    if (data.rejected > 0) {
      this.#log.warn('map entries skipped: not valid for the map kind', { uris: this.sources.map((s) => s.uri), kind: this.kind, skipped: data.rejected });
    }
    this.#data = data;
    this.#version++;
  }
}
