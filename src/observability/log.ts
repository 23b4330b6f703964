// Structured logging for every process (supervisor, workers, CLI) over pino. The rest of the
// code sees only the plugin API's Logger interface, so modules and the engine never import pino.

import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import type { Logger } from '../core/logger.js';
import { reportErrorLine } from './error-ring.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
/** `logging.format` values: a format, or `auto` (text for a person at a terminal, JSON for a collector). */
export const LOG_FORMAT_SETTINGS = ['auto', ...LOG_FORMATS] as const;
export type LogFormatSetting = (typeof LOG_FORMAT_SETTINGS)[number];

/** The format `setting` means for lines written to `out` (stdout, where every line goes). */
export function resolveLogFormat(setting: LogFormatSetting, out: { isTTY?: boolean } = process.stdout): LogFormat {
  if (setting !== 'auto') return setting;
  return out.isTTY === true ? 'text' : 'json';
}

export interface LogOptions {
  level?: LogLevel;
  /** `json`: one pino object per line; `text`: `time LEVEL [tag] message key=value`. */
  format?: LogFormat;
  /** Where lines go; stdout by default. Tests pass a collecting stream. */
  destination?: { write(line: string): unknown };
  /** Append to this file instead of stdout (logging.file); throws at once when it cannot be opened. */
  file?: string;
  /** Fields on every line (e.g. the worker role). */
  base?: Record<string, unknown>;
}

/** A Logger that can hand out tagged children (`engine`, `worker:normal`, a module name). */
export interface RootLogger extends Logger {
  child(tag: string, fields?: Record<string, unknown>): RootLogger;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields that the text format prints in its fixed prefix rather than as key=value. */
const PREFIX_FIELDS = new Set(['level', 'time', 'msg', 'tag', 'pid', 'hostname']);

function renderValue(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v) ?? String(v);
}

/** Re-renders pino's JSON lines as one human-readable line each. */
function textDestination(out: { write(line: string): unknown }): DestinationStream {
  return {
    write(line: string): void {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString() : '';
      const level = LEVEL_NAMES[rec.level as number] ?? String(rec.level);
      const tag = rec.tag !== undefined ? ` [${String(rec.tag)}]` : '';
      let extra = '';
      for (const [k, v] of Object.entries(rec)) if (!PREFIX_FIELDS.has(k)) extra += ` ${k}=${renderValue(v)}`;
      out.write(`${time} ${level} ${String(rec.pid ?? process.pid)}${tag} ${String(rec.msg ?? '')}${extra}\n`);
    },
  };
}

/** The tag of the per-scan lines (scan-log.ts): on stdout the only lines that wait for others. */
export const BATCHED_TAG = 'task';

/** `p` writes at once, `batched` joins a batch; a logger tagged BATCHED_TAG writes through `batched`. */
function wrap(p: PinoLogger, tag: string, batched: PinoLogger): RootLogger {
  const w = tag === BATCHED_TAG ? batched : p;
  return {
    debug: (msg, extra) => (extra ? w.debug(extra, msg) : w.debug(msg)),
    info: (msg, extra) => (extra ? w.info(extra, msg) : w.info(msg)),
    warn: (msg, extra) => (extra ? w.warn(extra, msg) : w.warn(msg)),
    error: (msg, extra) => {
      if (extra) w.error(extra, msg);
      else w.error(msg);
      // Error lines also feed the controller's /errors ring (when this process has a sink).
      reportErrorLine(msg, tag, typeof extra?.id === 'string' ? extra.id : '');
    },
    child: (childTag, fields) => {
      const bindings = { ...fields, tag: childTag };
      const now = p.child(bindings);
      return wrap(now, childTag, batched === p ? now : batched.child(bindings));
    },
  };
}

/** How often a log file's name is checked for a rotation (the file renamed or removed under us). */
const REOPEN_CHECK_MS = 5_000;

