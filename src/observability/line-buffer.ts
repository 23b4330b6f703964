// Log lines of a server process, written to stdout in batches. One write per line was one
// system call, and a pass through node's stream machinery, per scan: a busy scan worker writes
// a line for every message. Lines wait here at most FLUSH_MS, or until a batch is full, and are
// written in the order they came.
//
// Never lost while JavaScript still runs: the buffer is written out on `exit` (process.exit
// included; from then on lines go straight out) and before a crash is reported
// (uncaughtExceptionMonitor, which also sees rejections nobody handled). The logger flushes it
// after every warning or error line, and a stopping worker switches to direct writes
// (`unbufferStdout`). What no process can save is a batch of its last FLUSH_MS when it is
// killed with SIGKILL or V8 aborts it (out of heap).

import { fstatSync } from 'node:fs';

/** Longest a line waits to be written. */
export const FLUSH_MS = 25;
/**
 * Bytes per write to a pipe, socket or terminal: Linux writes at most PIPE_BUF bytes to a pipe
 * in one piece, and the supervisor and its workers share one stdout, so a larger batch could be
 * cut by another process's line. A line longer than this is written alone, as it always was.
 */
export const PIPE_CHUNK_BYTES = 4096;
/** Bytes per write to a regular file: writers sharing a file's offset are not interleaved there. */
export const FILE_CHUNK_BYTES = 64 * 1024;

export interface LineSink {
  write(chunk: string): unknown;
}

/** Lines to `out`, written in batches of at most `maxBytes` (a longer line alone). */
export class LineBuffer {
  readonly #out: LineSink;
  readonly #maxBytes: number;
  readonly #flushMs: number;
  #pending = '';
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #direct = false;

  constructor(out: LineSink, maxBytes: number, flushMs = FLUSH_MS) {
    this.#out = out;
    this.#maxBytes = maxBytes;
    this.#flushMs = flushMs;
  }

  write(line: string): void {
    if (this.#direct) {
      this.#out.write(line);
      return;
    }
    const n = Buffer.byteLength(line);
    if (this.#bytes + n > this.#maxBytes) this.flush();
    if (n >= this.#maxBytes) {
      this.#out.write(line);
      return;
    }
    this.#pending += line;
    this.#bytes += n;
    if (this.#timer === undefined) {
      this.#timer = setTimeout(this.#onTimer, this.#flushMs);
      // Waiting lines must not keep a finished process alive: `exit` writes them.
      this.#timer.unref();
    }
  }

  /** Writes what waits, now. */
  flush(): void {
    if (this.#bytes === 0) return;
    const chunk = this.#pending;
    this.#pending = '';
    this.#bytes = 0;
    this.#out.write(chunk);
  }

  /** Writes what waits and every later line at once (a process on its way out). */
  unbuffer(): void {
    this.#direct = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.flush();
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.flush();
  };
}

let stdoutBuffer: LineBuffer | undefined;

function stdoutChunkBytes(): number {
  try {
    return fstatSync(1).isFile() ? FILE_CHUNK_BYTES : PIPE_CHUNK_BYTES;
  } catch {
    return PIPE_CHUNK_BYTES;
  }
}

/** This process's buffered stdout, made on first use with its exit and crash flushes. */
export function bufferedStdout(): LineBuffer {
  if (!stdoutBuffer) {
    const b = new LineBuffer(process.stdout, stdoutChunkBytes());
    stdoutBuffer = b;
    // Lines written by later `exit` listeners go straight out too.
    process.on('exit', () => b.unbuffer());
    // A process that handles the exception may go on: only what waits is written.
    process.on('uncaughtExceptionMonitor', () => b.flush());
  }
  return stdoutBuffer;
}

/** A stopping process: what waits is written, and later lines go straight out. */
export function unbufferStdout(): void {
  stdoutBuffer?.unbuffer();
}
