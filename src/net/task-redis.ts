// Redis commands of one task: `request(params, attrs, command)` in callback or
// awaited form, and `connect(params)` for a batch of commands sent in one round trip. Replies
// come back as data (nil → null); error replies and time-outs are error text, never throws.

import { callBudget, dispatch, NetError } from './scope.js';
import type { NetScope } from './scope.js';
import type { RedisTarget } from './redis-pool.js';
import type { RedisGuard } from '../storage/redis/guard.js';
import type { RedisAttrs, RedisCallback, RedisConnection, RedisParams, RedisResult, RedisValue, TaskRedis } from './types.js';

/** Rspamd's Redis timeout default, seconds. */
export const DEFAULT_REDIS_TIMEOUT = 1;
export const DEFAULT_REDIS_SERVER = '127.0.0.1:6379';

type Arg = string | number | Buffer;

function target(p: RedisParams): RedisTarget {
  const s = (Array.isArray(p.servers) ? p.servers[0] : p.servers) ?? DEFAULT_REDIS_SERVER;
  const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(s.trim());
  if (!m) throw new NetError('NET_BAD_REQUEST', `bad Redis server ${s}`);
  const t: RedisTarget = { host: m[1] ?? m[2]!, port: m[3] ? Number(m[3]) : 6379, db: p.db ?? 0 };
  if (p.username !== undefined) t.username = p.username;
  if (p.password !== undefined) t.password = p.password;
  return t;
}

/**
 * Race a Redis promise against the call budget and the task's abort signal. A command left
 * unanswered for its whole budget marks the server as not answering (`guard`).
 */
function bounded<T>(scope: NetScope, ms: number, p: Promise<T>, server: string, guard: RedisGuard): Promise<{ value: T } | { error: string }> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: { value: T } | { error: string }): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      scope.signal.removeEventListener('abort', onAbort);
      resolve(r);
    };
    // Judged after this turn's I/O (see RedisGuard.run): a reply read late because the event
    // loop was blocked is still a reply.
    const timer = setTimeout(() => setImmediate(() => {
      if (done) return;
      guard.unanswered('plugin command', ms, p);
      finish({ error: `timeout while connecting the server (${(ms / 1000).toFixed(6)} sec) ${server}` });
    }), ms);
    const onAbort = (): void => finish({ error: scope.ended ? 'session is terminating' : 'timeout' });
    if (scope.signal.aborted) return onAbort();
    scope.signal.addEventListener('abort', onAbort, { once: true });
    p.then((value) => finish({ value }), (e: unknown) => finish({ error: (e as Error).message }));
  });
}

/** The error text for a server known not to answer (a command to it timed out, nothing since), else undefined. */
function notAnswering(scope: NetScope, t: RedisTarget): string | undefined {
  const since = scope.redis.guard(t).stalledSince;
  return since === 0 ? undefined : `server ${t.host}:${t.port} has not answered for ${Date.now() - since} ms; command not sent`;
}

async function send(scope: NetScope, params: RedisParams, command: Arg[]): Promise<RedisResult> {
  if (scope.ended) return { ok: false, error: 'session is terminating' };
  if (command.length === 0) return { ok: false, error: 'empty command' };
  const t = target(params);
  const refused = notAnswering(scope, t);
  if (refused) return { ok: false, error: refused };
  const client = scope.redis.get(t);
  const [cmd, ...args] = command;
  const r = await bounded(scope, callBudget(scope, params.timeout, DEFAULT_REDIS_TIMEOUT), client.call(String(cmd), ...args) as Promise<RedisValue>, `${t.host}:${t.port}`, scope.redis.guard(t));
  return 'error' in r ? { ok: false, error: r.error } : { ok: true, data: r.value ?? null };
}

class Batch implements RedisConnection {
  readonly #cmds: Arg[][] = [];
  constructor(private readonly scope: NetScope, private readonly params: RedisParams) {}

  add_cmd(command: string, args: Arg[] = []): void {
    this.#cmds.push([command, ...args]);
  }

  async exec(): Promise<{ ok: true; data: RedisValue[] } | { ok: false; error: string }> {
    this.scope.requireCoro('redis');
    if (this.scope.ended) return { ok: false, error: 'session is terminating' };
    const ev = this.scope.begin('redis');
    try {
      const t = target(this.params);
      const cmds = this.#cmds.splice(0);
      const refused = notAnswering(this.scope, t);
      if (refused) return { ok: false, error: refused };
      const pipe = this.scope.redis.get(t).pipeline(cmds.map(([c, ...a]) => ['call', String(c), ...a]) as Array<[string, ...unknown[]]>);
      const r = await bounded(this.scope, callBudget(this.scope, this.params.timeout, DEFAULT_REDIS_TIMEOUT), pipe.exec(), `${t.host}:${t.port}`, this.scope.redis.guard(t));
      if ('error' in r) return { ok: false, error: r.error };
      const data = (r.value ?? []).map(([err, v]) => (err ? err.message : (v as RedisValue) ?? null));
      return { ok: true, data };
    } finally {
      ev.end();
    }
  }
}

export class TaskRedisImpl implements TaskRedis {
  constructor(private readonly scope: NetScope) {}

  request(params: RedisParams, attrs: RedisAttrs & { callback: RedisCallback }, command: Arg[]): boolean;
  request(params: RedisParams, attrs: Omit<RedisAttrs, 'callback'>, command: Arg[]): Promise<RedisResult>;
  request(params: RedisParams, attrs: RedisAttrs, command: Arg[]): boolean | Promise<RedisResult> {
    if (!Array.isArray(command)) throw new NetError('NET_BAD_REQUEST', 'redis.request needs a command array');
    const cb = attrs.callback;
    return dispatch(this.scope, 'redis', cb, () => send(this.scope, params, command), (r) => {
      if (r.ok) cb!(undefined, r.data);
      else cb!(r.error);
    });
  }

  async connect(params: RedisParams): Promise<{ ok: true; conn: RedisConnection } | { ok: false; error: string }> {
    this.scope.requireCoro('redis');
    if (this.scope.ended) return { ok: false, error: 'session is terminating' };
    try {
      target(params);
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
    return { ok: true, conn: new Batch(this.scope, params) };
  }
}
