// A scan worker's engine, replaceable while the worker serves: a reload that changes only what
// the engine reads (actions, scores, symbols, modules, settings, maps, DNS) builds a new engine
// beside the running one and swaps it in between two scans, in well under a second, where
// starting a new worker process takes seconds. Scans already running finish on the engine they
// started on; that engine's services close once the last of them is done.

import type { Engine } from '../engine/index.js';
import type { Scanner } from '../engine/contract.js';
import type { MapRegistry } from '../maps/index.js';
import type { NetServices } from '../net/index.js';
import type { ScanMeta, ScanResult } from '../plugin-api/index.js';
import type { DynamicSync } from './dynamic-config.js';

/** One engine with what was built for it. */
export interface EngineSet {
  engine: Engine;
  dynamic: DynamicSync;
  maps: MapRegistry;
}

interface Held extends EngineSet {
  inFlight: number;
  retired: boolean;
}

function release(set: Held): void {
  set.dynamic.stop();
  set.maps.close();
  // The engine's resolver and Redis clients; the property is set by createEngine.
  const net = (set.engine as Engine & { net?: NetServices }).net;
  void net?.close().catch(() => undefined);
}

export class SwappableScanner implements Scanner {
  #current: Held;

  constructor(first: EngineSet) {
    this.#current = { ...first, inFlight: 0, retired: false };
  }

  get engine(): Engine {
    return this.#current.engine;
  }

  async scan(message: Buffer, meta: ScanMeta): Promise<ScanResult> {
    const set = this.#current;
    set.inFlight++;
    try {
      return await set.engine.scan(message, meta);
    } finally {
      set.inFlight--;
      if (set.retired && set.inFlight === 0) release(set);
    }
  }

  /** The next scan uses `next`; the previous engine is released after its last scan. */
  replace(next: EngineSet): void {
    const old = this.#current;
    this.#current = { ...next, inFlight: 0, retired: false };
    old.retired = true;
    if (old.inFlight === 0) release(old);
  }

  /** A prepared set that will not be used (a reload given up). */
  static discard(set: EngineSet): void {
    release({ ...set, inFlight: 0, retired: true });
  }

  /** Worker shutdown: the dynamic sync and maps of the engine in use stop. */
  close(): void {
    this.#current.dynamic.stop();
    this.#current.maps.close();
  }
}
