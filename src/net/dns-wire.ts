// DNS message encoding and decoding (RFC 1035, 3596, 2782, 6891) for the record types plugins
// ask for. Used by the shared resolver and by the loopback test server, so both speak the same
// bytes. Pure functions: no I/O.

export const RECORD_TYPES = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, OPT: 41, SPF: 99 } as const;
export type RecordType = Exclude<keyof typeof RECORD_TYPES, 'OPT'>;
const TYPE_NAMES = new Map<number, string>(Object.entries(RECORD_TYPES).map(([k, v]) => [v, k]));

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** Longest name on the wire (RFC 1035 §3.1); longer input is a format error, not a truncation. */
const MAX_NAME_BYTES = 255;
/** Compression pointers followed while reading one name: stops pointer loops in hostile replies. */
const MAX_POINTER_HOPS = 64;

export interface MxData { exchange: string; priority: number }
export interface SoaData { nsname: string; hostmaster: string; serial: number; refresh: number; retry: number; expire: number; minttl: number }
export interface SrvData { priority: number; weight: number; port: number; name: string }
/** A/AAAA/NS/CNAME/PTR: string; TXT/SPF: the character-strings of one record. */
export type RecordData = string | string[] | MxData | SoaData | SrvData;

export interface ResourceRecord { name: string; type: string; ttl: number; data: RecordData }
export interface Question { name: string; type: string }

export interface DnsMessage {
  id: number;
  response: boolean;
  opcode: number;
  authoritative: boolean;
  truncated: boolean;
  recursionDesired: boolean;
  rcode: number;
  questions: Question[];
  answers: ResourceRecord[];
  authorities: ResourceRecord[];
  /** EDNS0 payload size advertised in an OPT record, if any. */
  ednsSize?: number;
}

export class DnsWireError extends Error {
  readonly code = 'DNS_WIRE_FORMAT';
}

function typeCode(t: string): number {
  const c = (RECORD_TYPES as Record<string, number>)[t.toUpperCase()];
  if (c === undefined) throw new DnsWireError(`unsupported record type ${t}`);
  return c;
}

function encodeName(name: string, out: number[]): void {
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  let total = 1;
  if (trimmed.length > 0) {
    for (const label of trimmed.split('.')) {
      const b = Buffer.from(label, 'utf8');
      if (b.length === 0 || b.length > 63) throw new DnsWireError(`bad label in ${name}`);
      total += b.length + 1;
      out.push(b.length, ...b);
    }
  }
  if (total > MAX_NAME_BYTES) throw new DnsWireError(`name too long: ${name}`);
  out.push(0);
}

function u16(out: number[], v: number): void {
  out.push((v >>> 8) & 0xff, v & 0xff);
}
function u32(out: number[], v: number): void {
  out.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
}

function encodeIp4(ip: string, out: number[]): void {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !(p >= 0 && p <= 255))) throw new DnsWireError(`bad IPv4 ${ip}`);
  out.push(...parts);
}

function encodeIp6(ip: string, out: number[]): void {
  let [head, tail] = ip.includes('::') ? ip.split('::') as [string, string] : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) throw new DnsWireError(`bad IPv6 ${ip}`);
  for (const g of groups) u16(out, parseInt(g, 16));
}

function encodeRdata(type: number, data: RecordData): number[] {
  const out: number[] = [];
  switch (type) {
    case RECORD_TYPES.A: encodeIp4(data as string, out); break;
    case RECORD_TYPES.AAAA: encodeIp6(data as string, out); break;
    case RECORD_TYPES.NS: case RECORD_TYPES.CNAME: case RECORD_TYPES.PTR: encodeName(data as string, out); break;
    case RECORD_TYPES.MX: { const d = data as MxData; u16(out, d.priority); encodeName(d.exchange, out); break; }
    case RECORD_TYPES.TXT: case RECORD_TYPES.SPF: {
      const strings = typeof data === 'string' ? [data] : (data as string[]);
      for (const s of strings) {
        const b = Buffer.from(s, 'utf8');
        // A character-string holds 255 bytes at most; longer text is split as zone files do.
        for (let i = 0; i < b.length || (i === 0 && b.length === 0); i += 255) {
          const chunk = b.subarray(i, i + 255);
          out.push(chunk.length, ...chunk);
          if (b.length === 0) break;
        }
      }
      break;
    }
    case RECORD_TYPES.SOA: {
      const d = data as SoaData;
      encodeName(d.nsname, out); encodeName(d.hostmaster, out);
      u32(out, d.serial); u32(out, d.refresh); u32(out, d.retry); u32(out, d.expire); u32(out, d.minttl);
      break;
    }
    case RECORD_TYPES.SRV: { const d = data as SrvData; u16(out, d.priority); u16(out, d.weight); u16(out, d.port); encodeName(d.name, out); break; }
    default: throw new DnsWireError(`cannot encode type ${type}`);
  }
  return out;
}

