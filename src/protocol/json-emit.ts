// JSON text with Rspamd's number formatting (libucl's emitter): an integral double prints
// with one decimal (`15.0`), any other finite number with six (`6.900000`), non-finite as
// `null`. Reply objects are plain ordered JS values, so the same object also feeds msgpack.

export type ReplyValue = string | number | boolean | null | undefined | ReplyValue[] | { [k: string]: ReplyValue };

/**
 * Sets a reply key that comes from data (a symbol, group or header name): an own property even
 * for `__proto__`, which plain assignment would turn into a new prototype for the object (the
 * entry vanishes and the emitter walks the inherited keys instead).
 */
export function setField(o: { [k: string]: ReplyValue }, key: string, value: ReplyValue): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return 'null';
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? n.toFixed(1) : String(n);
  return n.toFixed(6);
}

/**
 * Top-level keys whose numbers are integers on the wire (milter header positions and
 * orders): written with plain JSON number formatting, not the double format.
 */
const INTEGER_KEYS: ReadonlySet<string> = new Set(['milter', 'rmilter']);

/** The reply object: like emitJson, but integer-valued blocks keep integer formatting. */
export function emitReplyJson(v: { [k: string]: ReplyValue }): string {
  let s = '{';
  let first = true;
  for (const k in v) {
    const val = v[k];
    if (val === undefined) continue;
    if (!first) s += ',';
    first = false;
    s += JSON.stringify(k) + ':' + (INTEGER_KEYS.has(k) ? JSON.stringify(val) : emitJson(val));
  }
  return s + '}';
}

/** Compact JSON; keys with `undefined` values are skipped, as JSON.stringify does. */
export function emitJson(v: ReplyValue): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return formatNumber(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
      return 'null';
    default:
      break;
  }
  if (v === null) return 'null';
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ',';
      s += emitJson(v[i]);
    }
    return s + ']';
  }
  let s = '{';
  let first = true;
  for (const k in v) {
    const val = v[k];
    if (val === undefined) continue;
    if (!first) s += ',';
    first = false;
    s += JSON.stringify(k) + ':' + emitJson(val);
  }
  return s + '}';
}
