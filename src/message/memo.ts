// Remembered results of pure string functions that scans call with the same arguments again and
// again: the relays' addresses in Received headers, the domains of common URLs, the DNS-list
// keys made from them. Parsing an address with ipaddr.js or a host with tldts costs
// microseconds; a map lookup costs nanoseconds.

/** Entries kept before the cache starts over: bounds memory whatever the traffic. */
const DEFAULT_MAX = 8192;

/**
 * `fn` with its results cached by argument. Only for pure functions whose results are
 * immutable (strings, numbers, booleans, undefined): every caller gets the same value.
 */
export function memoize<T>(fn: (s: string) => T, max = DEFAULT_MAX): (s: string) => T {
  const cache = new Map<string, T>();
  return (s) => {
    const v = cache.get(s);
    if (v !== undefined || cache.has(s)) return v as T;
    const r = fn(s);
    // Clearing everything at once is cruder than LRU but costs nothing per hit.
    if (cache.size >= max) cache.clear();
    cache.set(s, r);
    return r;
  };
}
