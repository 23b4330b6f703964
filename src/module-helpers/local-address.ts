// Whether a client address is "local" in Rspamd's sense (loopback or private networks), used by
// rules that skip mail submitted from inside. Lives here because two modules need it and no
// lower layer owns address classification yet; move it down when one does.
import ipaddr from 'ipaddr.js';
import { mayBeIp } from '../message/ip.js';
import { memoize } from '../message/memo.js';

/** ipaddr.js range names that count as local. */
const LOCAL_RANGES = new Set(['loopback', 'private', 'linkLocal', 'uniqueLocal']);

export function isLocalAddress(ip: string | undefined): boolean {
  return ip ? isLocalCached(ip) : false;
}

// Memoized: rules ask about the same relay addresses for every message they pass through.
const isLocalCached = memoize((ip: string): boolean => {
  if (!mayBeIp(ip) || !ipaddr.isValid(ip)) return false;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  }
  return LOCAL_RANGES.has(addr.range());
});