function encodeRecord(rr: ResourceRecord, out: number[]): void {
  const type = typeCode(rr.type);
  encodeName(rr.name, out);
  u16(out, type); u16(out, 1); u32(out, rr.ttl);
  const rdata = encodeRdata(type, rr.data);
  u16(out, rdata.length);
  for (const b of rdata) out.push(b);
}

export interface EncodeOptions { ednsSize?: number }

export function encodeMessage(m: DnsMessage, opts: EncodeOptions = {}): Buffer {
  const out: number[] = [];
  u16(out, m.id);
  const flags = (m.response ? 0x8000 : 0) | ((m.opcode & 0xf) << 11) | (m.authoritative ? 0x400 : 0) | (m.truncated ? 0x200 : 0) |
    (m.recursionDesired ? 0x100 : 0) | (m.response ? 0x80 : 0) | (m.rcode & 0xf);
  u16(out, flags);
  const edns = opts.ednsSize ?? m.ednsSize;
  u16(out, m.questions.length); u16(out, m.answers.length); u16(out, m.authorities.length); u16(out, edns ? 1 : 0);
  for (const q of m.questions) { encodeName(q.name, out); u16(out, typeCode(q.type)); u16(out, 1); }
  for (const rr of m.answers) encodeRecord(rr, out);
  for (const rr of m.authorities) encodeRecord(rr, out);
  if (edns) { out.push(0); u16(out, RECORD_TYPES.OPT); u16(out, edns); u32(out, 0); u16(out, 0); }
  return Buffer.from(out);
}

/**
 * A recursive query for one question: the bytes encodeMessage gives for it, written straight into
 * one buffer (the resolver sends dozens per message; a number array per query cost more than the send).
 */
export function encodeQuery(id: number, name: string, type: string, ednsSize?: number): Buffer {
  const qtype = typeCode(type);
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  const nameBytes = Buffer.byteLength(trimmed, 'utf8');
  // Wire form: a length byte before each label (standing in for the dots) and the root's 0.
  const wireName = trimmed.length > 0 ? nameBytes + 2 : 1;
  const buf = Buffer.allocUnsafe(12 + wireName + 4 + (ednsSize ? 11 : 0));
  buf.writeUInt16BE(id & 0xffff, 0);
  buf.writeUInt16BE(0x0100, 2); // RD
  buf.writeUInt16BE(1, 4);
  buf.writeUInt32BE(0, 6);
  buf.writeUInt16BE(ednsSize ? 1 : 0, 10);
  let pos = 12;
  if (trimmed.length > 0) {
    // UTF-8 never uses 0x2e inside a multi-byte character, so every 0x2e byte is a label dot.
    buf.write(trimmed, 13, 'utf8');
    let lenAt = 12;
    for (let i = 13; i <= 13 + nameBytes; i++) {
      if (i < 13 + nameBytes && buf[i] !== 0x2e) continue;
      const len = i - lenAt - 1;
      if (len === 0 || len > 63) throw new DnsWireError(`bad label in ${name}`);
      buf[lenAt] = len;
      lenAt = i;
    }
    pos = 13 + nameBytes;
  }
  if (wireName > MAX_NAME_BYTES) throw new DnsWireError(`name too long: ${name}`);
  buf[pos++] = 0;
  buf.writeUInt16BE(qtype, pos); buf.writeUInt16BE(1, pos + 2); pos += 4;
  if (ednsSize) {
    buf[pos] = 0;
    buf.writeUInt16BE(RECORD_TYPES.OPT, pos + 1); buf.writeUInt16BE(ednsSize & 0xffff, pos + 3);
    buf.writeUInt32BE(0, pos + 5); buf.writeUInt16BE(0, pos + 9);
  }
  return buf;
}

