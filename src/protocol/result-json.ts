// Reading a scan result object as it arrives from a /checkv2 reply (our own, or an upstream's
// through the proxy): every field is checked for its type before use, since the object may come
// from another server, and missing fields read as Rspamd's C code reads them (0, absent).

export type JsonObject = { [k: string]: unknown };

export function jsonObject(v: unknown): JsonObject | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
}

/** An own field only: a key such as `constructor` must not reach Object.prototype. */
export function own(o: JsonObject, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

/** A number as ucl_object_todouble reads it: anything else is 0. */
export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/**
 * Text copied into a reply line stays on that line: a subject comes from the message (an encoded
 * word decodes to any bytes, CR LF included), and a line break in it would let a sender add
 * `Action:` or `Symbol:` lines to the reply an MTA reads.
 */
export function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ');
}

/** The `symbols` entries whose value is an object (as Rspamd's renderers skip the others), in order. */
export function symbolEntries(r: JsonObject): Array<[string, JsonObject]> {
  const symbols = jsonObject(own(r, 'symbols'));
  if (!symbols) return [];
  const out: Array<[string, JsonObject]> = [];
  for (const [name, v] of Object.entries(symbols)) {
    const sym = jsonObject(v);
    if (sym) out.push([name, sym]);
  }
  return out;
}

/**
 * Actions after which a message is not spam for a spamc client: ham, and the two temporary ones
 * (greylisting and a soft reject ask the sender to retry; the message may well be fine).
 */
const NOT_SPAM_ACTIONS: ReadonlySet<string> = new Set(['no action', 'greylist', 'soft reject']);

/** Spam unless the action is one of the above (reject, add header, rewrite subject, custom actions). */
export function isSpamResult(r: JsonObject): boolean {
  const action = own(r, 'action');
  if (typeof action !== 'string' || action.length === 0) return false;
  return !NOT_SPAM_ACTIONS.has(action.toLowerCase().replace(/_/g, ' '));
}
