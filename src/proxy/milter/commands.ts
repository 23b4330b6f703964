// Payload grammar of the MTA's commands. Pure functions from
// a frame's data to typed values; a payload that breaks the grammar is a MilterInputError, which
// the session turns into "close this connection with a log line".

import net from 'node:net';
import ipaddr from 'ipaddr.js';

export class MilterInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MilterInputError';
  }
}

export interface OptNeg {
  version: number;
  actions: number;
  protocol: number;
}

export function parseOptNeg(data: Buffer): OptNeg {
  if (data.length !== 12) throw new MilterInputError(`OPTNEG of ${data.length} bytes, expected 12`);
  return { version: data.readUInt32BE(0), actions: data.readUInt32BE(4), protocol: data.readUInt32BE(8) };
}

export interface MacroFrame {
  /** The command letter the macros belong to (`C`, `H`, `M`, `R`, `T`, `L`, `N`, `B`, `E`). */
  stage: number;
  pairs: Array<[string, string]>;
}

/**
 * `stage` then `name\0value\0` pairs. A name without a terminated value is an error (Rspamd
 * closes the connection too). An empty frame (no stage byte) is harmless and yields nothing.
 * The loop advances by at least two bytes per pair, so its count is bounded by the frame cap.
 */
export function parseMacros(data: Buffer): MacroFrame {
  const out: MacroFrame = { stage: data.length > 0 ? data[0]! : 0, pairs: [] };
  let pos = 1;
  while (pos < data.length) {
    const nameEnd = data.indexOf(0, pos);
    if (nameEnd < 0) throw new MilterInputError('macro name without a NUL');
    const valueEnd = data.indexOf(0, nameEnd + 1);
    if (valueEnd < 0) throw new MilterInputError('macro value without a NUL');
    out.pairs.push([data.toString('utf8', pos, nameEnd), data.toString('utf8', nameEnd + 1, valueEnd)]);
    pos = valueEnd + 1;
  }
  return out;
}

export type ConnectAddress =
  | { family: 'inet'; ip: string; v6: boolean; port: number }
  | { family: 'unix'; path: string };

export interface Connect {
  hostname: string;
  /** Absent for family `U` or when the MTA sent no address. */
  address?: ConnectAddress;
}

/**
 * `hostname\0`, family (`U`, `L`, `4`, `6`), then for a known family `u16 port` and
 * `address\0`. Rspamd reads past the frame when the family byte or port is missing; we refuse.
 */
export function parseConnect(data: Buffer): Connect {
  const nameEnd = data.indexOf(0);
  if (nameEnd < 0) throw new MilterInputError('CONNECT without a NUL after the host name');
  const hostname = data.toString('utf8', 0, nameEnd);
  let pos = nameEnd + 1;
  if (pos >= data.length) throw new MilterInputError('CONNECT without an address family');
  const family = String.fromCharCode(data[pos++]!);
  if (family === 'U') return { hostname };
  if (family !== 'L' && family !== '4' && family !== '6') throw new MilterInputError(`CONNECT with address family ${JSON.stringify(family)}`);
  if (pos + 2 > data.length) throw new MilterInputError('CONNECT without a port');
  const port = data.readUInt16BE(pos);
  pos += 2;
  // Rspamd: a known family with nothing after the port is "no IP somehow", not an error.
  if (pos >= data.length) return { hostname };
  const end = data.indexOf(0, pos);
  if (end < 0) throw new MilterInputError('CONNECT address without a NUL');
  const text = data.toString('utf8', pos, end);
  if (family === 'L') return { hostname, address: { family: 'unix', path: text } };
  const ip = parseConnectIp(text);
  if (!ip) throw new MilterInputError(`CONNECT with a bad IP address ${JSON.stringify(text.slice(0, 100))}`);
  return { hostname, address: { family: 'inet', ip: ip.ip, v6: ip.v6, port } };
}

/**
 * Sendmail writes `IPv6:2001:db8::1`; Postfix the bare address. Brackets are accepted. The
 * address is written back in inet_ntop's form, and an IPv4-mapped IPv6 address as IPv4, as
 * Rspamd does (rspamd_inet_address_v6_maybe_map).
 */
export function parseConnectIp(text: string): { ip: string; v6: boolean } | undefined {
  let t = text;
  if (t.length > 5 && t.slice(0, 5).toLowerCase() === 'ipv6:') t = t.slice(5);
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  const kind = net.isIP(t);
  if (kind === 4) return { ip: t, v6: false };
  if (kind !== 6) return undefined;
  const zone = t.indexOf('%');
  const addr = ipaddr.IPv6.parse(zone > 0 ? t.slice(0, zone) : t);
  if (addr.isIPv4MappedAddress()) return { ip: addr.toIPv4Address().toString(), v6: false };
  return { ip: addr.toString(), v6: true };
}

/** HELO: the name, without its NUL (tolerated when missing, like Rspamd). */
export function parseHelo(data: Buffer): string {
  const end = data.length > 0 && data[data.length - 1] === 0 ? data.length - 1 : data.length;
  return data.toString('utf8', 0, end);
}

/**
 * MAIL / RCPT: the path, then ESMTP arguments (`SIZE=512\0BODY=8BITMIME\0`), which Rspamd 3.4
 * does not forward. Rspamd's RCPT loop tries every argument as an address too; an argument is
 * never a valid path, so taking only the first string is the same.
 */
export function parseEnvelopeArg(data: Buffer): string {
  const end = data.indexOf(0);
  return data.toString('utf8', 0, end < 0 ? data.length : end);
}

export interface HeaderField {
  name: Buffer;
  value: Buffer;
}

/** `name\0value\0`; both NULs are required (libmilter and Rspamd both refuse less). */
export function parseHeader(data: Buffer): HeaderField {
  const nameEnd = data.indexOf(0);
  if (nameEnd < 0) throw new MilterInputError('HEADER without a NUL after the name');
  if (data.length < nameEnd + 2 || data[data.length - 1] !== 0) throw new MilterInputError('HEADER value without a NUL');
  return { name: data.subarray(0, nameEnd), value: data.subarray(nameEnd + 1, data.length - 1) };
}
