// Which peers `encrypted_only` still lets through in plaintext, as Rspamd decides it:
// IPv4 127/8, IPv6 loopback, link-local and site-local, and unix sockets (no address).
// Private IPv4 ranges are deliberately not local here: they are other machines.

import ipaddr from 'ipaddr.js';

export function isLocalPeer(address: string): boolean {
  if (address === '') return true; // unix socket
  if (!ipaddr.isValid(address)) return false;
  let addr = ipaddr.parse(address);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return addr.toByteArray()[0] === 127;
  const b = addr.toByteArray();
  const loopback = b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  const linkLocal = b[0] === 0xfe && (b[1]! & 0xc0) === 0x80; // fe80::/10
  const siteLocal = b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0; // fec0::/10
  return loopback || linkLocal || siteLocal;
}
