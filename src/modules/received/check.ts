// Received-chain checks (Rspamd CHECK_RECEIVED, CHECK_RCVD, RCVD_HELO_USER, once_received,
// PREVIOUSLY_DELIVERED, RDNS_NONE). Hops come from task.received, top-most first.
import ipaddr from 'ipaddr.js';
import type { MessageHeader, ReceivedHop, Task } from '../../plugin-api/index.js';
import { MAX_RECEIVED_HOPS } from '../../message/limits.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import type { ReceivedConfig } from './config.js';

const RCVD_BUCKETS = [
  [1, 'ONE'],
  [2, 'TWO'],
  [3, 'THREE'],
  [5, 'FIVE'],
  [7, 'SEVEN'],
  [12, 'TWELVE'],
] as const;

/**
 * The chain as Rspamd 3.4 counts it: when the MTA gave a client IP that differs from the top
 * hop's sender, an artificial hop for the connection is put in front (and, in 3.4, counted).
 * An IP read from the top hop itself (a request without one, `meta.noIp`) adds nothing.
 */
export function effectiveHops(task: Task): readonly ReceivedHop[] {
  const hops = task.received;
  const ip = task.meta.ip;
  if (!ip || task.meta.noIp || hops.length === 0 || hops[0]!.fromIp === ip) return hops;
  const artificial: ReceivedHop = { raw: '', fromIp: ip, tls: false, authenticated: false, unparsed: false };
  return [artificial, ...hops];
}

export function checkCount(task: Task): void {
  const n = effectiveHops(task).length;
  let label = 'ZERO';
  for (const [min, name] of RCVD_BUCKETS) if (n >= min) label = name;
  task.insert(`RCVD_COUNT_${label}`, 1, String(n));
}

export function checkTls(task: Task): void {
  // A `mime` rule in Rspamd: raw input has no Received headers to judge.
  if (task.meta.raw) return;
  const hops = effectiveHops(task);
  if (hops.length === 0) return;
  // Rmilter-style artificial hops are "by localhost"; they say nothing about transport.
  const real = hops.filter((h) => h.by?.toLowerCase() !== 'localhost');
  if (real.every((h) => h.tls)) {
    task.insert('RCVD_TLS_ALL');
  } else {
    const last = hops[0]!.by?.toLowerCase() === 'localhost' ? hops[1] : hops[0];
    task.insert(last?.tls ? 'RCVD_TLS_LAST' : 'RCVD_NO_TLS_LAST');
  }
  if (hops.some((h) => h.authenticated)) task.insert('RCVD_VIA_SMTP_AUTH');
}

const HELO_USER_FROM = /^\s*from\s+user\s/;
const HELO_USER_PARAM = /helo[\s=]user[\s)]/;

export function checkHeloUser(task: Task): void {
  if (task.meta.raw) return;
  if (task.meta.helo && /^user$/i.test(task.meta.helo)) {
    task.insert('RCVD_HELO_USER');
    return;
  }
  for (const h of receivedHeaders(task)) {
    const r = h.value.toLowerCase();
    if (HELO_USER_FROM.test(r) || HELO_USER_PARAM.test(r)) {
      task.insert('RCVD_HELO_USER');
      return;
    }
  }
}

/** `d.c.b.a.in-addr.arpa` / nibble `ip6.arpa` name of an address; undefined when it does not parse. */
export function reverseName(ip: string): string | undefined {
  if (!ipaddr.isValid(ip)) return undefined;
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv4') return `${(addr as ipaddr.IPv4).octets.slice().reverse().join('.')}.in-addr.arpa`;
  const hex = (addr as ipaddr.IPv6).toNormalizedString().split(':').map((p) => p.padStart(4, '0')).join('');
  return `${hex.split('').reverse().join('.')}.ip6.arpa`;
}

/**
 * The client name the MTA passed. Postfix says `unknown` when reverse DNS failed, a milter MTA
 * gives the address in brackets (`[192.0.2.1]`); neither is a name.
 */
function clientHostname(task: Task): string | undefined {
  const hn = task.meta.hostname;
  return hn && hn.toLowerCase() !== 'unknown' && !hn.startsWith('[') ? hn : undefined;
}

/**
 * Rspamd's once_received plugin. Without a client name from the MTA it asks for the PTR itself:
 * none is RDNS_NONE (and, on a single hop, ONCE_RECEIVED); a failed lookup is RDNS_DNSFAIL too;
 * a name found becomes the task's client host name (task.setHostname).
 */
