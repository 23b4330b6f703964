// The engine's side of the plugin network API: which symbol a network call belongs to, its
// pending-event count (a symbol is not finished while its calls are outstanding, so symbols
// that depend on it wait), and the `coro` rule for awaited calls.
//
// Attribution: the scheduler sets `task.runningItem` while a callback runs synchronously, and
// an event's completion callback runs with its symbol set again, so callback-style chains stay
// attributed without any async machinery. Callbacks that may await (async functions, `coro`
// symbols) get a view of the task whose network API carries their symbol explicitly
// (`ScanTask.forItem`, scoped by `forItem` here), so calls made after an `await` still know
// their symbol — and a non-`coro` symbol awaiting a call gets an error naming it. This replaced
// an AsyncLocalStorage scope: once one is entered, Node's promise hooks run for every promise
// of the process, which cost several per cent of a worker's CPU.

import type { NetEvent, NetScope } from '../net/index.js';
import { NetError } from '../net/index.js';
import type { DnsResolver, RedisPool } from '../net/index.js';
import type { Logger } from '../plugin-api/index.js';
import type { ItemInfo } from './registry.js';
import type { ScanTask } from './task.js';

const AsyncFunction = (async () => {}).constructor;

/** Whether a callback needs a task view that attributes its calls after an await. */
export function needsAsyncScope(flags: ReadonlySet<string>, check: ItemInfo['check']): boolean {
  return flags.has('coro') || check.constructor === AsyncFunction;
}

interface Pending { count: number; promise: Promise<void>; resolve: () => void }

const DETACHED: NetEvent = { run: (fn) => fn(), end: () => {} };

export class TaskNetScope implements NetScope {
  readonly #task: ScanTask;
  readonly #pending = new Map<number, Pending>();

  constructor(task: ScanTask) {
    this.#task = task;
  }

  get signal(): AbortSignal { return this.#task.signal; }
  /** After the deadline, as after the end, pending calls are abandoned and new ones refused (Rspamd destroys the session). */
  get ended(): boolean { return this.#task.finished || this.#task.timedOut; }
  get resolver(): DnsResolver { return this.#task.core.net.resolver; }
  get redis(): RedisPool { return this.#task.core.net.redis; }
  get dnsMaxRequests(): number { return this.#task.core.net.dnsMaxRequests; }
  get log(): Logger { return this.#task.log; }

  remainingMs(): number {
    return this.#task.deadlineAt - performance.now();
  }

  /** The same scope with every call attributed to `item` (the view an awaiting symbol gets). */
  forItem(item: ItemInfo): NetScope {
    return new ItemNetScope(this, item);
  }

  begin(kind: string): NetEvent {
    return this.beginFor(this.#task.runningItem, kind);
  }

  beginFor(item: ItemInfo | undefined, _kind: string): NetEvent {
    // Calls from outside any symbol (e.g. a plugin's own timer) are not attributed.
    if (!item) return DETACHED;
    let p = this.#pending.get(item.id);
    if (!p) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => { resolve = r; });
      p = { count: 0, promise, resolve };
      this.#pending.set(item.id, p);
    }
    p.count++;
    const task = this.#task;
    let ended = false;
    return {
      run: (fn) => {
        const prev = task.runningItem;
        task.runningItem = item;
        try {
          fn();
        } catch (err) {
          task.core.recordError(item, err, task.messageIdForLog());
        } finally {
          task.runningItem = prev;
        }
      },
      end: () => {
        if (ended) return;
        ended = true;
        const cur = this.#pending.get(item.id);
        if (!cur || --cur.count > 0) return;
        this.#pending.delete(item.id);
        cur.resolve();
      },
    };
  }

  requireCoro(call: string): void {
    this.requireCoroFor(this.#task.runningItem, call);
  }

  requireCoroFor(item: ItemInfo | undefined, call: string): void {
    if (!item) {
      throw new NetError('NET_CORO_REQUIRED', `awaited ${call} call outside a symbol callback: pass a callback or call it from a symbol registered with the 'coro' flag`);
    }
    if (!item.flags.has('coro')) {
      throw new NetError('NET_CORO_REQUIRED', `symbol ${item.name} (module ${item.module}) awaits a ${call} call but is not registered with the 'coro' flag; add flags: ['coro'] or pass a callback`);
    }
  }

  /** Settles when the item's outstanding calls have completed; undefined when it has none. */
  drained(itemId: number): Promise<void> | undefined {
    return this.#pending.get(itemId)?.promise;
  }
}

/** TaskNetScope with a fixed symbol: what the calls of one awaiting callback go through. */
class ItemNetScope implements NetScope {
  constructor(private readonly base: TaskNetScope, private readonly item: ItemInfo) {}

  get signal(): AbortSignal { return this.base.signal; }
  get ended(): boolean { return this.base.ended; }
  get resolver(): DnsResolver { return this.base.resolver; }
  get redis(): RedisPool { return this.base.redis; }
  get dnsMaxRequests(): number { return this.base.dnsMaxRequests; }
  get log(): Logger { return this.base.log; }
  remainingMs(): number { return this.base.remainingMs(); }
  begin(kind: string): NetEvent { return this.base.beginFor(this.item, kind); }
  requireCoro(call: string): void { this.base.requireCoroFor(this.item, call); }
}
