// The input vector: cheap metatokens first, then one value per profile symbol.
// The profile is the sorted list of symbols that may describe a message: not nostat, not run in
// the idempotent stage, not composites, not disabled, not blacklisted (or a fixed list from config).

import { createHash } from 'node:crypto';
import type { Message, ReceivedHop, SymbolResult, SymbolTableEntry } from '../../plugin-api/index.js';
import type { SparseVec } from './mlp.js';

/** Bumped whenever a metatoken is added, removed or changes meaning: it is part of the profile digest. */
export const METATOKENS_VERSION = 1;
export const METATOKEN_COUNT = 14;

/** Characters of one text part looked at for the character-class rates (keeps them cheap). */
const MAX_TEXT_CHARS = 32 * 1024;
const SIZE_BUCKETS = [100, 200, 500, 1000, 2000, 4000, 10000, 20000, 30000, 100000, 200000, 400000, 800000, 1000000, 2000000, 8000000];

/** What the metatokens read of a scan. */
export interface MessageFacts {
  size: number;
  message: Message;
  received: readonly ReceivedHop[];
  smtpRcpts: number;
}

export interface Profile {
  symbols: readonly string[];
  index: ReadonlyMap<string, number>;
  /** sha256 hex of the symbol list and the metatokens version. */
  digest: string;
  /** METATOKEN_COUNT + symbols. */
  length: number;
}

export function makeProfile(symbols: readonly string[]): Profile {
  const sorted = [...new Set(symbols)].sort();
  const digest = createHash('sha256').update(`mt${METATOKENS_VERSION}\n${sorted.join('\n')}`).digest('hex');
  return { symbols: sorted, index: new Map(sorted.map((s, i) => [s, i])), digest, length: METATOKEN_COUNT + sorted.length };
}

/** The dynamic profile: every symbol of the engine that can describe a message. */
export function profileSymbols(table: readonly SymbolTableEntry[], blacklist: readonly string[]): string[] {
  const black = new Set(blacklist);
  return table
    .filter((s) => !s.composite && !s.disabled && !black.has(s.name) && !s.flags.includes('nostat') && !s.stages.includes('idempotent'))
    .map((s) => s.name);
}

function textRates(message: Message): [number, number, number, number] {
  const sums: [number, number, number, number] = [0, 0, 0, 0];
  let parts = 0;
  for (const tp of message.textParts) {
    const n = Math.min(tp.text.length, MAX_TEXT_CHARS);
    if (n === 0) continue;
    let spaces = 0, nonAscii = 0, capitals = 0, digits = 0;
    for (let i = 0; i < n; i++) {
      const c = tp.text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) spaces++;
      else if (c > 127) nonAscii++;
      else if (c >= 65 && c <= 90) capitals++;
      else if (c >= 48 && c <= 57) digits++;
    }
    sums[0] += spaces / n;
    sums[1] += nonAscii / n;
    sums[2] += capitals / n;
    sums[3] += digits / n;
    parts++;
  }
  return parts > 0 ? [sums[0] / parts, sums[1] / parts, sums[2] / parts, sums[3] / parts] : sums;
}

/** METATOKEN_COUNT values in [0, 1], in a fixed order. */
export function metatokens(f: MessageFacts): number[] {
  const bucket = SIZE_BUCKETS.findIndex((b) => b >= f.size);
  const m = f.message;
  const totalParts = m.parts.length + 1;
  const mimeRcpts = m.to.length + m.cc.length;
  let hops = 0, noBy = 0, secure = 0, gaps = 0;
  let prev: number | undefined;
  for (const r of f.received) {
    hops++;
    if (!r.by) noBy++;
    if (r.tls || r.authenticated) secure++;
    const t = r.timestamp?.getTime();
    if (t !== undefined && Number.isFinite(t)) {
      if (prev !== undefined) gaps += Math.abs(prev - t) / 1000;
      prev = t;
    }
  }
  return [
    bucket < 0 ? 0 : (bucket + 1) / SIZE_BUCKETS.length,
    m.textParts.length / totalParts,
    m.attachments.length / totalParts,
    mimeRcpts > 0 ? 1 / mimeRcpts : 0,
    f.smtpRcpts > 0 ? 1 / f.smtpRcpts : 0,
    hops > 0 ? 1 / hops : 0,
    hops > 0 ? noBy / hops : 0,
    gaps > 0 ? Math.min(1, 1 / gaps) : 0,
    hops > 0 ? secure / hops : 0,
    m.urls.length > 0 ? 1 / m.urls.length : 0,
    ...textRates(m),
  ];
}

/**
 * A present symbol's value: its share of the configured score (capped at 1), |tanh(score)| for a
 * symbol configured at 0 (1 if it scored 0 too); never below 0.1, so presence always shows.
 */
export function symbolValue(s: Pick<SymbolResult, 'score' | 'metricScore'>): number {
  let v: number;
  if (s.metricScore === 0) v = s.score === 0 ? 1 : Math.abs(Math.tanh(s.score));
  else v = Math.min(1, Math.abs(s.score / s.metricScore));
  return Math.max(0.1, Number.isFinite(v) ? v : 1);
}

/** The input vector as non-zero entries, indexes ascending. */
export function sparseVector(profile: Profile, meta: readonly number[], symbols: readonly SymbolResult[]): SparseVec {
  const idx: number[] = [];
  const val: number[] = [];
  meta.forEach((v, i) => {
    if (v !== 0) {
      idx.push(i);
      val.push(v);
    }
  });
  const hits: Array<[number, number]> = [];
  for (const s of symbols) {
    const i = profile.index.get(s.name);
    if (i !== undefined) hits.push([METATOKEN_COUNT + i, symbolValue(s)]);
  }
  hits.sort((a, b) => a[0] - b[0]);
  for (const [i, v] of hits) {
    idx.push(i);
    val.push(v);
  }
  return { idx, val };
}

export function toDense(v: SparseVec, length: number): number[] {
  const out = new Array<number>(length).fill(0);
  v.idx.forEach((i, k) => {
    if (i >= 0 && i < length) out[i] = v.val[k]!;
  });
  return out;
}

export function fromDense(d: readonly number[]): SparseVec {
  const idx: number[] = [];
  const val: number[] = [];
  d.forEach((v, i) => {
    if (v !== 0) {
      idx.push(i);
      val.push(v);
    }
  });
  return { idx, val };
}

/** Stored form of a training vector: `;`-joined decimals, as Rspamd keeps them. */
export function encodeVector(v: SparseVec, length: number): string {
  return toDense(v, length).map((x) => (x === 0 ? '0' : String(Math.round(x * 1e5) / 1e5))).join(';');
}

/** A stored vector back, or undefined when it is not `length` finite numbers. */
export function decodeVector(s: string, length: number): SparseVec | undefined {
  const parts = s.split(';');
  if (parts.length !== length) return undefined;
  const nums = parts.map(Number);
  return nums.every(Number.isFinite) ? fromDense(nums) : undefined;
}
