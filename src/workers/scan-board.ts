// The scan board: the scans a worker has in flight, kept where the supervisor can read them
// after the worker's event loop has stalled. A stalled loop can neither answer a question nor
// send a message, and the scan that stalls it usually does so in its first synchronous stretch,
// before any timer could report it; so each scan is written down, synchronously, as it starts.
// One small file per worker process (on tmpfs when the host has /dev/shm), in fixed slots: a
// start is one positional write of a short JSON line, an end one write of a zero byte; nobody
// reads the file until the watchdog needs to know.

import { accessSync, closeSync, constants as fsConstants, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Handler } from '../http/types.js';
import type { Logger } from '../plugin-api/index.js';

/** Scans recorded at once per worker; more in flight are counted in the header, not named (a worker with this many scans in flight is saturated anyway). */
export const BOARD_SLOTS = 64;
/** Bytes per slot: a record is at most 3 capped strings plus fixed fields (see MAX_FIELD_CHARS). */
export const BOARD_SLOT_BYTES = 512;
/** Characters kept of a Message-ID, Queue-Id or route name: the three together must fit one slot. */
export const MAX_FIELD_CHARS = 140;
/** Bytes of a message searched for its Message-ID header; the lookup costs O(this) at most, whatever the message holds. */
export const MAX_MESSAGE_ID_PEEK_BYTES = 64 * 1024;

/** Slot 0 is the header (`{"untracked":n}`): scans in flight beyond the slots. */
const HEADER_SLOT = 0;
const FILE_BYTES = (BOARD_SLOTS + 1) * BOARD_SLOT_BYTES;

export interface InFlightEntry {
  /** What the worker was doing: `scan`, or the controller route (`/learnspam`). */
  what: string;
  messageId?: string;
  queueId?: string;
  /** Epoch ms the work started. */
  startedAt: number;
}

export interface BoardContents {
  /** Oldest first. */
  entries: InFlightEntry[];
  /** In flight but not recorded (every slot was taken). */
  untracked: number;
}

/** Printable ASCII only, without the JSON-escaped `"` and `\`, so a record's length is known before it is written. */
function clean(v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  const s = v.slice(0, MAX_FIELD_CHARS).replace(/[^\x21\x23-\x5b\x5d-\x7e ]/g, '?');
  return s === '' ? undefined : s;
}

/** The in-flight record of one worker process. Writes are synchronous on purpose (see the file comment). */
export class ScanBoard {
  #fd: number | undefined;
  readonly #free: number[] = [];
  #untracked = 0;
  #inFlight = 0;
  readonly #log: Logger;
  readonly #path: string;

  private constructor(fd: number, path: string, log: Logger) {
    this.#fd = fd;
    this.#path = path;
    this.#log = log;
    // Highest slot on top: the first scans land at the start of the file.
    for (let s = BOARD_SLOTS; s >= 1; s--) this.#free.push(s);
  }

  /** Creates (or empties) the board file; undefined, with a warning, when it cannot be written. */
  static open(path: string, log: Logger): ScanBoard | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(path, 'w+', 0o600);
      // Every page written now: a later write never needs new space (tmpfs full, disk full).
      writeSync(fd, Buffer.alloc(FILE_BYTES), 0, FILE_BYTES, 0);
      return new ScanBoard(fd, path, log);
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      log.warn('cannot create the scan board; a stalled worker will be replaced without naming its scans', { path, err: String(err) });
      return undefined;
    }
  }

  get path(): string {
    return this.#path;
  }

  /** Scans in flight now, recorded or not. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Records work starting; returns the slot to hand to end() (0: not recorded). */
  begin(e: InFlightEntry): number {
    this.#inFlight++;
    const slot = this.#free.pop();
    if (slot === undefined) {
      this.#untracked++;
      this.#write(HEADER_SLOT, `{"untracked":${this.#untracked}}\n`);
      return 0;
    }
    const rec: InFlightEntry = { what: clean(e.what) ?? '?', startedAt: e.startedAt };
    const mid = clean(e.messageId);
    const qid = clean(e.queueId);
    if (mid !== undefined) rec.messageId = mid;
    if (qid !== undefined) rec.queueId = qid;
    this.#write(slot, `${JSON.stringify(rec)}\n`);
    return slot;
  }

  end(slot: number): void {
    this.#inFlight--;
    if (slot === 0) {
      this.#untracked--;
      this.#write(HEADER_SLOT, this.#untracked > 0 ? `{"untracked":${this.#untracked}}\n` : '\0');
      return;
    }
    this.#write(slot, '\0');
    this.#free.push(slot);
  }

  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  #write(slot: number, text: string): void {
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, Buffer.from(text, 'latin1'), 0, text.length, slot * BOARD_SLOT_BYTES);
    } catch (err) {
      // The scans go on; only the naming of a stalled one is lost, and the log says so once.
      this.#log.warn('scan board write failed; a stalled worker will be replaced without naming its scans', { path: this.#path, err: String(err) });
      this.close();
    }
  }
}

function parseSlot(buf: Buffer, slot: number): unknown {
  const start = slot * BOARD_SLOT_BYTES;
  if (start >= buf.length || buf[start] === 0) return undefined;
  const nl = buf.indexOf(0x0a, start);
  if (nl < 0 || nl >= start + BOARD_SLOT_BYTES) return undefined;
  try {
    return JSON.parse(buf.toString('latin1', start, nl)) as unknown;
  } catch {
    return undefined; // a record cut by a crash mid-write names nothing
  }
}

