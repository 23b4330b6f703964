// Waiting for work with a time limit. The engine (item budgets, the task deadline), modules (a
// DNS list's answers), the controller (plugin handlers) and the supervisor (a graceful stop) all
// wait this way; each must clear its timer however the wait ends, or a finished wait would keep a
// timer (and, unless unref'd, the process) alive until it fires.

/** What `withDeadline` resolves to when the time ran out before the work settled. */
export const DEADLINE_PASSED: unique symbol = Symbol('deadline passed');

/**
 * `work`'s value, or DEADLINE_PASSED when `ms` milliseconds pass first (the work itself goes on;
 * its later result is dropped). A rejection of `work` within the time is passed on. `unref`: the
 * timer does not keep the process alive on its own.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, opts: { unref?: boolean } = {}): Promise<T | typeof DEADLINE_PASSED> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof DEADLINE_PASSED>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms), DEADLINE_PASSED);
    if (opts.unref) timer.unref();
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
