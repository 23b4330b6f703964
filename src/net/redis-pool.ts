// Redis clients shared by every task of a worker, one per server/db/credentials, made on first
// use. A task never owns a client: it sends commands on the shared one and stops waiting when
// its timeout or deadline passes (the late reply is dropped). Each client has a guard: once a
// command went unanswered for its whole timeout, commands to that server are refused at once
// until it answers again (as the stores do, storage/redis/guard.ts), so a hung Redis costs the
// scans of a plugin one timeout, not one per call.

import type { Redis, RedisOptions } from 'ioredis';
import { ioredis } from '../storage/redis/ioredis-lib.js';
import type { Logger } from '../core/logger.js';
import { RedisGuard } from '../storage/redis/guard.js';

export interface RedisTarget { host: string; port: number; db: number; username?: string; password?: string }

/** Reconnect attempts back off up to this many ms, so a Redis that is down is not hammered. */
const MAX_RECONNECT_DELAY_MS = 2000;

const SILENT: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export class RedisPool {
  readonly #clients = new Map<string, { client: Redis; guard: RedisGuard }>();
  readonly #log: Logger;

  constructor(log: Logger = SILENT) {
    this.#log = log;
  }

  get(t: RedisTarget): Redis {
    return this.#entry(t).client;
  }

  /** The guard of `t`'s client: whether the server is known not to answer. */
  guard(t: RedisTarget): RedisGuard {
    return this.#entry(t).guard;
  }

  #entry(t: RedisTarget): { client: Redis; guard: RedisGuard } {
    const key = `${t.host}:${t.port}/${t.db}/${t.username ?? ''}/${t.password ?? ''}`;
    let e = this.#clients.get(key);
    if (!e) {
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
      const client = new (ioredis().Redis)(opts);
      client.on('error', () => {
        // Connection errors surface as failed commands; ioredis reconnects on its own.
      });
      e = { client, guard: new RedisGuard(client, this.#log, `plugin ${t.host}:${t.port}/${t.db}`) };
      this.#clients.set(key, e);
    }
    return e;
  }

  /** Close every client (worker shutdown, tests). */
  async close(): Promise<void> {
    const all = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(all.map(({ client, guard }) => {
      guard.close();
      return client.quit().catch(() => client.disconnect());
    }));
  }
}
