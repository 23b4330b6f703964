// What a fuzz surface is: a generator of inputs for one port, and the replies it may get.
import type { Rng } from './rng.js';
import type { Seeds } from './seeds.js';

/**
 * Where an input goes: the normal workers' scan port, the controller, the proxy worker in
 * milter mode (a whole MTA session, sent by milter-wire.ts) or in HTTP mode (the spamc surface).
 */
export type Port = 'scan' | 'controller' | 'milter' | 'proxy';

/** The proxy mode the server must run for inputs to `port` (none: either will do). */
export function proxyModeFor(port: Port): 'milter' | 'http' | undefined {
  return port === 'milter' ? 'milter' : port === 'proxy' ? 'http' : undefined;
}

export interface FuzzInput {
  bytes: Buffer;
  port: Port;
  /** The mutations applied, for the finding's description. */
  note: string;
}

export interface SurfaceContext {
  seeds: Seeds;
  /** Map ids from the controller's /maps whose file lies inside the fuzz server's temp dir. */
  writableMapIds: number[];
  /** All map ids the controller listed. */
  mapIds: number[];
}

export interface Surface {
  name: string;
  /**
   * True for a 5xx reply this surface's inputs may get by design (505 for an HTTP version the
   * server does not speak; the controller's documented 500s). Any other 5xx is
   * a finding.
   */
  expected5xx(status: number, head: string, body: Buffer): boolean;
  generate(rng: Rng): FuzzInput;
  /**
   * Inputs whose framing is exact may go on kept-alive connections (send.ts exactlyFramed).
   * False for the surfaces whose subject is the framing itself (request lines, lengths,
   * chunks): each of their inputs meets a fresh connection, as the first request of a client.
   */
  keepAlive: boolean;
  /** The proxy worker's mode this surface's inputs need (main.ts restarts the server to match). */
  proxyMode?: 'milter' | 'http';
}

/** Records the names of the mutations applied to one input. */
export class Notes {
  readonly #items: string[] = [];
  add(s: string): void {
    if (this.#items.length < 40) this.#items.push(s);
  }
  toString(): string {
    return this.#items.join(' ');
  }
}

/**
 * 503 for a message source named by a `Shm` or `File` header that cannot be read: Rspamd's
 * message-loading status (src/http/errors.ts ERR_SOURCE_UNREADABLE),
 * with the error as the reason phrase. The fuzzer names segments and files that do not exist.
 */
const SOURCE_UNREADABLE = /^HTTP\/1\.[01] 503 (Cannot open shm segment|empty shm segment|shm segment|Invalid file|Cannot open file|Not a regular file) \(/;

/**
 * Scan surfaces: by design only 505 (an HTTP version the server does not speak) and the 503 of
 * an unreadable Shm/File source.
 */
export function scanExpected5xx(status: number, head: string): boolean {
  return status === 505 || (status === 503 && SOURCE_UNREADABLE.test(head));
}