/** What a board file says; empty when it is missing or unreadable. */
export function readScanBoard(path: string): BoardContents {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return { entries: [], untracked: 0 };
  }
  const header = parseSlot(buf, HEADER_SLOT) as { untracked?: unknown } | undefined;
  const untracked = typeof header?.untracked === 'number' ? header.untracked : 0;
  const entries: InFlightEntry[] = [];
  for (let s = 1; s <= BOARD_SLOTS; s++) {
    const r = parseSlot(buf, s) as Partial<InFlightEntry> | undefined;
    if (!r || typeof r.what !== 'string' || typeof r.startedAt !== 'number') continue;
    entries.push({
      what: r.what,
      startedAt: r.startedAt,
      ...(typeof r.messageId === 'string' ? { messageId: r.messageId } : {}),
      ...(typeof r.queueId === 'string' ? { queueId: r.queueId } : {}),
    });
  }
  entries.sort((a, b) => a.startedAt - b.startedAt);
  return { entries, untracked };
}

const MESSAGE_ID_NAME = Buffer.from('message-id:', 'latin1');

/** The header name at `at`, compared without decoding (ASCII letters folded to lower case). */
function isMessageIdName(message: Buffer, at: number, lineEnd: number): boolean {
  if (lineEnd - at < MESSAGE_ID_NAME.length) return false;
  for (let i = 0; i < MESSAGE_ID_NAME.length; i++) {
    let b = message[at + i]!;
    if (b >= 0x41 && b <= 0x5a) b |= 0x20;
    if (b !== MESSAGE_ID_NAME[i]) return false;
  }
  return true;
}

/**
 * The Message-ID of a raw message, found cheaply without parsing it: the first `Message-ID:`
 * header among the first MAX_MESSAGE_ID_PEEK_BYTES, unfolded, angle brackets removed.
 */
export function peekMessageId(message: Buffer): string | undefined {
  const end = Math.min(message.length, MAX_MESSAGE_ID_PEEK_BYTES);
  let line = 0;
  while (line < end) {
    const nl = message.indexOf(0x0a, line);
    const lineEnd = nl < 0 || nl >= end ? end : nl;
    const first = message[line];
    if (first === 0x0d || first === 0x0a) return undefined; // the blank line: headers are over
    if (isMessageIdName(message, line, lineEnd)) {
      let value = message.toString('latin1', line + MESSAGE_ID_NAME.length, lineEnd);
      // Folded continuation lines belong to the value.
      let next = lineEnd + 1;
      while (next < end && (message[next] === 0x20 || message[next] === 0x09)) {
        const nl2 = message.indexOf(0x0a, next);
        const e2 = nl2 < 0 || nl2 >= end ? end : nl2;
        value += message.toString('latin1', next, e2);
        next = e2 + 1;
      }
      const v = value.replace(/[\r\n]/g, '').trim();
      const m = /<([^>]*)>/.exec(v);
      return (m ? m[1]! : v) || undefined;
    }
    line = lineEnd + 1;
  }
  return undefined;
}

/** A handler whose requests are on the board while they run (the controller: learns, scans, plugin endpoints). */
export function trackRequests(handler: Handler, board: ScanBoard): Handler {
  return async (req) => {
    const slot = board.begin({ what: req.path, messageId: req.body.length > 0 ? peekMessageId(req.body) : undefined, queueId: req.headers.first('queue-id'), startedAt: Date.now() });
    try {
      return await handler(req);
    } finally {
      board.end(slot);
    }
  };
}

/** Scan-board directories are named after the process that made them, so leftovers can be told from boards in use. */
const BOARD_DIR_PREFIX = 'mailsift-board-';
/** Leftover board directories removed at start; a directory listing is not worth more work than this. */
const MAX_STALE_BOARD_DIRS = 100;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes board directories left by processes that were killed outright (no exit handler ran). */
function removeStaleBoardDirs(base: string): void {
  let removed = 0;
  for (const name of readdirSync(base)) {
    if (removed >= MAX_STALE_BOARD_DIRS) break;
    if (!name.startsWith(BOARD_DIR_PREFIX)) continue;
    const pid = Number.parseInt(name.slice(BOARD_DIR_PREFIX.length), 10);
    if (!Number.isSafeInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    rmSync(join(base, name), { recursive: true, force: true });
    removed++;
  }
}

/**
 * A private directory for the workers' scan boards: tmpfs (/dev/shm) when the host has one, so
 * a board write never touches a disk. Undefined, with a warning, when none can be made.
 */
export function makeBoardDir(log: Logger): string | undefined {
  let base = tmpdir();
  try {
    accessSync('/dev/shm', fsConstants.W_OK);
    base = '/dev/shm';
  } catch {
    // no tmpfs: the temporary directory will do
  }
  try {
    removeStaleBoardDirs(base);
    const dir = mkdtempSync(join(base, `${BOARD_DIR_PREFIX}${process.pid}-`));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  } catch (err) {
    log.warn('cannot create a directory for scan boards; a stalled worker will be replaced without naming its scans', { base, err: String(err) });
    return undefined;
  }
}

export function boardPath(dir: string, pid: number): string {
  return join(dir, `${pid}.board`);
}
