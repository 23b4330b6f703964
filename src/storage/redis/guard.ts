// Time bounds for the Redis stores' calls, and memory of a server that stopped answering.
//
// A Redis that is down refuses connections and its calls fail at once. A Redis that hangs
// (stopped, swapping, blocked by a slow script) keeps the connection open and answers nothing:
// without a bound every scan waited for each store call's full command time-out, one after the
// other (throughput fell about 40 times, p99 6 s). So each store call gets a time-out of its
// own view (short for scans, longer for learns and the controller), and the first call that
// goes unanswered marks the server as not answering: from then on calls fail at once, as they
// do when Redis is down, and a PING every PROBE_EVERY_MS finds out when it answers again (any
// reply on the connection counts, late replies to earlier calls included).

import type { Logger } from '../../core/logger.js';
import { StoreError } from '../types.js';
import { redisError, type RedisClient } from './client.js';

/** How often a server that stopped answering is asked again (one PING in flight at most). */
export const PROBE_EVERY_MS = 500;
/**
 * A time-out judged later than due by more than this means the event loop was held up: the call
 * gets its time once more (once) before the server counts as not answering.
 */
const LOOP_LAG_GRACE_MS = 50;
/** A server flapping between answering and not is logged at most once per this period. */
const LOG_EVERY_MS = 30_000;

/** What a Redis store calls through: its client and the bound on one call. */
export interface RedisLink {
  readonly client: RedisClient;
  /** The time one call may take, in ms. */
  readonly timeoutMs: number;
  /** Runs one store call (one or several commands); errors become StoreErrors. */
  run<T>(what: string, op: (client: RedisClient) => Promise<T>): Promise<T>;
}

/** The ioredis error under a StoreError a store made of it. */
function rootCause(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: unknown } | undefined;
  return e?.code === 'STORE_UNAVAILABLE' || e?.code === 'STORE_FAILED' ? (e.cause ?? err) : err;
}

/** A reply from the server (an error reply too): proof that it answers. */
function isServerReply(err: unknown): boolean {
  return (rootCause(err) as { name?: unknown } | undefined)?.name === 'ReplyError';
}

/** ioredis's own commandTimeout fired: the server did not answer in time. */
function isCommandTimeout(err: unknown): boolean {
  return (rootCause(err) as { message?: unknown } | undefined)?.message === 'Command timed out';
}

export class RedisGuard {
  readonly #client: RedisClient;
  readonly #log: Logger;
  readonly #label: string;
  /** Date.now() when a call first went unanswered; 0 while the server answers. */
  #stalledSince = 0;
  #probeTimer: NodeJS.Timeout | undefined;
  #probing = false;
  #lastLog = 0;
  /** The current stall was logged: its end is logged too. */
  #stallLogged = false;
  #closed = false;

  constructor(client: RedisClient, log: Logger, label: string) {
    this.#client = client;
    this.#log = log;
    this.#label = label;
    // A reconnection (after a restart, or a connection the kernel gave up on) is a new server.
    client.on('ready', () => this.#answered());
  }

  /** The server is known not to answer (a call went unanswered, and nothing since). */
  get stalled(): boolean {
    return this.#stalledSince !== 0;
  }

  link(timeoutMs: number): RedisLink {
    const client = this.#client;
    return { client, timeoutMs, run: (what, op) => this.run(what, timeoutMs, () => op(client)) };
  }

  async run<T>(what: string, timeoutMs: number, op: () => Promise<T>): Promise<T> {
    if (this.#stalledSince !== 0) {
      throw new StoreError('STORE_UNAVAILABLE', `redis ${what}: the server has not answered for ${Date.now() - this.#stalledSince} ms; not asked`);
    }
    const started = performance.now();
    const p = op();
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let extended = false;
    const bound = new Promise<never>((_, reject) => {
      // Judged after this turn's I/O (setImmediate): timers run before the socket is read, and
      // a reply that came in while the event loop was held up is read in the poll phase first.
      const expire = (): void => {
        setImmediate(judge);
      };
      const judge = (): void => {
        if (settled) return;
        // Judged late: a synchronous job (a big message's parse) held the loop, possibly before
        // the command was even written (ioredis sends on setImmediate). The call gets its time
        // once more rather than a busy worker taking a healthy Redis for a hung one.
        if (!extended && performance.now() - started > timeoutMs + LOOP_LAG_GRACE_MS) {
          extended = true;
          timer = setTimeout(expire, timeoutMs);
          return;
        }
        this.#stall(what, timeoutMs);
        reject(new StoreError('STORE_UNAVAILABLE', `redis ${what}: no reply within ${timeoutMs} ms`));
      };
      timer = setTimeout(expire, timeoutMs);
    });
    // Settles late too (a reply after the bound): that is the server answering again.
    p.then(() => this.#answered(), (err: unknown) => {
      if (isServerReply(err)) this.#answered();
    });
    try {
      return await Promise.race([p, bound]);
    } catch (err) {
      if (isCommandTimeout(err)) this.#stall(what, timeoutMs);
      throw redisError(err, what);
    } finally {
      settled = true;
      clearTimeout(timer);
    }
  }

  /**
   * For callers that bound their own waits (the plugin API's task.redis): `p` was sent, went
   * unanswered for `timeoutMs`, and is now abandoned; a late reply still counts as an answer.
   */
  unanswered(what: string, timeoutMs: number, p: Promise<unknown>): void {
    p.then(() => this.#answered(), (err: unknown) => {
      if (isServerReply(err)) this.#answered();
    });
    this.#stall(what, timeoutMs);
  }

  /** Since when (Date.now()) the server has not answered; 0 while it answers. */
  get stalledSince(): number {
    return this.#stalledSince;
  }

  /** Stop probing (the client is being closed). */
  close(): void {
    this.#closed = true;
    clearInterval(this.#probeTimer);
    this.#probeTimer = undefined;
  }

  #stall(what: string, timeoutMs: number): void {
    if (this.#stalledSince !== 0 || this.#closed) return;
    this.#stalledSince = Date.now();
    const now = Date.now();
    this.#stallLogged = now - this.#lastLog >= LOG_EVERY_MS;
    if (this.#stallLogged) {
      this.#lastLog = now;
      this.#log.warn('redis store not answering; its calls fail at once until it answers again', { redis: this.#label, call: what, timeoutMs });
    }
    this.#probeTimer = setInterval(() => this.#probe(), PROBE_EVERY_MS);
    // Probing must not keep a process alive that has nothing else to do.
    this.#probeTimer.unref();
  }

  #probe(): void {
    if (this.#probing) return;
    this.#probing = true;
    this.#client.ping().then(
      () => this.#answered(),
      (err: unknown) => {
        if (isServerReply(err)) this.#answered();
      },
    ).finally(() => {
      this.#probing = false;
    });
  }

  #answered(): void {
    if (this.#stalledSince === 0) return;
    const ms = Date.now() - this.#stalledSince;
    this.#stalledSince = 0;
    clearInterval(this.#probeTimer);
    this.#probeTimer = undefined;
    if (this.#stallLogged) this.#log.info('redis store answering again', { redis: this.#label, afterMs: ms });
  }
}
