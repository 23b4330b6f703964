// Message sources other than the request body:
// `Shm` (+ `Shm-Offset`, `Shm-Length`) names a POSIX shared-memory segment holding the message,
// `File` (or `Path`) a file on this host. Rspamd's proxy uses `Shm` with an empty body for every
// upstream on a local address, so ignoring it would scan an empty message and pass anything.
//
// As in Rspamd (task.c, rspamd_task_load_message): a value may be percent-encoded and
// double-quoted; Shm wins over File, File over Path; the first occurrence of each counts; an
// absent Shm-Length means "to the end of the segment"; an empty file is an empty message. Unlike
// Rspamd 3.4, which honours these headers from anyone and scans an empty message when the
// offset or length is out of range, they are honoured only from the configured peers (loopback
// by default), every failure is an error reply naming the source, and what is read is bounded by
// max_message.

import { constants as fsc, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { MailsiftError } from '../http/errors.js';
import type { PeerNetworks } from '../http/peer-networks.js';
import type { Request, RequestHeaders } from '../http/types.js';

/** Where Linux keeps POSIX shared-memory objects: `shm_open("/name")` opens `/dev/shm/name`. */
export const SHM_DIR = '/dev/shm';
/**
 * Longest shm object name (NAME_MAX): no longer name can exist, so it is refused before any
 * system call instead of handing the kernel arbitrary client bytes.
 */
export const MAX_SHM_NAME_BYTES = 255;
/** Longest File path (PATH_MAX − 1), for the same reason. */
export const MAX_FILE_PATH_BYTES = 4095;
/**
 * Reads spent on one window. A regular file or shm object returns the whole window in one read;
 * the cap only stops an object that keeps returning a few bytes at a time from holding the
 * worker in a loop (each read also advances, so the loop ends anyway).
 */
const MAX_READ_CALLS = 4096;

/** Request headers that name a message source; any of them needs a trusted peer. */
const SOURCE_HEADERS = ['shm', 'shm-offset', 'shm-length', 'file', 'path'] as const;
const DOT = Buffer.from('.');
const DOTDOT = Buffer.from('..');
const SHM_DIR_PREFIX = Buffer.from(`${SHM_DIR}/`);
/** Open errors Rspamd 3.4 reports as "Invalid file" (its stat of the path fails first). */
const NO_SUCH_PATH: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG']);

export interface MessageSourcePolicy {
  /** Peers allowed to name local objects. */
  peers: PeerNetworks;
  /** Largest message in bytes (`max_message`). */
  maxMessage: number;
  /** The config key listing the peers, named when a peer is refused. */
  peersKey: string;
}

/** What was read, for logs. */
export interface LoadedSource {
  kind: 'shm' | 'file';
  /** The name as the client gave it, decoded (`/rhm.…`, `/var/spool/…`). */
  name: string;
  offset: number;
  length: number;
}

/**
 * Whether a request names a message source. `v3` requests carry their message in a multipart
 * body, which only Shm can replace, and only when the body is empty (as Rspamd master does).
 */
export function namesMessageSource(req: Request, protocol: 'v2' | 'v3'): boolean {
  const h = req.headers.map;
  if (protocol === 'v3') return req.body.length === 0 && h.has('shm');
  for (const name of SOURCE_HEADERS) if (h.has(name)) return true;
  return false;
}

/**
 * The request with its body replaced by the message its headers name, or undefined when they
 * name none. Throws coded errors: ERR_SOURCE_FORBIDDEN (peer not allowed), ERR_SOURCE_INVALID
 * (a malformed name, offset or length), ERR_SOURCE_UNREADABLE (cannot be opened or read),
 * ERR_SOURCE_TOO_LARGE (over max_message).
 */
export async function loadMessageSource(
  req: Request,
  policy: MessageSourcePolicy,
  protocol: 'v2' | 'v3' = 'v2',
): Promise<{ req: Request; source: LoadedSource } | undefined> {
  if (!namesMessageSource(req, protocol)) return undefined;
  if (!policy.peers.has(req.peer.address)) {
    throw new MailsiftError(
      'ERR_SOURCE_FORBIDDEN',
      `File and Shm message sources are not allowed from ${req.peer.address} (${policy.peersKey})`,
    );
  }
  const h = req.headers;
  const shm = h.first('shm');
  let loaded: { body: Buffer; source: LoadedSource };
  if (shm !== undefined) loaded = await readShm(shm, h, policy.maxMessage);
  else {
    const file = h.first('file') ?? h.first('path');
    if (file === undefined) throw new MailsiftError('ERR_SOURCE_INVALID', 'Shm-Offset or Shm-Length without Shm');
    loaded = await readFile(file, policy.maxMessage);
  }
  return { req: { ...req, body: loaded.body }, source: loaded.source };
}

/** Percent-decoding as Rspamd's rspamd_url_decode: `%XX` is a byte, `+` a space, a stray `%` stays. */
function urlDecode(bytes: Buffer): Buffer {
  if (!bytes.includes(0x25) && !bytes.includes(0x2b)) return bytes;
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 0x2b) out[n++] = 0x20;
    else if (c === 0x25 && i + 2 < bytes.length && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
      out[n++] = parseInt(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!), 16);
      i += 2;
    } else out[n++] = c;
  }
  return out.subarray(0, n);
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** Header value → the bytes it names: decoded, unquoted, no control bytes, not empty. */
function decodeName(value: string, what: string, maxBytes: number): Buffer {
  let b = urlDecode(Buffer.from(value.trim(), 'utf8'));
  if (b.length > 2 && b[0] === 0x22 && b[b.length - 1] === 0x22) b = b.subarray(1, b.length - 1);
  if (b.length === 0) throw new MailsiftError('ERR_SOURCE_INVALID', `empty ${what}`);
  if (b.length > maxBytes) throw new MailsiftError('ERR_SOURCE_INVALID', `too long ${what}: ${b.length} bytes, maximum is ${maxBytes}`);
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    // NUL would cut the name short in the kernel; other control bytes are never part of a real name.
    if (c < 0x20 || c === 0x7f) throw new MailsiftError('ERR_SOURCE_INVALID', `invalid character at position ${i} in ${what}`);
  }
  return b;
}