function inodeOf(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/**
 * Lines appended to `path`. Writes are asynchronous (a slow disk never holds a scan) and each is
 * whole lines, so with O_APPEND the processes' lines never interleave within a line; what is
 * pending is written out on exit. After logrotate renames the file, its name is opened anew
 * within REOPEN_CHECK_MS, without a signal (copytruncate needs nothing: appends follow the end).
 */
function fileDestination(path: string): { write(line: string): unknown } {
  // Opened once here, synchronously: a path that cannot be written is a start-up error with its
  // reason, not an asynchronous stream error later.
  mkdirSync(dirname(path), { recursive: true });
  closeSync(openSync(path, 'a'));
  const stream = pino.destination({ dest: path, append: true, mkdir: true, sync: false });
  // A full or failing disk loses log lines; it must not end the process that scans.
  stream.on('error', (err: Error) => process.stderr.write(`log file ${path}: ${err.message}\n`));
  let ino = inodeOf(path);
  let reopening = false;
  const follow = (): void => {
    if (reopening || inodeOf(path) === ino) return;
    // The new file exists only once the asynchronous reopen is done: its inode is read then (read
    // at once, it was "no file", and a second rename before the next check went unnoticed).
    reopening = true;
    const settle = (): void => {
      stream.off('ready', settle);
      stream.off('error', settle);
      ino = inodeOf(path);
      reopening = false;
    };
    stream.on('ready', settle);
    stream.on('error', settle);
    stream.reopen();
  };
  setInterval(follow, REOPEN_CHECK_MS).unref();
  rotationChecks.add(follow);
  return stream;
}

const rotationChecks = new Set<() => void>();

/**
 * Looks for a rotated log file now instead of at the next periodic check: called when a process
 * begins to stop, so its last lines go to the file under the configured name (the reopen
 * completes while the workers close), not after a rename into the rotated one.
 */
export function followLogRotation(): void {
  for (const check of rotationChecks) check();
}

/** Longest a line waits on stdout for others to share its write. */
export const STDOUT_BATCH_MS = 20;
/** Bytes of waiting lines that are written at once, without waiting for the timer. */
export const STDOUT_BATCH_BYTES = 32 * 1024;

/**
 * Scan lines to stdout written together: a scan worker writes a line per scan, and each write to a
 * pipe is a system call that also wakes the reader (journald, a collector); 2 % of a scan worker's
 * CPU at 200 scans a second. `later` lines wait at most STDOUT_BATCH_MS, and are written out
 * synchronously when the process exits (a crash included); only a process killed outright loses
 * the last ones. `now` lines (start-up, refusals, warnings: rare, and read in order with other
 * processes' lines) first write out what waits, so a process's own lines stay in order.
 */
function batchedStdout(out: { write(chunk: string): unknown }): { now(line: string): void; later(line: string): void } {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    out.write(chunk);
  };
  process.on('exit', flush);
  return {
    now(line: string): void {
      if (pending !== '') {
        pending += line;
        flush();
      } else out.write(line);
    },
    later(line: string): void {
      pending += line;
      if (pending.length >= STDOUT_BATCH_BYTES) flush();
      else if (!timer) {
        timer = setTimeout(flush, STDOUT_BATCH_MS);
        timer.unref();
      }
    },
  };
}

export function createLogger(opts: LogOptions = {}): RootLogger {
  const format = opts.format ?? 'json';
  const pinoTo = (out: { write(line: string): unknown }): PinoLogger =>
    pino(
      {
        level: opts.level ?? 'info',
        base: { pid: process.pid, ...opts.base },
        // Errors passed as `err` keep their stack in the structured line.
        serializers: { err: pino.stdSerializers.err },
      },
      format === 'text' ? textDestination(out) : { write: (l: string) => void out.write(l) },
    );
  if (opts.destination || opts.file) {
    const p = pinoTo(opts.destination ?? fileDestination(opts.file!));
    return wrap(p, '', p);
  }
  const stdout = batchedStdout(process.stdout);
  return wrap(pinoTo({ write: stdout.now }), '', pinoTo({ write: stdout.later }));
}
