// What a task gives its network calls: the abort signal and deadline, the worker's shared
// resolver and Redis pool, and pending-event accounting for the symbol that is running. The
// engine implements NetScope; the net calls below only ever see this interface.

import type { Logger } from '../core/logger.js';
import type { DnsResolver } from './dns-resolver.js';
import type { RedisPool } from './redis-pool.js';

/** One network call counted against the symbol that started it. */
export interface NetEvent {
  /** Run a completion callback as part of the event's symbol (nested calls count for it too). */
  run(fn: () => void): void;
  /** The call completed (after its callback ran); the symbol may finish when none remain. */
  end(): void;
}

export interface NetScope {
  /** Aborted when the task deadline passes or the task ends. */
  readonly signal: AbortSignal;
  /** Milliseconds until the task deadline (may be ≤ 0). */
  remainingMs(): number;
  /** New calls are refused once the task has ended. */
  readonly ended: boolean;
  readonly resolver: DnsResolver;
  readonly redis: RedisPool;
  /** Per-task DNS lookup cap (not counting `forced` lookups). */
  readonly dnsMaxRequests: number;
  readonly log: Logger;
  /** Attribute a call to the running symbol; `kind` names the call in logs. */
  begin(kind: string): NetEvent;
  /** Throws NetError NET_CORO_REQUIRED naming the symbol if the awaited form is not allowed here. */
  requireCoro(call: string): void;
}

export type NetErrorCode = 'NET_CORO_REQUIRED' | 'NET_BAD_REQUEST';

/** A misuse of the network API (a bug in the plugin), not a network failure. */
export class NetError extends Error {
  constructor(readonly code: NetErrorCode, message: string) {
    super(message);
  }
}

/**
 * Milliseconds a call may take on its own timeout. The task deadline is not folded in: it
 * aborts `scope.signal`, which ends every call at once and marks the scope ended, so a call cut
 * off by the deadline is abandoned (no callback), not reported as its own time-out.
 */
export function callBudget(_scope: NetScope, timeoutSeconds: number | undefined, defaultSeconds: number): number {
  return Math.max(1, (timeoutSeconds !== undefined && timeoutSeconds > 0 ? timeoutSeconds : defaultSeconds) * 1000);
}

/**
 * Runs `op` as an awaited call (checks `coro`) or a callback call, counting it as a pending
 * event either way. `deliver` passes the outcome to the callback.
 */
export function dispatch<R>(scope: NetScope, kind: string, callback: unknown, op: () => Promise<R>, deliver: (r: R) => void): Promise<R> | boolean {
  if (callback === undefined) {
    scope.requireCoro(kind);
    const ev = scope.begin(kind);
    return op().finally(() => ev.end());
  }
  if (scope.ended) return false;
  const ev = scope.begin(kind);
  op().then(
    (r) => {
      // A callback after the task ended could not change its result: drop it.
      if (!scope.ended) ev.run(() => deliver(r));
      ev.end();
    },
    (e: unknown) => {
      scope.log.error('network call failed unexpectedly', { kind, error: (e as Error).message });
      ev.end();
    },
  );
  return true;
}
