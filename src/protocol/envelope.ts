// Envelope values as MTAs send them in request headers: client IPs in every form a milter or
// MTA writes them, RFC 5321 paths (with or without brackets, source routes, quoted local
// parts) and recipient lists. Invalid values are reported as undefined; the caller flags
// the task.

import ipaddr from 'ipaddr.js';
import { parseEnvelopeAddress } from '../message/addresses.js';
import { mayBeIp } from '../message/ip.js';

/**
 * `203.0.113.5`, `192.0.2.44:2525`, `2001:db8::25`, `[2001:db8::1]:25`, `IPv6:...`;
 * IPv4-mapped IPv6 reduced to IPv4. Unix socket paths (`/…`, `.…`) are kept verbatim.
 */
export function parseClientIp(value: string): string | undefined {
  let v = value.trim();
  if (v.length === 0) return undefined;
  if (v[0] === '/' || v[0] === '.') return v;
  if (v.startsWith('[')) {
    const close = v.indexOf(']');
    if (close < 0) return undefined;
    const rest = v.slice(close + 1);
    if (rest.length > 0 && !/^:\d{1,5}$/.test(rest)) return undefined;
    v = v.slice(1, close);
  } else if (v.indexOf(':') > 0 && v.indexOf(':') === v.lastIndexOf(':')) {
    // Exactly one colon: IPv4 with a port (an IPv6 address has at least two).
    const [host, port] = v.split(':') as [string, string];
    if (!/^\d{1,5}$/.test(port)) return undefined;
    v = host;
  }
  if (v.toLowerCase().startsWith('ipv6:')) v = v.slice(5);
  const zone = v.indexOf('%');
  if (zone > 0) v = v.slice(0, zone);
  if (!mayBeIp(v) || !ipaddr.isValid(v)) return undefined;
  if (ipaddr.IPv4.isValid(v) && !ipaddr.IPv4.isValidFourPartDecimal(v)) return undefined;
  const addr = ipaddr.parse(v);
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    return v6.toString();
  }
  return addr.toString();
}

/**
 * An RFC 5321 path → `local@domain` without brackets; '' for the null sender; undefined
 * when the value is not an address. The grammar lives in the message layer (one parser for
 * envelope values wherever they come from).
 */
export function parseEnvelopePath(value: string): string | undefined {
  return parseEnvelopeAddress(value)?.address;
}

/** Splits a `Rcpt` value on commas outside double quotes (backslash escapes honoured). */
export function splitAddressList(value: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (quoted && c === '\\' && i + 1 < value.length) {
      cur += c + value[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur);
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}