export function makeOnceReceivedCheck(config: ReceivedConfig): (task: Task) => Promise<void> | void {
  return (task) => {
    // Without a client address Rspamd 3.4 never reports a single hop (nothing to compare with).
    const ip = task.meta.ip;
    if (!ip) return;
    if (!config.check_authed && task.meta.user) return;
    if (!config.check_local && isLocalAddress(ip)) return;
    // Counted as Rspamd 3.4 counts: with the hop it adds for a client the top hop does not name
    // (its filter looks for the `artificial` flag where the hop table does not keep it).
    const single = effectiveHops(task).length <= 1;
    const hostname = clientHostname(task);
    if (hostname) {
      if (single) onceReceived(task, config, hostname);
      return;
    }
    const name = reverseName(ip);
    if (!name) return;
    return task.dns.request({ type: 'PTR', name, forced: true }).then((r) => {
      if (!r.ok && r.code !== 'NXDOMAIN' && r.code !== 'NODATA') task.insert('RDNS_DNSFAIL');
      const ptr = r.ok ? r.results.find((x): x is string => typeof x === 'string') : undefined;
      if (ptr === undefined) {
        task.insert('RDNS_NONE');
        if (!single) return;
        task.insert('ONCE_RECEIVED');
        // A message straight from a mail program to our MX: no relay wrote a Received header.
        const h = task.message.headers;
        const ua = h.first('user-agent')?.value ?? h.first('x-mailer')?.value;
        if (ua !== undefined) task.insert('DIRECT_TO_MX', 1, ua);
        return;
      }
      // Rspamd keeps the name for the rules after it; here its readers (HFILTER_CHECK, the rdns
      // lists, FWD_YANDEX, …) wait for this callback instead of asking again.
      const host = ptr.replace(/\.$/, '');
      if (host) task.setHostname(host);
      const resolved = host.toLowerCase();
      if (config.good_host.some((g) => resolved.includes(g))) return;
      if (!single) return;
      task.insert('ONCE_RECEIVED');
      const bad = config.bad_host.find((b) => resolved.includes(b));
      if (bad !== undefined) task.insert('ONCE_RECEIVED_STRICT', 1, bad);
    });
  };
}

/** A single hop from a client the MTA named: good names pass, bad-looking ones are strict. */
function onceReceived(task: Task, config: ReceivedConfig, hostname: string): void {
  const hop = effectiveHops(task)[0];
  if (!hop) return;
  const hopHost = hop.fromHostname?.toLowerCase();
  if (hopHost && config.good_host.some((g) => hopHost.includes(g))) return;
  task.insert('ONCE_RECEIVED');
  const hn = hostname.toLowerCase();
  const bad = config.bad_host.find((b) => hn.includes(b));
  if (bad !== undefined) task.insert('ONCE_RECEIVED_STRICT', 1, bad);
}

const FOR_OPEN = /\sfor\s</g;
const LINE_END = /[\n\r\u2028\u2029]/;

/**
 * The address of the first ` for <…>` clause in `value` (what `/\sfor\s<(.*?)>/` finds, `.`
 * stopping at line ends): the regexp retried its lazy run from every ` for <`, quadratic in a
 * value of thousands of them (a second per 60 KiB header).
 */
export function forAddress(value: string): string | undefined {
  FOR_OPEN.lastIndex = 0;
  for (let m = FOR_OPEN.exec(value); m; m = FOR_OPEN.exec(value)) {
    const start = m.index + m[0].length;
    const gt = value.indexOf('>', start);
    if (gt < 0) return undefined;
    const inner = value.slice(start, gt);
    const brk = inner.search(LINE_END);
    if (brk < 0) return inner;
    // A line end inside: no clause starting before it can close; look after it.
    FOR_OPEN.lastIndex = start + brk;
  }
  return undefined;
}

/** The Received headers the chain is read from (MAX_RECEIVED_HOPS of them, as task.received). */
function receivedHeaders(task: Task): readonly MessageHeader[] {
  const all = task.message.headers.get('received');
  return all.length > MAX_RECEIVED_HOPS ? all.slice(0, MAX_RECEIVED_HOPS) : all;
}

export function checkPreviouslyDelivered(task: Task): void {
  const m = task.message;
  const to = m.cc.length ? [...m.to, ...m.cc] : m.to;
  if (to.length === 0) return;
  for (const h of receivedHeaders(task)) {
    const addr = forAddress(h.value.toLowerCase());
    if (addr === undefined) continue;
    if (to.some((a) => a.address.toLowerCase() === addr)) task.insert('PREVIOUSLY_DELIVERED', 1, addr);
    return;
  }
}
