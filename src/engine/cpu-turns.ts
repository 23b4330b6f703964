// Which scan of a worker runs next when several are ready: the one that started first.
//
// A worker has several scans in flight (one per kept-alive connection), and each waits on the
// network a few times (DNS lists, SPF, DKIM). Left to the event loop, the work of the scans
// interleaves in the order their events arrive, so every scan shares the CPU with every other
// (processor sharing), and a heavy message takes as many times its own CPU as there are scans
// beside it. Giving the oldest ready scan the CPU first keeps the worker busy just the same, but
// finishes scans closer to the order they came in: the tail latency falls while throughput does
// not change (docs/tuning.md has the simulation that showed it).
//
// The scheduler asks for a turn at each stage boundary, where a scan resumes after a network
// wait; turns are handed out from setImmediate, after the event loop has taken in every event
// that is ready, so a scan resumed by a DNS answer and a scan just arrived compete by age.

interface Waiter {
  order: number;
  grant: () => void;
}

export class CpuTurns {
  readonly #waiting: Waiter[] = [];
  #scheduled = false;

  /** Resolves when the caller may run; callers with a smaller `order` (older) go first. */
  wait(order: number): Promise<void> {
    return new Promise<void>((grant) => {
      this.#waiting.push({ order, grant });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#dispatch);
      }
    });
  }

  /** One turn per pass of the event loop: the granted scan runs until its next wait. */
  readonly #dispatch = (): void => {
    const w = this.#waiting;
    let oldest = 0;
    for (let i = 1; i < w.length; i++) if (w[i]!.order < w[oldest]!.order) oldest = i;
    const next = w[oldest]!;
    w[oldest] = w[w.length - 1]!;
    w.pop();
    if (w.length > 0) setImmediate(this.#dispatch);
    else this.#scheduled = false;
    next.grant();
  };
}
