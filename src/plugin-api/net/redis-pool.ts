// Redis clients shared by every task of a worker, one per server/db/credentials, made on first
// use. A task never owns a client: it sends commands on the shared one and stops waiting when
// its timeout or deadline passes (the late reply is dropped).

import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';

export interface RedisTarget { host: string; port: number; db: number; username?: string; password?: string }

/** Reconnect attempts back off up to this many ms, so a Redis that is down is not hammered. */
const MAX_RECONNECT_DELAY_MS = 2000;

export class RedisPool {
  readonly #clients = new Map<string, Redis>();

  get(t: RedisTarget): Redis {
    const key = `${t.host}:${t.port}/${t.db}/${t.username ?? ''}/${t.password ?? ''}`;
    let c = this.#clients.get(key);
    if (!c) {
      const opts: RedisOptions = {
        host: t.host,
        port: t.port,
        db: t.db,
        lazyConnect: false,
        // Fail queued commands fast while disconnected: the task's own timeout is the real bound.
        maxRetriesPerRequest: 1,
        retryStrategy: (times: number) => Math.min(times * 100, MAX_RECONNECT_DELAY_MS),
      };
      if (t.username !== undefined) opts.username = t.username;
      if (t.password !== undefined) opts.password = t.password;
      c = new Redis(opts);
      c.on('error', () => {
        // Connection errors surface as failed commands; ioredis reconnects on its own.
      });
      this.#clients.set(key, c);
    }
    return c;
  }

  /** Close every client (worker shutdown, tests). */
  async close(): Promise<void> {
    const all = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
