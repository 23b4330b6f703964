// The maps framework's public shapes: how a map is declared, what a module
// gets back to look keys up, and what the controller lists. Modules reach maps only through
// the plugin API (`ctx.maps.add`), which re-exports these types.

/** Lookup semantics of a map. */
export type MapKind = 'set' | 'hash' | 'regexp' | 'regexp_multi' | 'glob' | 'glob_multi' | 'radix';

/**
 * A map declaration. `url` is one source or several (data of all available sources is merged):
 * `/abs/path`, `file:///path`, a path relative to the configuration directory, `http(s)://…`,
 * or inline data (`static` sources: an array of lines). A source may carry a kind prefix
 * (`regexp;`, `re;`, `glob;`, `radix;`, `ipnet;`, `set;`, `hash;`, `plain;`, with `_multi`
 * variants) which wins over `kind`.
 */
export interface MapDefinition {
  url: string | readonly string[];
  /** Inline entries (lines in map file syntax); the map then has a `static` source too. */
  data?: readonly string[];
  kind?: MapKind;
  description?: string;
  /** Seconds between checks of http(s) sources; file sources are checked more often. */
  pollInterval?: number;
}

export interface MapHandle {
  readonly kind: MapKind;
  readonly description: string | undefined;
  /** Value of the key (first matching entry for regexp/glob kinds; "1" for a key without value). */
  get(key: string): string | undefined;
  /** Values of every matching entry (regexp_multi/glob_multi; at most one for the others). */
  getAll(key: string): string[];
  has(key: string): boolean;
  /**
   * The entry's value read as a weight: a number when the value is numeric, 1 when the key has
   * no value, undefined on a miss. Rspamd multimap reads `KEY 0.5` this way.
   */
  weight(key: string): number | undefined;
  /** Entries currently loaded. */
  readonly size: number;
  /**
   * The keys of a `set` or `hash` map (none for the other kinds), for a module that indexes the
   * entries its own way (phishing's OpenPhish feed, keyed by host).
   */
  keys(): Iterable<string>;
  /** Bumped on every (re)load that changed the data, so such an index knows when to rebuild. */
  readonly version: number;
}

/** One source of a map as the controller lists it (`/maps`, `/plugins/maps/list`). */
export interface MapSourceInfo {
  /** Stable 32-bit id derived from the URI (clients only echo it back). */
  id: number;
  uri: string;
  type: 'file' | 'http' | 'https' | 'static';
  description?: string;
  /** File sources the daemon can write (or create in a writable directory). */
  editable: boolean;
  /** Readable now (file exists and opens, http fetched once). */
  loaded: boolean;
}

export type MapErrorCode = 'MAP_BAD_DEFINITION' | 'MAP_NOT_FOUND' | 'MAP_NOT_EDITABLE' | 'MAP_WRITE_FAILED';

export class MapError extends Error {
  readonly code: MapErrorCode;
  constructor(code: MapErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'MapError';
  }
}