/** A decimal count as Rspamd's rspamd_strtoul takes it: digits only, here also within 2^53. */
function parseCount(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const t = value.trim();
  if (!/^\d{1,15}$/.test(t)) throw new MailsiftError('ERR_SOURCE_INVALID', `invalid ${what}: ${t.slice(0, 64)}`);
  return Number(t);
}

/**
 * A `Shm` header value → the segment's file under SHM_DIR. shm_open skips leading slashes and
 * refuses a name with another slash; here the name must also not be `.` or `..`, so no value
 * reaches outside SHM_DIR. Throws ERR_SOURCE_INVALID.
 */
export function shmSegmentPath(value: string): { name: string; path: Buffer } {
  // One byte over NAME_MAX for the customary leading slash; the name itself is checked below.
  const raw = decodeName(value, 'shm segment name', MAX_SHM_NAME_BYTES + 1);
  const name = raw.toString('utf8');
  let start = 0;
  while (start < raw.length && raw[start] === 0x2f) start++;
  const base = raw.subarray(start);
  if (base.length === 0 || base.includes(0x2f) || base.equals(DOT) || base.equals(DOTDOT) || base.length > MAX_SHM_NAME_BYTES) {
    throw new MailsiftError('ERR_SOURCE_INVALID', `invalid shm segment name (${name}): must be one name of up to ${MAX_SHM_NAME_BYTES} bytes, as /name`);
  }
  return { name, path: Buffer.concat([SHM_DIR_PREFIX, base]) };
}

/** A `File`/`Path` header value → an absolute path without control bytes. Throws ERR_SOURCE_INVALID. */
export function sourceFilePath(value: string): { name: string; path: Buffer } {
  const path = decodeName(value, 'file path', MAX_FILE_PATH_BYTES);
  const name = path.toString('utf8');
  // A relative path would depend on the worker's working directory: never what a client means.
  if (path[0] !== 0x2f) throw new MailsiftError('ERR_SOURCE_INVALID', `Invalid file (${name}): the path must be absolute`);
  return { name, path };
}

