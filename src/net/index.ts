// The plugin network API: per-task HTTP, DNS, TCP and Redis calls on the worker's shared
// resolver and Redis pool. The engine builds one NetServices per worker and one TaskNet per
// task that uses the network (lazily, on first access).

import { readFileSync } from 'node:fs';
import { isIP, isIPv6 } from 'node:net';
import { DnsResolver } from './dns-resolver.js';
import type { ResolverOptions } from './dns-resolver.js';
import { RedisPool } from './redis-pool.js';
import type { NetScope } from './scope.js';
import type { Logger } from '../core/logger.js';
import { TaskDnsImpl, type DnsBudget } from './task-dns.js';
import { TaskHttpImpl } from './task-http.js';
import { TaskRedisImpl } from './task-redis.js';
import { TaskTcpImpl } from './task-tcp.js';
import { TaskUdpImpl } from './task-udp.js';
import type { TaskDns, TaskHttp, TaskRedis, TaskTcp, TaskUdp } from './types.js';

export * from './types.js';
export { DnsError } from './dns-errors.js';
export { DnsResolver, DEFAULT_RESOLVER_OPTIONS } from './dns-resolver.js';
export type { ResolverOptions, DnsAnswer } from './dns-resolver.js';
export { RedisPool } from './redis-pool.js';
export { NetError } from './scope.js';
export type { NetScope, NetEvent, NetErrorCode } from './scope.js';
export type { DnsBudget, DnsFailures } from './task-dns.js';
export { DEFAULT_DNS_MAX_REQUESTS } from './task-dns.js';

/** What a worker shares between its tasks. */
export interface NetServices {
  readonly resolver: DnsResolver;
  readonly redis: RedisPool;
  readonly dnsMaxRequests: number;
  close(): Promise<void>;
}

export interface NetOptions {
  dns?: Partial<ResolverOptions> & { maxRequests?: number };
  /** Where a Redis server that stops answering is reported. */
  log?: Logger;
}

export function createNetServices(opts: NetOptions = {}): NetServices {
  const { maxRequests, ...resolverOpts } = opts.dns ?? {};
  if (!resolverOpts.servers || resolverOpts.servers.length === 0) resolverOpts.servers = systemNameservers();
  const resolver = new DnsResolver(resolverOpts);
  const redis = new RedisPool(opts.log);
  return {
    resolver,
    redis,
    dnsMaxRequests: maxRequests ?? 64,
    close: () => redis.close(),
  };
}

export interface TaskNet {
  readonly http: TaskHttp;
  readonly dns: TaskDns;
  readonly tcp: TaskTcp;
  readonly udp: TaskUdp;
  readonly redis: TaskRedis;
}

/** `budget`: the task's DNS lookup count, shared when one task has several views (one per symbol). */
export function createTaskNet(scope: NetScope, budget?: DnsBudget): TaskNet {
  return {
    http: new TaskHttpImpl(scope),
    dns: new TaskDnsImpl(scope, budget),
    tcp: new TaskTcpImpl(scope),
    udp: new TaskUdpImpl(scope),
    redis: new TaskRedisImpl(scope),
  };
}

/**
 * The default nameservers when the config names none: MAILSIFT_DNS_NAMESERVER (comma-separated
 * `host:port`; the test runner points it at a loopback stub so test scans never query the
 * machine's resolver), else those of /etc/resolv.conf (as Rspamd), else loopback.
 */
export function systemNameservers(path = '/etc/resolv.conf'): string[] {
  const fromEnv = process.env.MAILSIFT_DNS_NAMESERVER?.split(',').map((x) => x.trim()).filter(Boolean);
  if (fromEnv && fromEnv.length > 0) return fromEnv;
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return ['127.0.0.1:53'];
  }
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const ip = m[1]!.split('%')[0]!;
    if (isIP(ip)) out.push(isIPv6(ip) ? `[${ip}]:53` : `${ip}:53`);
  }
  return out.length > 0 ? out : ['127.0.0.1:53'];
}
