// The /errors ring: the most recent error-level log lines of every
// process, newest first. Each process hands its error lines to a sink; the supervisor (or the
// single process) keeps the ring.

/** Longest message kept per entry (Rspamd's error_maxlen); a huge stack trace stays readable. */
export const ERROR_MAXLEN = 1000;

export interface ErrorEntry {
  /** Unix time with fraction. */
  ts: number;
  pid: number;
  /** Process type: `normal`, `controller`, `main`. */
  type: string;
  /** Task or session id; may be empty. */
  id: string;
  module: string;
  message: string;
}

export class ErrorRing {
  readonly #size: number;
  #items: ErrorEntry[] = [];

  constructor(size: number) {
    this.#size = Math.max(1, size);
  }

  push(e: ErrorEntry): void {
    const entry = e.message.length > ERROR_MAXLEN ? { ...e, message: e.message.slice(0, ERROR_MAXLEN) } : e;
    this.#items.push(entry);
    if (this.#items.length > this.#size) this.#items.shift();
  }

  /** Newest first. */
  list(): ErrorEntry[] {
    return [...this.#items].reverse();
  }

  restore(items: unknown): void {
    if (!Array.isArray(items)) return;
    for (const it of items.slice().reverse()) {
      const e = it as Partial<ErrorEntry>;
      if (typeof e?.message !== 'string') continue;
      this.push({ ts: Number(e.ts) || 0, pid: Number(e.pid) || 0, type: String(e.type ?? ''), id: String(e.id ?? ''), module: String(e.module ?? ''), message: e.message });
    }
  }
}

/** Process-wide hook the logger calls for every error line (set once the process knows where they go). */
let errorSink: ((e: ErrorEntry) => void) | undefined;
let processType = 'main';

export function setErrorSink(sink: ((e: ErrorEntry) => void) | undefined, type?: string): void {
  errorSink = sink;
  if (type) processType = type;
}

/** Called by the logger; cheap when nobody listens. */
export function reportErrorLine(message: string, module: string, id = ''): void {
  if (!errorSink) return;
  try {
    errorSink({ ts: Date.now() / 1000, pid: process.pid, type: processType, id, module, message });
  } catch {
    // A failing sink must never break logging.
  }
}
