// Counters of a fuzzy storage worker, in the shape of `rspamadm control fuzzystat`.

export interface FuzzyCounters {
  checked: number;
  matched: number;
  added: number;
  deleted: number;
  errors: number;
}

/** Per-client-IP tables are capped so a scan of many source addresses cannot grow memory without bound. */
export const MAX_TRACKED_IPS = 1024;

function zero(): FuzzyCounters {
  return { checked: 0, matched: 0, added: 0, deleted: 0, errors: 0 };
}

interface KeyStats extends FuzzyCounters {
  ips: Map<string, FuzzyCounters>;
  flags: Map<number, FuzzyCounters>;
}

export type CounterName = keyof FuzzyCounters;

export class FuzzyServerStats {
  readonly #keys = new Map<string, KeyStats>();
  invalidRequests = 0;
  decryptErrors = 0;
  blockedRequests = 0;
  expired = 0;
  /** Checks, shingle checks and matches by protocol epoch (1.0, 1.1, 1.2). */
  readonly checked = [0, 0, 0];
  readonly shingles = [0, 0, 0];
  readonly found = [0, 0, 0];
  readonly #errorIps = new Map<string, number>();

  count(key: string, ip: string, flag: number, what: CounterName): void {
    let k = this.#keys.get(key);
    if (!k) {
      k = { ...zero(), ips: new Map(), flags: new Map() };
      this.#keys.set(key, k);
    }
    k[what]++;
    let byIp = k.ips.get(ip);
    if (!byIp && k.ips.size < MAX_TRACKED_IPS) k.ips.set(ip, (byIp = zero()));
    if (byIp) byIp[what]++;
    let byFlag = k.flags.get(flag);
    if (!byFlag) k.flags.set(flag, (byFlag = zero()));
    byFlag[what]++;
  }

  error(ip: string): void {
    if (this.#errorIps.has(ip) || this.#errorIps.size < MAX_TRACKED_IPS) this.#errorIps.set(ip, (this.#errorIps.get(ip) ?? 0) + 1);
  }

  toJSON(stored: number): Record<string, unknown> {
    const keys: Record<string, unknown> = {};
    for (const [id, k] of this.#keys) {
      const { ips, flags, ...counters } = k;
      keys[id] = {
        ...counters,
        ips: Object.fromEntries(ips),
        flags: Object.fromEntries([...flags].map(([f, c]) => [String(f), c])),
      };
    }
    return {
      keys,
      fuzzy_stored: stored,
      fuzzy_expired: this.expired,
      invalid_requests: this.invalidRequests,
      delayed_hashes: 0,
      blocked_requests: this.blockedRequests,
      decrypt_errors: this.decryptErrors,
      ratelimited_requests: 0,
      errors_ips: Object.fromEntries(this.#errorIps),
      fuzzy_checked: [...this.checked],
      fuzzy_shingles: [...this.shingles],
      fuzzy_found: [...this.found],
    };
  }
}
