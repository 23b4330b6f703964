// The per-process list of maps: modules declare maps here (through ctx.maps), the controller
// lists, reads and writes them (/maps, /getmap, /savemap, /plugins/maps/*), and background
// timers reload them. File sources are checked every `fileCheckMs` (one stat each); http(s)
// sources at their poll interval with jitter, backing off after failures.

import { randomBytes } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';
import type { Logger } from '../core/logger.js';
import { LoadedMap } from './loaded-map.js';
import { createSource, createStaticSource, isEditable, isReadable, splitKindPrefix, type SourceState } from './sources.js';
import { MapError, type MapDefinition, type MapHandle, type MapKind, type MapSourceInfo } from './types.js';

/** How often file sources are stat()ed for changes (Rspamd: 30 s; cheap enough to do more often). */
export const DEFAULT_FILE_CHECK_MS = 5_000;
/** Default poll interval of http(s) sources (Rspamd's compiled map_watch_interval). */
export const DEFAULT_HTTP_POLL_SECONDS = 60;
/** Floor between two checks of one source, whatever the config says (Rspamd: 2 s). */
const MIN_POLL_MS = 2_000;
/** After a failed http fetch the next try waits this many poll intervals (Rspamd: ×20)... */
const ERROR_BACKOFF_FACTOR = 20;
/** ...but never longer than this, so a recovered server is noticed the same day. */
const MAX_BACKOFF_MS = 3_600_000;

export interface MapRegistryOptions {
  /** Relative file sources are taken from here (the configuration directory). */
  baseDir: string;
  log: Logger;
  fileCheckMs?: number;
}

