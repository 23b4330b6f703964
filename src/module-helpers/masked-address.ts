// A client address reduced to its network (`192.0.0.0/19`), for keys that should cover a sender's
// neighbours too: greylisting triplets, reputation counters.
import ipaddr from 'ipaddr.js';

/** `ip` masked to `ipv4Bits` or `ipv6Bits` (an IPv4-mapped IPv6 address as IPv4), as `network/bits`; '' when it is no address. */
export function maskedAddress(ip: string | undefined, ipv4Bits: number, ipv6Bits: number): string {
  if (!ip || !ipaddr.isValid(ip)) return '';
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const bits = addr.kind() === 'ipv4' ? ipv4Bits : ipv6Bits;
  const bytes = addr.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${bits}`;
}
