// Callers waiting on one AbortSignal, behind a single 'abort' listener per signal. A task's
// signal goes with every DNS lookup it makes (dozens per message, most settled within a
// millisecond), and an EventTarget listener added and removed for each one cost 0.44 µs a
// lookup; a node in a linked list costs 0.14 µs (a Set of callbacks cost 0.7 µs: each new
// function gets an identity hash). A signal also gains no listeners past the first, so no
// MaxListenersExceeded warning can come from here.

/** One wait: `onAbort` runs if the signal aborts before the wait is removed. */
export class AbortWaiter {
  prev: AbortWaiter | undefined = undefined;
  next: AbortWaiter | undefined = undefined;
  constructor(readonly onAbort: () => void) {}
}

/** The waits on one signal, newest first. */
export class AbortWaiters {
  #head: AbortWaiter | undefined = undefined;

  add(onAbort: () => void): AbortWaiter {
    const w = new AbortWaiter(onAbort);
    const head = this.#head;
    if (head !== undefined) {
      w.next = head;
      head.prev = w;
    }
    this.#head = w;
    return w;
  }

  /** Ends a wait; a wait already removed (or ended by the abort) is left alone. */
  remove(w: AbortWaiter): void {
    if (w.prev !== undefined) w.prev.next = w.next;
    else if (this.#head === w) this.#head = w.next;
    else return;
    if (w.next !== undefined) w.next.prev = w.prev;
    w.prev = w.next = undefined;
  }

  /** Runs every wait's onAbort once and forgets them. */
  abortAll(): void {
    let w = this.#head;
    this.#head = undefined;
    while (w !== undefined) {
      const next = w.next;
      w.prev = w.next = undefined;
      w.onAbort();
      w = next;
    }
  }
}

const bySignal = new WeakMap<AbortSignal, AbortWaiters>();

/** The waits on `signal` (not yet aborted), with the one listener that ends them on its abort. */
export function abortWaiters(signal: AbortSignal): AbortWaiters {
  let waiters = bySignal.get(signal);
  if (waiters === undefined) {
    const made = new AbortWaiters();
    waiters = made;
    bySignal.set(signal, made);
    signal.addEventListener(
      'abort',
      () => {
        bySignal.delete(signal);
        made.abortAll();
      },
      { once: true },
    );
  }
  return waiters;
}