/** A stable 32-bit id for a URI (FNV-1a). Rspamd uses t1ha; clients only echo the number back. */
export function mapId(uri: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(uri, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

interface Entry {
  map: LoadedMap;
  def: MapDefinition;
  timers: NodeJS.Timeout[];
}

export class MapRegistry {
  readonly #opts: MapRegistryOptions;
  readonly #entries: Entry[] = [];
  /** Identical definitions share one map ("cached by content"). */
  readonly #byDef = new Map<string, Entry>();
  #fileTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: MapRegistryOptions) {
    this.#opts = opts;
  }

  /** Declare a map and load it once; later changes are picked up in the background. */
  async add(def: MapDefinition): Promise<MapHandle> {
    const cacheKey = JSON.stringify([def.url, def.data ?? null, def.kind ?? null]);
    const cached = this.#byDef.get(cacheKey);
    if (cached) return cached.map;
    const urls = typeof def.url === 'string' ? [def.url] : [...def.url];
    let kind: MapKind | undefined;
    const sources: SourceState[] = [];
    for (const u of urls) {
      if (typeof u !== 'string' || u.trim() === '') throw new MapError('MAP_BAD_DEFINITION', 'map source must be a non-empty string');
      const split = splitKindPrefix(u.trim());
      kind ??= split.kind;
      if (split.src === 'static') continue;
      sources.push(createSource(split.src, this.#opts.baseDir));
    }
    if (def.data) sources.push(createStaticSource(def.data));
    if (sources.length === 0) throw new MapError('MAP_BAD_DEFINITION', 'map has no source');
    const map = new LoadedMap(def.kind ?? kind ?? 'hash', def.description, sources, this.#opts.log);
    await map.reload();
    const entry: Entry = { map, def, timers: [] };
    this.#entries.push(entry);
    this.#byDef.set(cacheKey, entry);
    if (!this.#closed) {
      for (const s of sources) if (s.type === 'http' || s.type === 'https') this.#scheduleHttp(entry, s, false);
      this.#ensureFileTimer();
    }
    return map;
  }

  #ensureFileTimer(): void {
    if (this.#fileTimer || !this.#entries.some((e) => e.map.sources.some((s) => s.type === 'file'))) return;
    const every = Math.max(this.#opts.fileCheckMs ?? DEFAULT_FILE_CHECK_MS, 100);
    this.#fileTimer = setInterval(() => void this.checkFiles(), every);
    this.#fileTimer.unref();
  }

  #scheduleHttp(entry: Entry, src: SourceState, failed: boolean): void {
    const poll = Math.max((entry.def.pollInterval ?? DEFAULT_HTTP_POLL_SECONDS) * 1000, MIN_POLL_MS);
    const base = failed ? Math.min(poll * ERROR_BACKOFF_FACTOR, MAX_BACKOFF_MS) : poll;
    // Jitter spreads the fetches of many workers and maps over the interval.
    const delay = base * (0.9 + Math.random() * 0.2);
    const t = setTimeout(() => {
      entry.timers.splice(entry.timers.indexOf(t), 1);
      void entry.map.reload((s) => s === src).then(() => {
        if (!this.#closed) this.#scheduleHttp(entry, src, !src.loaded);
      });
    }, delay);
    t.unref();
    entry.timers.push(t);
  }

  /** Re-read every file source whose mtime/size changed; resolves when done. */
  async checkFiles(): Promise<void> {
    await Promise.all(this.#entries.map((e) => e.map.reload((s) => s.type === 'file')));
  }

  /** Every source, for /maps and /plugins/maps/list, in declaration order. */
  async sources(): Promise<MapSourceInfo[]> {
    const out: MapSourceInfo[] = [];
    for (const { map } of this.#entries) {
      for (const s of map.sources) {
        const info: MapSourceInfo = {
          id: mapId(s.uri),
          uri: s.uri,
          type: s.type,
          editable: s.type === 'file' ? await isEditable(s.uri) : false,
          loaded: s.type === 'file' ? await isReadable(s.uri) : s.loaded,
        };
        if (map.description !== undefined) info.description = map.description;
        out.push(info);
      }
    }
    return out;
  }

  /** Maps with the URI of their first source (the name /plugins/maps/* uses). */
  named(): Array<{ uri: string; map: MapHandle }> {
    const seen = new Set<string>();
    const out: Array<{ uri: string; map: MapHandle }> = [];
    for (const { map } of this.#entries) {
      const uri = map.sources[0]!.uri;
      if (map.sources[0]!.type === 'static' || seen.has(uri)) continue;
      seen.add(uri);
      out.push({ uri, map });
    }
    return out;
  }

  /** The file source with this id and the map that owns it. */
  fileById(id: number): { path: string; map: LoadedMap } | undefined {
    for (const { map } of this.#entries) for (const s of map.sources) if (s.type === 'file' && mapId(s.uri) === id) return { path: s.uri, map };
    return undefined;
  }

  /**
   * Replace a file source's content atomically (temp file in the same directory, then rename)
   * and reload its map, so the next lookup in this process uses it.
   */
  async writeFileMap(id: number, content: Buffer): Promise<void> {
    const found = this.fileById(id);
    if (!found) throw new MapError('MAP_NOT_FOUND', 'Map id not found');
    const tmp = `${found.path}.new${randomBytes(4).toString('hex')}`;
    try {
      await writeFile(tmp, content, { mode: 0o644, flag: 'wx' });
    } catch (err) {
      // A write that failed part-way (disk full) leaves a partial temporary file beside the map;
      // EEXIST means the name was someone else's ('wx'), so that file is left alone.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await unlink(tmp).catch(() => undefined);
      throw new MapError('MAP_WRITE_FAILED', `Map write error: ${(err as Error).message}`, { cause: err });
    }
    try {
      await rename(tmp, found.path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw new MapError('MAP_WRITE_FAILED', `Map rename error: ${(err as Error).message}`, { cause: err });
    }
    await found.map.reload((s) => s.type === 'file' && s.uri === found.path);
  }

  close(): void {
    this.#closed = true;
    if (this.#fileTimer) clearInterval(this.#fileTimer);
    this.#fileTimer = undefined;
    for (const e of this.#entries) for (const t of e.timers.splice(0)) clearTimeout(t);
  }
}

export function createMapRegistry(opts: MapRegistryOptions): MapRegistry {
  return new MapRegistry(opts);
}