class Reader {
  constructor(readonly buf: Buffer, public pos = 0) {}
  need(n: number): void { if (this.pos + n > this.buf.length) throw new DnsWireError('message truncated'); }
  u8(): number { this.need(1); return this.buf[this.pos++]!; }
  u16(): number { this.need(2); const v = this.buf.readUInt16BE(this.pos); this.pos += 2; return v; }
  u32(): number { this.need(4); const v = this.buf.readUInt32BE(this.pos); this.pos += 4; return v; }
  name(): string {
    const labels: string[] = [];
    let pos = this.pos;
    let jumped = false;
    let hops = 0;
    let bytes = 0;
    for (;;) {
      if (pos >= this.buf.length) throw new DnsWireError('name runs past the message');
      const len = this.buf[pos]!;
      if ((len & 0xc0) === 0xc0) {
        if (pos + 1 >= this.buf.length) throw new DnsWireError('bad pointer');
        if (++hops > MAX_POINTER_HOPS) throw new DnsWireError('compression loop');
        const target = ((len & 0x3f) << 8) | this.buf[pos + 1]!;
        if (!jumped) this.pos = pos + 2;
        jumped = true;
        pos = target;
        continue;
      }
      if (len === 0) { if (!jumped) this.pos = pos + 1; break; }
      bytes += len + 1;
      if (bytes > MAX_NAME_BYTES) throw new DnsWireError('name too long');
      if (pos + 1 + len > this.buf.length) throw new DnsWireError('label runs past the message');
      labels.push(this.buf.toString('latin1', pos + 1, pos + 1 + len));
      pos += 1 + len;
    }
    return labels.join('.');
  }
}

function ip6(buf: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(buf.readUInt16BE(i).toString(16));
  // Compress the longest zero run, as the canonical text form does.
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i; while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) { best = i; bestLen = j - i; }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

function decodeRdata(r: Reader, type: number, len: number): RecordData | undefined {
  const end = r.pos + len;
  r.need(len);
  let data: RecordData | undefined;
  switch (type) {
    case RECORD_TYPES.A: data = [...r.buf.subarray(r.pos, r.pos + 4)].join('.'); break;
    case RECORD_TYPES.AAAA: data = ip6(r.buf.subarray(r.pos, r.pos + 16)); break;
    case RECORD_TYPES.NS: case RECORD_TYPES.CNAME: case RECORD_TYPES.PTR: data = r.name(); break;
    case RECORD_TYPES.MX: { const priority = r.u16(); data = { priority, exchange: r.name() }; break; }
    case RECORD_TYPES.TXT: case RECORD_TYPES.SPF: {
      const strings: string[] = [];
      let p = r.pos;
      while (p < end) { const l = r.buf[p]!; strings.push(r.buf.toString('utf8', p + 1, p + 1 + l)); p += 1 + l; }
      data = strings;
      break;
    }
    case RECORD_TYPES.SOA: {
      const nsname = r.name(); const hostmaster = r.name();
      data = { nsname, hostmaster, serial: r.u32(), refresh: r.u32(), retry: r.u32(), expire: r.u32(), minttl: r.u32() };
      break;
    }
    case RECORD_TYPES.SRV: { const priority = r.u16(); const weight = r.u16(); const port = r.u16(); data = { priority, weight, port, name: r.name() }; break; }
    default: data = undefined;
  }
  r.pos = end;
  return data;
}

function decodeRecords(r: Reader, count: number, into: ResourceRecord[], m: DnsMessage): void {
  for (let i = 0; i < count; i++) {
    const name = r.name();
    const type = r.u16();
    const klass = r.u16();
    const ttl = r.u32();
    const len = r.u16();
    if (type === RECORD_TYPES.OPT) { m.ednsSize = klass; r.need(len); r.pos += len; continue; }
    const data = decodeRdata(r, type, len);
    const typeName = TYPE_NAMES.get(type);
    if (data !== undefined && typeName) into.push({ name, type: typeName, ttl, data });
  }
}

export function decodeMessage(buf: Buffer): DnsMessage {
  const r = new Reader(buf);
  const id = r.u16();
  const flags = r.u16();
  const qd = r.u16(), an = r.u16(), ns = r.u16(), ar = r.u16();
  const m: DnsMessage = {
    id, response: (flags & 0x8000) !== 0, opcode: (flags >> 11) & 0xf, authoritative: (flags & 0x400) !== 0,
    truncated: (flags & 0x200) !== 0, recursionDesired: (flags & 0x100) !== 0, rcode: flags & 0xf,
    questions: [], answers: [], authorities: [],
  };
  for (let i = 0; i < qd; i++) {
    const name = r.name();
    const type = r.u16();
    r.u16();
    m.questions.push({ name, type: TYPE_NAMES.get(type) ?? String(type) });
  }
  decodeRecords(r, an, m.answers, m);
  if (m.truncated && r.pos >= buf.length) return m;
  decodeRecords(r, ns, m.authorities, m);
  const extra: ResourceRecord[] = [];
  decodeRecords(r, ar, extra, m);
  return m;
}
