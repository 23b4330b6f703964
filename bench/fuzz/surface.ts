// What a fuzz surface is: a generator of inputs for one port, and the replies it may get.
import type { Rng } from './rng.js';
import type { Seeds } from './seeds.js';

export type Port = 'scan' | 'controller';

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
   * server does not speak; the controller's documented 500s, controller.md). Any other 5xx is
   * a finding.
   */
  expected5xx(status: number, head: string, body: Buffer): boolean;
  generate(rng: Rng): FuzzInput;
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

/** Scan surfaces: only 505 (an HTTP version the server does not speak) is by design. */
export function scanExpected5xx(status: number): boolean {
  return status === 505;
}
