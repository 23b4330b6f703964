// The server counters /stat shows, as plain data: what one worker accumulates between
// two flushes (StatsDelta) and the aggregate the supervisor keeps and persists (StatsState).
// Workers send deltas, never per-scan messages, so IPC cost does not grow with the scan rate.

import type { ActionName, ScanResult } from '../core/scan-types.js';
import { dataRecord, ownValue } from '../core/records.js';

/** Internal action order of /stat, /metrics and /graph. */
export const ACTION_ORDER = ['reject', 'soft reject', 'rewrite subject', 'add header', 'greylist', 'no action'] as const satisfies readonly ActionName[];
/** Actions counted as spam; the rest are ham. */
const SPAM_ACTIONS = 4;
/** Length of the scan time ring (Rspamd keeps the last 31). */
export const SCAN_TIMES_RING = 31;
/** Distinct symbols tracked by /counters; bounds the aggregate if a plugin invents names per message. */
export const MAX_TRACKED_SYMBOLS = 20_000;

export function actionIndex(action: string): number {
  const i = (ACTION_ORDER as readonly string[]).indexOf(action);
  return i < 0 ? ACTION_ORDER.length - 1 : i;
}

export interface SymbolCounter {
  hits: number;
  /** Sum of scores, for the average weight. */
  weight: number;
  /** Sum of execution seconds, for the average time (0 when the engine does not time symbols). */
  time: number;
}

export interface StatsDelta {
  scanned: number;
  learned: number;
  /** Counts per action in ACTION_ORDER. */
  actions: number[];
  connections: number;
  controlConnections: number;
  /** Scan durations (seconds) in the order they finished. */
  scanTimes: number[];
  symbols: Record<string, SymbolCounter>;
}

export interface StatsState {
  scanned: number;
  learned: number;
  actions: number[];
  connections: number;
  controlConnections: number;
  /** Ring of the last SCAN_TIMES_RING durations; null = not yet filled. */
  scanTimes: Array<number | null>;
  scanTimesPos: number;
  symbols: Record<string, SymbolCounter>;
  /** Epoch seconds the symbol counters started counting (for /counters frequency). */
  symbolsSince: number;
}

export function emptyDelta(): StatsDelta {
  return { scanned: 0, learned: 0, actions: ACTION_ORDER.map(() => 0), connections: 0, controlConnections: 0, scanTimes: [], symbols: dataRecord<SymbolCounter>() };
}

export function isEmptyDelta(d: StatsDelta): boolean {
  return d.scanned === 0 && d.learned === 0 && d.connections === 0 && d.controlConnections === 0;
}

export function emptyState(now = Date.now()): StatsState {
  return {
    scanned: 0,
    learned: 0,
    actions: ACTION_ORDER.map(() => 0),
    connections: 0,
    controlConnections: 0,
    scanTimes: new Array<number | null>(SCAN_TIMES_RING).fill(null),
    scanTimesPos: 0,
    symbols: dataRecord<SymbolCounter>(),
    symbolsSince: Math.floor(now / 1000),
  };
}

/** Adds one finished scan to a worker's pending delta. */
export function recordScan(d: StatsDelta, result: ScanResult, seconds: number): void {
  d.scanned++;
  d.actions[actionIndex(result.action)]!++;
  d.scanTimes.push(seconds);
  const profile = result.symbolTimes ?? result.profile;
  // Symbol names come from requests too (Settings can insert any name, `__proto__` included):
  // the counters are records without a prototype (records.ts), and the timings are read as own
  // values only. On a plain record, `__proto__` found Object.prototype and counted on it.
  for (const s of result.symbols) {
    let c = d.symbols[s.name];
    if (!c) c = d.symbols[s.name] = { hits: 0, weight: 0, time: 0 };
    c.hits++;
    c.weight += s.score;
    const t = profile ? ownValue(profile, s.name) : undefined;
    c.time += typeof t === 'number' ? t : 0;
  }
}

export function applyDelta(st: StatsState, d: StatsDelta): void {
  st.scanned += d.scanned;
  st.learned += d.learned;
  for (let i = 0; i < ACTION_ORDER.length; i++) st.actions[i]! += d.actions[i] ?? 0;
  st.connections += d.connections;
  st.controlConnections += d.controlConnections;
  for (const t of d.scanTimes) {
    st.scanTimes[st.scanTimesPos] = t;
    st.scanTimesPos = (st.scanTimesPos + 1) % SCAN_TIMES_RING;
  }
  let tracked = Object.keys(st.symbols).length;
  for (const [name, c] of Object.entries(d.symbols)) {
    let cur = st.symbols[name];
    if (!cur) {
      if (tracked >= MAX_TRACKED_SYMBOLS) continue;
      tracked++;
      cur = st.symbols[name] = { hits: 0, weight: 0, time: 0 };
    }
    cur.hits += c.hits;
    cur.weight += c.weight;
    cur.time += c.time;
  }
}

/** /statreset: counters to zero; scan times and symbol counters are kept. */
export function resetCounters(st: StatsState): void {
  st.scanned = 0;
  st.learned = 0;
  st.actions = ACTION_ORDER.map(() => 0);
  st.connections = 0;
  st.controlConnections = 0;
}

export function spamCount(st: Pick<StatsState, 'actions'>): number {
  let n = 0;
  for (let i = 0; i < SPAM_ACTIONS; i++) n += st.actions[i] ?? 0;
  return n;
}

export function hamCount(st: Pick<StatsState, 'actions'>): number {
  let n = 0;
  for (let i = SPAM_ACTIONS; i < ACTION_ORDER.length; i++) n += st.actions[i] ?? 0;
  return n;
}

/** Restores a persisted state, tolerating fields added or missing between versions. */
export function reviveState(raw: unknown, now = Date.now()): StatsState {
  const st = emptyState(now);
  if (typeof raw !== 'object' || raw === null) return st;
  const r = raw as Partial<StatsState>;
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  st.scanned = num(r.scanned);
  st.learned = num(r.learned);
  if (Array.isArray(r.actions)) st.actions = ACTION_ORDER.map((_, i) => num(r.actions![i]));
  st.connections = num(r.connections);
  st.controlConnections = num(r.controlConnections);
  if (Array.isArray(r.scanTimes) && r.scanTimes.length === SCAN_TIMES_RING) {
    st.scanTimes = r.scanTimes.map((v) => (typeof v === 'number' ? v : null));
    st.scanTimesPos = num(r.scanTimesPos) % SCAN_TIMES_RING;
  }
  if (typeof r.symbols === 'object' && r.symbols !== null) {
    for (const [k, v] of Object.entries(r.symbols)) st.symbols[k] = { hits: num(v?.hits), weight: Number(v?.weight) || 0, time: num(v?.time) };
  }
  if (typeof r.symbolsSince === 'number') st.symbolsSince = r.symbolsSince;
  return st;
}
