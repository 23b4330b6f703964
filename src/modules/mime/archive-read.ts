// Archive member names read straight from attachment bytes (Rspamd's mime_types archive checks):
// the ZIP central directory, RAR 4 and RAR 5 block headers, and a 7z header when it is stored
// unencoded. Nothing is decompressed. Pure functions over a Buffer; every read is bounds-checked.

export type ArchiveFormat = 'zip' | 'rar' | '7z';

export interface ArchiveMember {
  name: string;
  encrypted: boolean;
}

export interface ArchiveListing {
  format: ArchiveFormat;
  members: ArchiveMember[];
  /** The archive (or its header) is encrypted: member names may be unreadable. */
  encrypted: boolean;
  /** More members than the limit: the rest were not read. */
  truncated?: boolean;
}

/** Members read at most per archive: bounds the work a crafted central directory can cause. */
export const MAX_ARCHIVE_MEMBERS = 1000;
/**
 * `kName` candidates decoded per 7z header. Each is checked cheaply first, but a header of
 * 0x11 bytes each followed by a length to the end decoded the rest of the header from every one
 * of them: a 400 KB header ran for minutes.
 */
const MAX_7Z_NAME_CANDIDATES = 16;
/** Bytes of one 7z `kName` property decoded: a thousand names of a hundred UTF-16 characters fit. */
const MAX_7Z_NAMES_BYTES = 256 * 1024;
/** The ZIP end record's signature, searched for natively from the end. */
const ZIP_EOCD = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
/** Longest member name kept; longer names are cut (they only feed extension checks). */
const MAX_NAME_BYTES = 1024;
/** The ZIP end record sits in the last 22 bytes plus a comment of at most 65535 bytes. */
const ZIP_EOCD_SEARCH = 22 + 0xffff;

const ZIP_CDIR_SIG = 0x02014b50;
const RAR4_SIG = Buffer.from('Rar!\x1a\x07\x00', 'latin1');
const RAR5_SIG = Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1');
const SEVENZIP_SIG = Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]);
/** 7-Zip's AES-256 + SHA-256 coder id: an encoded header using it is an encrypted header. */
const SEVENZIP_AES = Buffer.from([0x06, 0xf1, 0x07, 0x01]);

/** Which archive format the bytes are, by magic number; undefined for anything else. */
export function sniffArchive(b: Buffer): ArchiveFormat | undefined {
  if (b.length >= 4 && b.readUInt32LE(0) === 0x04034b50) return 'zip';
  if (b.subarray(0, RAR4_SIG.length).equals(RAR4_SIG) || b.subarray(0, RAR5_SIG.length).equals(RAR5_SIG)) return 'rar';
  if (b.subarray(0, SEVENZIP_SIG.length).equals(SEVENZIP_SIG)) return '7z';
  return undefined;
}

/** Member names of the archive in `b`, at most `limit` (≤ MAX_ARCHIVE_MEMBERS) of them; undefined when it is none. */
export function readArchive(b: Buffer, limit = MAX_ARCHIVE_MEMBERS): ArchiveListing | undefined {
  const max = Math.max(0, Math.min(limit, MAX_ARCHIVE_MEMBERS));
  switch (sniffArchive(b)) {
    case 'zip': return readZip(b, max);
    case 'rar': return b.subarray(0, RAR5_SIG.length).equals(RAR5_SIG) ? readRar5(b, max) : readRar4(b, max);
    case '7z': return read7z(b, max);
    default: return undefined;
  }
}

const name = (b: Buffer, start: number, len: number, utf8: boolean): string =>
  b.toString(utf8 ? 'utf8' : 'latin1', start, start + Math.min(len, MAX_NAME_BYTES));

