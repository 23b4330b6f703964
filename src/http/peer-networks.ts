// Lists of peer networks (`127.0.0.0/8`, `::1`, `192.0.2.10`) and the check of a socket's
// peer address against one. Used where trust depends on who is connected, e.g. which peers
// may name local files and shared-memory segments as the message to scan.

import { BlockList, isIP } from 'node:net';

/** Loopback, v4 and v6: a process on this host (any local user). */
export const LOOPBACK_NETWORKS: readonly string[] = ['127.0.0.0/8', '::1'];

export interface Network {
  address: string;
  family: 4 | 6;
  prefix: number;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; brackets and a zone id dropped. */
export function normalisePeerAddress(addr: string): string {
  let a = addr.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const pct = a.indexOf('%');
  if (pct >= 0) a = a.slice(0, pct);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped ? mapped[1]! : a;
}

/** An address or `address/prefix`; undefined when it is neither. */
export function parseNetwork(text: string): Network | undefined {
  const slash = text.indexOf('/');
  const address = normalisePeerAddress(slash < 0 ? text : text.slice(0, slash));
  const family = isIP(address);
  if (family !== 4 && family !== 6) return undefined;
  const max = family === 4 ? 32 : 128;
  if (slash < 0) return { address, family, prefix: max };
  const prefixText = text.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  return prefix <= max ? { address, family, prefix } : undefined;
}

/** A compiled list; throws naming the entry that is not an address or network. */
export class PeerNetworks {
  readonly #list = new BlockList();
  /** The entries as configured, for messages. */
  readonly entries: readonly string[];

  constructor(entries: readonly string[]) {
    this.entries = [...entries];
    for (const raw of entries) {
      const n = parseNetwork(raw);
      if (!n) throw new Error(`"${raw}" is not an IP address or network (address/prefix)`);
      this.#list.addSubnet(n.address, n.prefix, n.family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Whether a socket's peer address (as Node reports it) is in the list. */
  has(peer: string): boolean {
    const a = normalisePeerAddress(peer);
    const family = isIP(a);
    if (family === 0) return false;
    return this.#list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  }
}