async function readShm(value: string, h: RequestHeaders, maxMessage: number): Promise<{ body: Buffer; source: LoadedSource }> {
  const { name, path } = shmSegmentPath(value);
  const offset = parseCount(h.first('shm-offset'), 'shm segment offset') ?? 0;
  const wanted = parseCount(h.first('shm-length'), 'shm segment length');
  // O_NOFOLLOW (as shm_open): /dev/shm is writable by every local user, so a symbolic link
  // planted there must not make the worker read a file of its choosing.
  const fh = await openSource(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK, (why) => `Cannot open shm segment (${name}): ${why}`);
  try {
    const st = await statSource(fh, `Cannot stat shm segment (${name})`);
    if (!st.isFile()) throw new MailsiftError('ERR_SOURCE_UNREADABLE', `shm segment (${name}) is not a regular object`);
    const size = st.size;
    if (size === 0) throw new MailsiftError('ERR_SOURCE_UNREADABLE', `empty shm segment (${name})`);
    if (offset > size) throw new MailsiftError('ERR_SOURCE_INVALID', `invalid offset ${offset} (${size} available) for shm segment ${name}`);
    // Offset and length are checked together: each alone can fit while their sum does not.
    if (wanted !== undefined && wanted > size - offset) {
      throw new MailsiftError('ERR_SOURCE_INVALID', `invalid length ${wanted} at offset ${offset} (${size} available) for shm segment ${name}`);
    }
    const length = wanted ?? size - offset;
    if (length > maxMessage) throw new MailsiftError('ERR_SOURCE_TOO_LARGE', `too large shm segment ${name}: ${length}, maximum is ${maxMessage}`);
    const body = await readWindow(fh, offset, length, `shm segment (${name})`);
    return { body, source: { kind: 'shm', name, offset, length } };
  } finally {
    await fh.close();
  }
}

async function readFile(value: string, maxMessage: number): Promise<{ body: Buffer; source: LoadedSource }> {
  const { name, path } = sourceFilePath(value);
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not regular).
  const fh = await openSource(path, fsc.O_RDONLY | fsc.O_NONBLOCK, (why, code) =>
    // Rspamd 3.4 stats the path first: a name that leads nowhere is "Invalid file" there.
    NO_SUCH_PATH.has(code) ? `Invalid file (${name}): ${why}` : `Cannot open file (${name}): ${why}`,
  );
  try {
    const st = await statSource(fh, `Cannot stat file (${name})`);
    if (!st.isFile()) throw new MailsiftError('ERR_SOURCE_UNREADABLE', `Not a regular file (${name})`);
    if (st.size > maxMessage) throw new MailsiftError('ERR_SOURCE_TOO_LARGE', `Too large file (${name}): ${st.size}, maximum is ${maxMessage}`);
    const body = st.size === 0 ? Buffer.alloc(0) : await readWindow(fh, 0, st.size, `file (${name})`);
    return { body, source: { kind: 'file', name, offset: 0, length: body.length } };
  } finally {
    await fh.close();
  }
}

/** strerror() texts of the errors opening or reading a local object can give. */
const STRERROR: Readonly<Record<string, string>> = {
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  ELOOP: 'Too many levels of symbolic links',
  ENAMETOOLONG: 'File name too long',
  EMFILE: 'Too many open files',
  ENFILE: 'Too many open files in system',
  ENXIO: 'No such device or address',
  EIO: 'Input/output error',
  EINVAL: 'Invalid argument',
  EAGAIN: 'Resource temporarily unavailable',
};

function errnoText(err: unknown): { why: string; code: string } {
  const code = String((err as { code?: unknown })?.code ?? '');
  return { why: STRERROR[code] ?? (code || String((err as Error)?.message ?? err)), code };
}

async function openSource(path: Buffer, flags: number, message: (why: string, code: string) => string): Promise<FileHandle> {
  try {
    return await open(path, flags);
  } catch (err) {
    const { why, code } = errnoText(err);
    throw new MailsiftError('ERR_SOURCE_UNREADABLE', message(why, code), { cause: err });
  }
}

async function statSource(fh: FileHandle, prefix: string): Promise<Stats> {
  try {
    return await fh.stat();
  } catch (err) {
    throw new MailsiftError('ERR_SOURCE_UNREADABLE', `${prefix}: ${errnoText(err).why}`, { cause: err });
  }
}

/**
 * Reads exactly `length` bytes at `offset`. The object belongs to the client and may shrink
 * while it is read: a short object is an error, never a shorter message scanned in its place.
 */
async function readWindow(fh: FileHandle, offset: number, length: number, what: string): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  for (let calls = 0; got < length; calls++) {
    if (calls >= MAX_READ_CALLS) throw new MailsiftError('ERR_SOURCE_UNREADABLE', `Cannot read ${what}: ${got} of ${length} bytes after ${MAX_READ_CALLS} reads`);
    let n: number;
    try {
      ({ bytesRead: n } = await fh.read(buf, got, length - got, offset + got));
    } catch (err) {
      throw new MailsiftError('ERR_SOURCE_UNREADABLE', `Cannot read ${what}: ${errnoText(err).why}`, { cause: err });
    }
    if (n === 0) throw new MailsiftError('ERR_SOURCE_UNREADABLE', `Cannot read ${what}: it shrank to ${offset + got} bytes while being read (${length} wanted at offset ${offset})`);
    got += n;
  }
  return buf;
}
