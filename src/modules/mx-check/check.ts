// Whether the sender's domain can receive mail (Rspamd's mx_check): its MX hosts (or, without
// MX records, the domain itself) are resolved and a TCP connection to port 25 of one address of
// each is tried. The outcome is cached in the key-value store per domain, so each domain costs
// the lookups once a day (a failing one every two hours).
import { getDomain } from 'tldts';
import type { DnsMx, KvStore, MapHandle, Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import type { StoreOutage } from '../../module-helpers/outage-log.js';
import type { MxCheckConfig } from './config.js';

/** Cached value of a domain with no working MX. */
const INVALID = '0';
/** Prefix of a cached value whose domain had no MX records (its A record worked). */
const MISSING_PREFIX = 'mx_miss:';
/** DNS outcomes that say the name has no such records; anything else is a lookup failure. */
const NO_RECORDS = new Set(['NXDOMAIN', 'NODATA']);

export interface MxDeps {
  cfg: MxCheckConfig;
  kv: KvStore;
  exclude: MapHandle | undefined;
  outage: StoreOutage;
  dnsFailure: (task: Task, domain: string, error: string) => void;
}

/** The domain to check: the envelope sender's, else the registrable part of the HELO name. */
export function mxDomain(task: Task): string | undefined {
  const from = task.envelopeFrom?.domain;
  if (from) return from.toLowerCase().replace(/\.$/, '');
  const helo = task.meta.helo;
  if (!helo) return undefined;
  return getDomain(helo.replace(/^\[|\]$/g, '')) ?? undefined;
}

interface MxHost { name: string; implicit: boolean }

/** Whether a TCP connection to one address of `host` opens. */
async function hostWorks(task: Task, host: string, cfg: MxCheckConfig): Promise<boolean> {
  const a = await task.dns.request({ type: 'a', name: host, forced: true });
  if (!a.ok || a.results.length === 0) return false;
  // Any address will do; a random one spreads the probes over a domain's servers (Rspamd #3839).
  const addresses = a.results.filter((x): x is string => typeof x === 'string');
  const ip = addresses[Math.floor(Math.random() * addresses.length)];
  if (ip === undefined) return false;
  const c = await task.tcp.connect({ host: ip, port: cfg.port, timeout: cfg.timeout });
  if (!c.ok) return false;
  c.conn.close();
  return true;
}

async function fromCache(task: Task, key: string, deps: MxDeps): Promise<boolean> {
  let cached: Buffer | undefined;
  try {
    cached = await deps.kv.get(key);
  } catch (e) {
    // No cache: check over the network as though nothing were stored.
    deps.outage(task, 'mx cache read', e);
    return false;
  }
  if (cached === undefined) return false;
  let value = cached.toString();
  if (value === INVALID) {
    task.insert('MX_INVALID', 1, 'cached');
    return true;
  }
  if (value.startsWith(MISSING_PREFIX)) {
    task.insert('MX_MISSING', 1, 'cached');
    value = value.slice(MISSING_PREFIX.length);
  }
  task.insert('MX_GOOD', 1, `cached: ${value.split(';')[0]}`);
  return true;
}

async function remember(task: Task, key: string, value: string, ttlS: number, deps: MxDeps): Promise<void> {
  try {
    await deps.kv.set(key, value, ttlS * 1000);
  } catch (e) {
    deps.outage(task, 'mx cache write', e);
  }
}

export async function checkMx(task: Task, deps: MxDeps): Promise<void> {
  const { cfg } = deps;
  if (!cfg.check_authed && task.meta.user) return;
  if (!cfg.check_local && task.meta.ip && isLocalAddress(task.meta.ip)) return;
  const domain = mxDomain(task);
  if (!domain) return;
  if (deps.exclude?.has(domain)) {
    task.insert('MX_WHITE', 1, domain);
    return;
  }
  const key = cfg.key_prefix + domain;
  if (await fromCache(task, key, deps)) return;

  const mx = await task.dns.request({ type: 'mx', name: domain, forced: true });
  let hosts: MxHost[];
  if (mx.ok) {
    const records = mx.results.filter((r): r is DnsMx => typeof r === 'object' && 'priority' in r);
    // RFC 7505 null MX ("MX 0 ."): the domain says it takes no mail.
    if (records.length === 1 && (records[0]!.name === '' || records[0]!.name === '.')) {
      task.insert('MX_INVALID', 1, 'null MX');
      await remember(task, key, INVALID, cfg.expire_novalid, deps);
      return;
    }
    hosts = records.sort((x, y) => x.priority - y.priority).slice(0, cfg.max_mx_a_records).map((r) => ({ name: r.name.replace(/\.$/, ''), implicit: false }));
  } else if (NO_RECORDS.has(mx.code)) {
    // No MX: mail goes to the domain's own address (RFC 5321 §5.1), which is tried instead.
    task.insert('MX_MISSING', 1, mx.error);
    hosts = [{ name: domain, implicit: true }];
  } else {
    // A time-out or server failure says nothing about the domain: no verdict, nothing cached.
    deps.dnsFailure(task, domain, mx.error);
    return;
  }
  if (hosts.length === 0) {
    task.insert('MX_MISSING', 1, 'no MX records found');
    hosts = [{ name: domain, implicit: true }];
  }
  const works = await Promise.all(hosts.map((h) => hostWorks(task, h.name, cfg)));
  const working = hosts.filter((_, i) => works[i]).map((h) => h.name);
  if (working.length === 0) {
    task.insert('MX_INVALID', 1);
    await remember(task, key, INVALID, cfg.expire_novalid, deps);
    return;
  }
  task.insert('MX_GOOD', 1, working);
  const implicit = hosts.some((h) => h.implicit);
  await remember(task, key, (implicit ? MISSING_PREFIX : '') + working.join(';'), cfg.expire, deps);
}
