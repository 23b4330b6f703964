// Dynamic configuration: action thresholds and symbol scores saved by the controller
// (/saveactions, /savesymbols) and map edits (/savemap), reaching every worker without a
// restart.
//
// Propagation is by polling, not a cluster broadcast: the controller writes the document and
// then bumps a revision counter in the KvStore; every worker reads the counter every
// DYNAMIC_POLL_MS and, when it moved, applies the document and re-checks its file maps. One
// small read per worker per half second costs nothing measurable, and unlike an IPC
// broadcast it also reaches workers on other machines sharing a Redis store, survives a
// controller restart, and lets a restarted worker start with the saved values.

import type { Engine, RuntimeOverrides } from '../engine/index.js';
import type { Logger } from '../plugin-api/index.js';
import { setOwn } from '../core/records.js';
import type { KvStore } from '../storage/types.js';

export const DYNAMIC_CONF_KEY = 'mailsift:dynamic:conf';
export const DYNAMIC_REV_KEY = 'mailsift:dynamic:rev';
/** How often workers look for a new revision: a saved change reaches every worker within a second, with margin. */
export const DYNAMIC_POLL_MS = 500;

export interface DynamicConfDoc {
  actions: Record<string, number | null>;
  scores: Record<string, number>;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The stored document; a missing or unreadable one is empty (nothing overridden). */
export async function readDynamicConf(kv: KvStore): Promise<DynamicConfDoc> {
  const raw = await kv.get(DYNAMIC_CONF_KEY);
  const doc: DynamicConfDoc = { actions: {}, scores: {} };
  if (!raw) return doc;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return doc;
  }
  if (!isRecord(parsed)) return doc;
  if (isRecord(parsed.actions)) {
    // Keys are whatever the store holds: own properties even for `__proto__` (records.ts).
    for (const [k, v] of Object.entries(parsed.actions)) if (v === null || (typeof v === 'number' && Number.isFinite(v))) setOwn(doc.actions, k, v);
  }
  if (isRecord(parsed.scores)) {
    for (const [k, v] of Object.entries(parsed.scores)) if (typeof v === 'number' && Number.isFinite(v)) setOwn(doc.scores, k, v);
  }
  return doc;
}

export async function readRevision(kv: KvStore): Promise<number> {
  const raw = await kv.get(DYNAMIC_REV_KEY);
  const n = raw ? Number(raw.toString('utf8')) : 0;
  return Number.isFinite(n) ? n : 0;
}

/** Announce a change (the document, or a map file) to every worker. */
export function bumpRevision(kv: KvStore): Promise<number> {
  return kv.incrBy(DYNAMIC_REV_KEY, 1);
}

/** Durable write of the document, then the revision bump; resolves once both are stored. */
export async function saveDynamicConf(kv: KvStore, doc: DynamicConfDoc): Promise<number> {
  await kv.set(DYNAMIC_CONF_KEY, JSON.stringify(doc));
  return bumpRevision(kv);
}

export function toOverrides(doc: DynamicConfDoc): RuntimeOverrides {
  return { actions: { ...doc.actions }, scores: { ...doc.scores } };
}

export interface DynamicSync {
  /** Settles after the first poll: await it before serving so the first scan uses saved values. */
  ready: Promise<void>;
  /** One poll now (tests, and the controller right after a save). */
  tick(): Promise<void>;
  stop(): void;
}

export interface DynamicSyncOptions {
  engine: Engine;
  kv: KvStore;
  log: Logger;
  intervalMs?: number;
}

/**
 * Keep `engine` in step with the stored document. The first tick runs at once, so a worker
 * started after a save scans with the saved values. A store outage is logged once, not on
 * every poll; the engine keeps the last values it applied.
 */
export function startDynamicSync(opts: DynamicSyncOptions): DynamicSync {
  let seen = -1;
  let failing = false;
  let running: Promise<void> | undefined;
  const poll = async (): Promise<void> => {
    try {
      const rev = await readRevision(opts.kv);
      if (rev !== seen) {
        const doc = await readDynamicConf(opts.kv);
        opts.engine.applyOverrides(toOverrides(doc));
        if (seen !== -1) await opts.engine.maps().checkFiles();
        seen = rev;
      }
      if (failing) opts.log.info('dynamic configuration store reachable again');
      failing = false;
    } catch (err) {
      if (!failing) opts.log.warn('cannot read the dynamic configuration; keeping the current values', { error: (err as Error).message });
      failing = true;
    }
  };
  // A tick asked for while a poll is in flight runs after it, so it sees writes made before the call.
  const tick = async (): Promise<void> => {
    while (running) await running;
    running = poll().finally(() => {
      running = undefined;
    });
    return running;
  };
  const ready = tick();
  const timer = setInterval(() => void tick(), opts.intervalMs ?? DYNAMIC_POLL_MS);
  timer.unref();
  return { ready, tick, stop: () => clearInterval(timer) };
}
