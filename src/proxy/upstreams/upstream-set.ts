// One list of upstream hosts with Rspamd's failure accounting: failures
// inside a sliding `errorTime` window are counted per host; a host with more than `maxErrors`
// of them is taken out of rotation for `reviveTime` (plus up to `reviveJitter` of it, so hosts
// that failed together do not all come back in the same instant), then tried again. As in
// Rspamd, the last host still up is never taken out: requests keep trying it, and the client
// sees what actually goes wrong there instead of "no backend".

import type { HostSpec, Rotation } from './host-list.js';
import { pick, type Candidate } from './rotation.js';

export interface FailureLimits {
  /** Window in which failures are counted, ms. */
  errorTimeMs: number;
  /** Failures inside the window a host may have and stay up. */
  maxErrors: number;
  /** Time a failed host stays out of rotation, ms. */
  reviveTimeMs: number;
  /** Extra random share of reviveTime (0.4: up to 40 % longer). */
  reviveJitter: number;
}

export interface UpstreamEvents {
  /** A host was taken out of rotation after too many failures. */
  down?(host: UpstreamHost, failures: number, reason: string): void;
  /** A host's time out of rotation is over. */
  revived?(host: UpstreamHost): void;
}

export class UpstreamHost implements Candidate {
  readonly spec: HostSpec;
  rrCurrent = 0;
  /** Times of failures still inside the window, oldest first. */
  failures: number[] = [];
  /** Out of rotation until this time (ms since epoch); 0 when up. */
  downUntil = 0;

  constructor(spec: HostSpec) {
    this.spec = spec;
  }

  get name(): string {
    return this.spec.name;
  }

  get priority(): number {
    return this.spec.priority;
  }
}

export interface UpstreamSetOptions {
  rotation: Rotation;
  limits: FailureLimits;
  events?: UpstreamEvents;
  now?: () => number;
  random?: () => number;
}

export class UpstreamSet {
  readonly hosts: readonly UpstreamHost[];
  readonly rotation: Rotation;
  readonly #limits: FailureLimits;
  readonly #events: UpstreamEvents;
  readonly #now: () => number;
  readonly #random: () => number;

  constructor(specs: readonly HostSpec[], opts: UpstreamSetOptions) {
    this.hosts = specs.map((s) => new UpstreamHost(s));
    this.rotation = opts.rotation;
    this.#limits = opts.limits;
    this.#events = opts.events ?? {};
    this.#now = opts.now ?? Date.now;
    this.#random = opts.random ?? Math.random;
  }

  /** Hosts in rotation now; a host whose time out is over comes back (and is announced) here. */
  alive(): UpstreamHost[] {
    const now = this.#now();
    const out: UpstreamHost[] = [];
    for (const h of this.hosts) {
      if (h.downUntil !== 0 && h.downUntil <= now) {
        h.downUntil = 0;
        h.failures = [];
        h.rrCurrent = 0;
        this.#events.revived?.(h);
      }
      if (h.downUntil === 0) out.push(h);
    }
    return out;
  }

  /**
   * A host for the next attempt: one not in `avoid` (the hosts this request already failed on)
   * when any is up, else any host up; undefined when none is. `key` feeds hash rotation.
   */
  pick(key?: string, avoid?: ReadonlySet<UpstreamHost>): UpstreamHost | undefined {
    const alive = this.alive();
    if (avoid && avoid.size > 0) {
      const fresh = alive.filter((h) => !avoid.has(h));
      if (fresh.length > 0) return pick(this.rotation, fresh, key, this.#random);
    }
    return pick(this.rotation, alive, key, this.#random);
  }

  /** Records a failure; true when it took the host out of rotation. */
  fail(host: UpstreamHost, reason: string): boolean {
    const now = this.#now();
    const since = now - this.#limits.errorTimeMs;
    // The list only holds failures inside the window, so its length is bounded by maxErrors + 1.
    while (host.failures.length > 0 && host.failures[0]! <= since) host.failures.shift();
    host.failures.push(now);
    if (host.downUntil !== 0 || host.failures.length <= this.#limits.maxErrors) return false;
    const othersUp = this.alive().some((h) => h !== host);
    if (!othersUp) {
      // The last host up stays in rotation; its count starts over so the window keeps sliding.
      host.failures = [now];
      return false;
    }
    const count = host.failures.length;
    host.downUntil = now + this.#limits.reviveTimeMs * (1 + this.#limits.reviveJitter * this.#random());
    host.failures = [];
    this.#events.down?.(host, count, reason);
    return true;
  }

  /** A success clears the host's failure count, as in Rspamd (errors reset on success). */
  ok(host: UpstreamHost): void {
    if (host.failures.length > 0) host.failures = [];
  }
}
