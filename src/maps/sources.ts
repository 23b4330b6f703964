// Where a map's text comes from: a local file (re-read when its mtime or
// size changes), an http(s) URL (conditional GET with If-Modified-Since / If-None-Match; a
// 304 keeps the data) or inline lines. A source's `fetch` returns new text, or undefined
// when nothing changed; it throws when the source cannot be read.

import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MapKind } from './types.js';

/** An http map larger than this is refused: map data lives in every worker's memory. */
export const MAX_HTTP_MAP_BYTES = 64 * 1024 * 1024;
/** Time allowed for one http map fetch. */
export const HTTP_MAP_TIMEOUT_MS = 10_000;

const KIND_PREFIXES: ReadonlyArray<[string, MapKind]> = [
  ['regexp_multi;', 'regexp_multi'],
  ['re_multi;', 'regexp_multi'],
  ['glob_multi;', 'glob_multi'],
  ['regexp;', 'regexp'],
  ['re;', 'regexp'],
  ['glob;', 'glob'],
  ['radix;', 'radix'],
  ['ipnet;', 'radix'],
  ['set;', 'set'],
  ['hash;', 'hash'],
  ['plain;', 'hash'],
];

export interface SourceState {
  readonly type: 'file' | 'http' | 'https' | 'static';
  /** What /maps shows: the absolute path for files, the URL for http(s), `static` inline. */
  readonly uri: string;
  /** True once a fetch succeeded (for files: the file exists). */
  loaded: boolean;
  fetch(): Promise<string | undefined>;
  /** Forget change-detection state so the next fetch returns the content again. */
  invalidate(): void;
}

/** Split off a kind prefix (`regexp;/path`); returns the bare source and the kind it names. */
export function splitKindPrefix(src: string): { src: string; kind?: MapKind } {
  for (const [p, kind] of KIND_PREFIXES) if (src.startsWith(p)) return { src: src.slice(p.length), kind };
  return { src };
}

class FileSource implements SourceState {
  readonly type = 'file' as const;
  loaded = false;
  #sig = '';
  constructor(readonly uri: string) {}
  async fetch(): Promise<string | undefined> {
    let st;
    try {
      st = await stat(this.uri);
    } catch (err) {
      this.loaded = false;
      // A missing file is an empty map (Rspamd: the map stays empty until the file appears).
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        if (this.#sig === 'missing') return undefined;
        this.#sig = 'missing';
        return '';
      }
      throw err;
    }
    const sig = `${st.mtimeMs}:${st.size}:${st.ino}`;
    if (sig === this.#sig) return undefined;
    const text = await readFile(this.uri, 'utf8');
    this.#sig = sig;
    this.loaded = true;
    return text;
  }
  invalidate(): void {
    this.#sig = '';
  }
}

class HttpSource implements SourceState {
  readonly type: 'http' | 'https';
  loaded = false;
  #lastModified: string | undefined;
  #etag: string | undefined;
  constructor(readonly uri: string) {
    this.type = uri.startsWith('https:') ? 'https' : 'http';
  }
  async fetch(): Promise<string | undefined> {
    const headers: Record<string, string> = {};
    if (this.#lastModified) headers['if-modified-since'] = this.#lastModified;
    if (this.#etag) headers['if-none-match'] = this.#etag;
    const res = await fetch(this.uri, { headers, signal: AbortSignal.timeout(HTTP_MAP_TIMEOUT_MS) });
    if (res.status === 304) {
      await res.body?.cancel();
      return undefined;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`http status ${res.status}`);
    }
    const len = Number(res.headers.get('content-length') ?? '0');
    if (len > MAX_HTTP_MAP_BYTES) {
      await res.body?.cancel();
      throw new Error(`map larger than ${MAX_HTTP_MAP_BYTES} bytes`);
    }
    const body = Buffer.from(await res.arrayBuffer());
    if (body.length > MAX_HTTP_MAP_BYTES) throw new Error(`map larger than ${MAX_HTTP_MAP_BYTES} bytes`);
    this.#lastModified = res.headers.get('last-modified') ?? undefined;
    this.#etag = res.headers.get('etag') ?? undefined;
    this.loaded = true;
    return body.toString('utf8');
  }
  invalidate(): void {
    this.#lastModified = undefined;
    this.#etag = undefined;
  }
}

class StaticSource implements SourceState {
  readonly type = 'static' as const;
  readonly uri = 'static';
  loaded = true;
  #done = false;
  constructor(readonly text: string) {}
  async fetch(): Promise<string | undefined> {
    if (this.#done) return undefined;
    this.#done = true;
    return this.text;
  }
  invalidate(): void {
    this.#done = false;
  }
}

export function createSource(src: string, baseDir: string): SourceState {
  if (/^https?:\/\//i.test(src)) return new HttpSource(src);
  if (src.startsWith('file://')) return new FileSource(fileURLToPath(src));
  return new FileSource(isAbsolute(src) ? src : resolve(baseDir, src));
}

export function createStaticSource(lines: readonly string[]): SourceState {
  return new StaticSource(lines.join('\n'));
}

/** Writable by us, or creatable in a writable directory (what /maps reports as `editable`). */
export async function isEditable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  }
  try {
    await access(dirname(path), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export async function isReadable(path: string): Promise<boolean> {
  try {
    await access(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
