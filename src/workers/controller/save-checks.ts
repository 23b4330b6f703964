// Checks of the bodies /saveactions and /savesymbols accept. Rspamd 3.4 reads
// any element it cannot use as 0 and saves it: `["x",null,6,4]` becomes reject = 0 and every
// message is rejected. Here a body is checked whole before anything is read from or written to
// the store, so a request is applied completely or not at all, and a refusal names the first
// problem. Pure: the engine's view (known symbols, configured values) is passed in.
//
// Error texts go into the reason phrase (where anything outside printable ASCII becomes a
// space) and into the JSON error body (json.ts controllerError, escaped), so they keep to
// printable ASCII: client-supplied text is echoed only when it is a plain symbol name.

/** The /saveactions array positions, highest threshold first. */
export const SAVEACTIONS_ORDER = ['reject', 'rewrite subject', 'add header', 'greylist'] as const;
export type SavedAction = (typeof SAVEACTIONS_ORDER)[number];

/**
 * Largest magnitude of a saved threshold or score. Blocks values that are typos or attacks,
 * not settings: a score of 1e300 on two symbols sums to Infinity, which scans then report as
 * `null` (breaking clients' verdict parsing); ±1e6 keeps every sum finite and printable.
 */
export const MAX_SAVED_MAGNITUDE = 1_000_000;

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const refuse = (message: string): { ok: false; message: string } => ({ ok: false, message });

/** What a JSON value is, in words, for a refusal. */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    case 'undefined':
      return 'nothing';
    default:
      return typeof v;
  }
}

/** A number a client sent, checked to be finite (JSON.parse reads `1e309` as Infinity) and bounded. */
function checkNumber(v: unknown, what: string, opts: { nonNegative: boolean; nullable: boolean }): Checked<number | null> {
  if (v === null && opts.nullable) return { ok: true, value: null };
  if (typeof v !== 'number') return refuse(`${what}: expected a number${opts.nullable ? ' or null' : ''}, got ${kindOf(v)}`);
  if (!Number.isFinite(v)) return refuse(`${what}: not a finite number`);
  if (Math.abs(v) > MAX_SAVED_MAGNITUDE) return refuse(`${what}: ${v} is beyond +-${MAX_SAVED_MAGNITUDE}`);
  if (opts.nonNegative && v < 0) return refuse(`${what}: ${v} is negative`);
  return { ok: true, value: v };
}

/**
 * `[reject, rewrite subject, add header, greylist]`: each a number or null (null switches the
 * action off). Thresholds are non-negative (the 3.4 web UI refuses negative ones too; a
 * message scores below 0 only through whitelist symbols, and no action is meant for those),
 * and those that are set must not increase down the list: the scan picks the highest
 * threshold a score reaches, so greylist above reject would make reject unreachable for high
 * scores. Equal thresholds are allowed (the lower action is then never chosen, as if off).
 *
 * All four positions are always in the request, so no configured value enters the order
 * check: a null position is off, and soft reject is never chosen by score (engine/actions.ts).
 * Array shape errors keep 3.4's text (`Cannot parse input`), which clients already know.
 */
export function checkSaveActions(body: unknown): Checked<Array<[SavedAction, number | null]>> {
  if (!Array.isArray(body) || body.length !== SAVEACTIONS_ORDER.length) return refuse('Cannot parse input');
  const out: Array<[SavedAction, number | null]> = [];
  for (let i = 0; i < SAVEACTIONS_ORDER.length; i++) {
    const name = SAVEACTIONS_ORDER[i]!;
    const c = checkNumber(body[i], `Invalid threshold for ${name}`, { nonNegative: true, nullable: true });
    if (!c.ok) return c;
    out.push([name, c.value]);
  }
  let above: [SavedAction, number] | undefined;
  for (const [name, value] of out) {
    if (value === null) continue;
    if (above && value > above[1]) {
      return refuse(`Invalid thresholds: ${name} (${value}) is above ${above[0]} (${above[1]}); set thresholds must be reject >= rewrite subject >= add header >= greylist`);
    }
    above = [name, value];
  }
  return { ok: true, value: out };
}

/** A symbol name safe to echo in a refusal (see the header comment); others are named by position. */
function nameForMessage(name: string, index: number): string {
  return /^[A-Za-z0-9_.:-]{1,128}$/.test(name) ? name : `entry ${index + 1}`;
}

export interface SymbolScoreView {
  /** Whether the engine knows this symbol (what /symbols lists). */
  known(name: string): boolean;
}

/**
 * `[{name, value}, …]`: every name a known symbol, every value a finite number within
 * ±MAX_SAVED_MAGNITUDE (negative scores are normal: whitelist symbols). 3.4 skips unknown names
 * and reads a missing or non-numeric value as 0; both hide a mistake (a typo in a name saves
 * nothing and still answers success; the web UI sends `null` for an emptied field, which would
 * zero the score), so here they refuse the whole request. A name listed twice must carry the
 * same value. Shape errors keep 3.4's text (`Cannot parse input`).
 */
export function checkSaveSymbols(body: unknown, view: SymbolScoreView): Checked<Map<string, number>> {
  if (!Array.isArray(body)) return refuse('Cannot parse input');
  const out = new Map<string, number>();
  for (let i = 0; i < body.length; i++) {
    const el: unknown = body[i];
    if (typeof el !== 'object' || el === null || Array.isArray(el)) return refuse('Cannot parse input');
    const { name, value } = el as { name?: unknown; value?: unknown };
    if (typeof name !== 'string' || name === '') return refuse(`Invalid symbol entry ${i + 1}: name must be a non-empty string, got ${kindOf(name)}`);
    const shown = nameForMessage(name, i);
    if (!view.known(name)) return refuse(`Unknown symbol: ${shown}`);
    const c = checkNumber(value, `Invalid score for ${shown}`, { nonNegative: false, nullable: false });
    if (!c.ok) return c;
    const score = c.value!;
    const prev = out.get(name);
    if (prev !== undefined && prev !== score) return refuse(`Invalid symbols: ${shown} is listed twice with different scores (${prev} and ${score})`);
    out.set(name, score);
  }
  return { ok: true, value: out };
}
