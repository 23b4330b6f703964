// Records keyed by data: a YAML key, a header name, a symbol name a request inserted through
// Settings, a query parameter. On an ordinary object `o['__proto__'] = v` does not store an
// entry: it re-parents `o` (the entry vanishes, and when `v` is an object its keys show
// through every lookup on `o`), and a read of `o['constructor']` or `o['__proto__']` finds
// Object's members, so "not there yet" tests see an entry that is not.

/**
 * An empty record without a prototype, for records the code builds and reads itself: every
 * key, `__proto__` included, is an own entry, and an absent key reads as undefined.
 * JSON.stringify, Object.entries, spread and `for…in` treat it as an ordinary object.
 */
export function dataRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * Sets `key` as an own, enumerable property of an ordinary object, even `__proto__`; for
 * records handed to code that may expect Object's methods (users' plugins, the schema).
 */
export function setOwn<T>(o: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

/** The value of an own property only (undefined for an inherited one such as `constructor`). */
export function ownValue<T>(o: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}