function readZip(b: Buffer, max: number): ArchiveListing {
  const out: ArchiveListing = { format: 'zip', members: [], encrypted: false };
  if (b.length < 22) return out;
  // The last end record within the search window (a comment may follow it).
  const eocd = b.lastIndexOf(ZIP_EOCD, b.length - 22);
  if (eocd < 0 || eocd < b.length - ZIP_EOCD_SEARCH) return out;
  const count = b.readUInt16LE(eocd + 10);
  if (count > max) out.truncated = true;
  let p = b.readUInt32LE(eocd + 16);
  for (let n = 0; n < Math.min(count, max); n++) {
    if (p + 46 > b.length || b.readUInt32LE(p) !== ZIP_CDIR_SIG) break;
    const flags = b.readUInt16LE(p + 8);
    const nameLen = b.readUInt16LE(p + 28);
    const extraLen = b.readUInt16LE(p + 30);
    const commentLen = b.readUInt16LE(p + 32);
    if (p + 46 + nameLen > b.length) break;
    // Bit 0: encrypted entry; bit 11: the name is UTF-8 (else CP437, read as latin1).
    const member = { name: name(b, p + 46, nameLen, (flags & 0x800) !== 0), encrypted: (flags & 1) !== 0 };
    out.members.push(member);
    if (member.encrypted) out.encrypted = true;
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

function readRar4(b: Buffer, max: number): ArchiveListing {
  const out: ArchiveListing = { format: 'rar', members: [], encrypted: false };
  let p = RAR4_SIG.length;
  while (p + 7 <= b.length) {
    if (out.members.length >= max) {
      out.truncated = true;
      break;
    }
    const type = b[p + 2]!;
    const flags = b.readUInt16LE(p + 3);
    const headSize = b.readUInt16LE(p + 5);
    if (headSize < 7) break;
    let dataSize = (flags & 0x8000) !== 0 && p + 11 <= b.length ? b.readUInt32LE(p + 7) : 0;
    if (type === 0x73 && (flags & 0x0080) !== 0) {
      // Main header flag: block headers are encrypted, so no names can be read.
      out.encrypted = true;
      break;
    }
    if (type === 0x74) {
      if (p + 32 > b.length) break;
      dataSize = b.readUInt32LE(p + 7);
      const nameLen = b.readUInt16LE(p + 26);
      const nameAt = p + 32 + ((flags & 0x100) !== 0 ? 8 : 0);
      if (nameAt + nameLen > b.length) break;
      // A Unicode name is stored after the OEM one, separated by a zero byte; keep the OEM part.
      let raw = b.subarray(nameAt, nameAt + nameLen);
      const zero = raw.indexOf(0);
      if (zero >= 0) raw = raw.subarray(0, zero);
      const member = { name: name(raw, 0, raw.length, (flags & 0x200) !== 0), encrypted: (flags & 0x04) !== 0 };
      out.members.push(member);
      if (member.encrypted) out.encrypted = true;
    }
    if (type === 0x7b) break; // end of archive
    p += headSize + dataSize;
  }
  return out;
}

/** A RAR 5 variable-length integer: 7 bits a byte, low first; undefined when cut or too long. */
function vint(b: Buffer, p: number): [number, number] | undefined {
  let v = 0;
  for (let i = 0; i < 8 && p + i < b.length; i++) {
    const byte = b[p + i]!;
    v += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return [v, p + i + 1];
  }
  return undefined;
}

function readRar5(b: Buffer, max: number): ArchiveListing {
  const out: ArchiveListing = { format: 'rar', members: [], encrypted: false };
  let p = RAR5_SIG.length;
  while (p + 4 < b.length) {
    if (out.members.length >= max) {
      out.truncated = true;
      break;
    }
    const size = vint(b, p + 4); // after the header CRC32
    if (!size) break;
    const [headSize, body] = size;
    const end = body + headSize;
    if (headSize === 0 || end > b.length) break;
    const t = vint(b, body);
    const f = t && vint(b, t[1]);
    if (!t || !f) break;
    const [type] = t;
    const [flags] = f;
    let q = f[1];
    let extraSize = 0;
    let dataSize = 0;
    if (flags & 1) {
      const e = vint(b, q);
      if (!e) break;
      [extraSize, q] = e;
    }
    if (flags & 2) {
      const d = vint(b, q);
      if (!d) break;
      [dataSize, q] = d;
    }
    if (type === 4) {
      // Archive encryption header: everything after it, names included, is encrypted.
      out.encrypted = true;
      break;
    }
    if (type === 2) {
      const member = rar5File(b, q, end, extraSize);
      if (!member) break;
      out.members.push(member);
      if (member.encrypted) out.encrypted = true;
    }
    if (type === 5) break; // end of archive
    p = end + dataSize;
  }
  return out;
}

function rar5File(b: Buffer, q: number, end: number, extraSize: number): ArchiveMember | undefined {
  const ff = vint(b, q);
  if (!ff) return undefined;
  const fileFlags = ff[0];
  let r = ff[1];
  for (let i = 0; i < 2; i++) { // unpacked size, attributes
    const v = vint(b, r);
    if (!v) return undefined;
    r = v[1];
  }
  if (fileFlags & 2) r += 4; // mtime
  if (fileFlags & 4) r += 4; // data CRC32
  for (let i = 0; i < 2; i++) { // compression info, host OS
    const v = vint(b, r);
    if (!v) return undefined;
    r = v[1];
  }
  const nl = vint(b, r);
  if (!nl || nl[1] + nl[0] > end) return undefined;
  const member = { name: name(b, nl[1], nl[0], true), encrypted: false };
  // Extra records (size, type, data): type 1 is per-file encryption.
  let x = end - extraSize;
  while (x < end) {
    const rs = vint(b, x);
    const rt = rs && vint(b, rs[1]);
    if (!rs || !rt || rs[0] === 0) break;
    if (rt[0] === 1) member.encrypted = true;
    x = rs[1] + rs[0];
  }
  return member;
}

/** 7z NUMBER: the count of leading 1 bits in the first byte says how many bytes follow. */
function num7z(b: Buffer, p: number): [number, number] | undefined {
  if (p >= b.length) return undefined;
  const first = b[p]!;
  let mask = 0x80;
  let extra = 0;
  while (extra < 8 && (first & mask) !== 0) {
    extra++;
    mask >>= 1;
  }
  if (p + 1 + extra > b.length) return undefined;
  let v = 0;
  for (let i = 0; i < extra; i++) v += b[p + 1 + i]! * 2 ** (8 * i);
  if (extra < 8) v += (first & (mask - 1)) * 2 ** (8 * extra);
  return [v, p + 1 + extra];
}

function read7z(b: Buffer, max: number): ArchiveListing {
  const out: ArchiveListing = { format: '7z', members: [], encrypted: false };
  if (b.length < 32) return out;
  const offset = Number(b.readBigUInt64LE(12));
  const size = Number(b.readBigUInt64LE(20));
  const start = 32 + offset;
  if (!Number.isSafeInteger(start) || start + size > b.length || size === 0) return out;
  const header = b.subarray(start, start + size);
  if (header[0] === 0x17) {
    // kEncodedHeader: the real header is packed; an AES coder means it is also encrypted.
    out.encrypted = header.includes(SEVENZIP_AES);
    return out;
  }
  if (header[0] !== 0x01) return out;
  if (header.includes(SEVENZIP_AES)) out.encrypted = true;
  const names = sevenZipNames(header);
  out.members = names.length > max ? names.slice(0, max) : names;
  if (names.length > max || names.truncated) out.truncated = true;
  return out;
}

/**
 * Names from a plain 7z header: the kName property (0x11) of kFilesInfo holds an `external` byte
 * (0) and zero-terminated UTF-16LE names. Candidates are tried where they parse exactly to the end
 * of the property, so a stray 0x11 byte elsewhere in the header is not taken for it. At most
 * MAX_7Z_NAME_CANDIDATES are decoded, each up to MAX_7Z_NAMES_BYTES (`truncated`: names were cut).
 */
function sevenZipNames(h: Buffer): ArchiveMember[] & { truncated?: boolean } {
  let tried = 0;
  for (let i = h.indexOf(0x11); i >= 0 && tried < MAX_7Z_NAME_CANDIDATES; i = h.indexOf(0x11, i + 1)) {
    const sz = num7z(h, i + 1);
    if (!sz) continue;
    const [len, at] = sz;
    if (len < 3 || at + len > h.length || h[at] !== 0 || (len - 1) % 2 !== 0) continue;
    // The names end with a UTF-16 NUL: checked on two bytes before anything is decoded.
    if (h[at + len - 1] !== 0 || h[at + len - 2] !== 0) continue;
    tried++;
    const cut = len - 1 > MAX_7Z_NAMES_BYTES;
    const text = h.subarray(at + 1, at + 1 + (cut ? MAX_7Z_NAMES_BYTES : len - 1)).toString('utf16le');
    const names = text.split('\0');
    // Without the cut the text ends with the NUL (an empty last piece); with it, a partial name.
    names.pop();
    if (names.length === 0 || names.some((n) => n.length === 0)) continue;
    const members: ArchiveMember[] & { truncated?: boolean } = names
      .slice(0, MAX_ARCHIVE_MEMBERS)
      .map((n) => ({ name: n.slice(0, MAX_NAME_BYTES), encrypted: false }));
    if (cut || names.length > MAX_ARCHIVE_MEMBERS) members.truncated = true;
    return members;
  }
  return [];
}
