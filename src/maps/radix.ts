// IP prefix lookup for radix (ipnet) maps: the value of the longest matching prefix. IPv4
// entries are stored as IPv4-mapped IPv6, as Rspamd does, so one table answers both families.
// Prefixes are bucketed by length; a lookup probes the lengths present, longest first — at
// most 129 hash probes, usually a handful.

import ipaddr from 'ipaddr.js';

export interface RadixInsert {
  /** False when the text is not an address or CIDR. */
  ok: boolean;
}

function toBytes16(text: string): { bytes: number[]; bits: number } | undefined {
  const slash = text.indexOf('/');
  const addrText = slash >= 0 ? text.slice(0, slash) : text;
  let bits: number | undefined;
  if (slash >= 0) {
    const b = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(b)) return undefined;
    bits = Number(b);
  }
  if (!ipaddr.isValid(addrText)) return undefined;
  const addr = ipaddr.parse(addrText);
  if (addr.kind() === 'ipv4') {
    if (bits !== undefined && bits > 32) return undefined;
    return { bytes: (addr as ipaddr.IPv4).toIPv4MappedAddress().toByteArray(), bits: (bits ?? 32) + 96 };
  }
  if (bits !== undefined && bits > 128) return undefined;
  return { bytes: addr.toByteArray(), bits: bits ?? 128 };
}

function maskedKey(bytes: readonly number[], bits: number): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    const b = keep === 0 ? 0 : bytes[i]! & ((0xff << (8 - keep)) & 0xff);
    s += (b < 16 ? '0' : '') + b.toString(16);
  }
  return s;
}

export class RadixTable {
  readonly #byLength = new Map<number, Map<string, string>>();
  /** Prefix lengths present, longest first. */
  #lengths: number[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  insert(cidr: string, value: string): boolean {
    const p = toBytes16(cidr.trim());
    if (!p) return false;
    let bucket = this.#byLength.get(p.bits);
    if (!bucket) {
      bucket = new Map();
      this.#byLength.set(p.bits, bucket);
      this.#lengths = [...this.#byLength.keys()].sort((a, b) => b - a);
    }
    const k = maskedKey(p.bytes, p.bits);
    if (!bucket.has(k)) this.#size++;
    // Rspamd keeps the first value for a duplicate prefix.
    if (!bucket.has(k)) bucket.set(k, value);
    return true;
  }

  lookup(ip: string): string | undefined {
    const p = toBytes16(ip.trim());
    if (!p || p.bits !== 128) return undefined;
    for (const len of this.#lengths) {
      const v = this.#byLength.get(len)!.get(maskedKey(p.bytes, len));
      if (v !== undefined) return v;
    }
    return undefined;
  }
}
