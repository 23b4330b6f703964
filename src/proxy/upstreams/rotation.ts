// How one host is chosen from the hosts that are up: weighted round
// robin, weighted random, master-slave (highest priority first, list order among equals) and
// hash (the same key keeps the same host while that host is up). A priority of 0 counts as
// weight 1, as in Rspamd.

import type { Rotation } from './host-list.js';

/** What rotation needs to know of a host; the group keeps the rest. */
export interface Candidate {
  readonly name: string;
  readonly priority: number;
  /** Smooth weighted round-robin state (nginx's algorithm): owned by pickRoundRobin. */
  rrCurrent: number;
}

const weightOf = (c: Candidate): number => (c.priority > 0 ? c.priority : 1);

/**
 * Smooth weighted round robin: over a cycle each host is picked in proportion to its weight,
 * interleaved rather than in bursts (weights 5,1,1 give a a b a c a a, not a a a a a b c).
 */
export function pickRoundRobin<T extends Candidate>(candidates: readonly T[]): T | undefined {
  let total = 0;
  let best: T | undefined;
  for (const c of candidates) {
    const w = weightOf(c);
    c.rrCurrent += w;
    total += w;
    if (!best || c.rrCurrent > best.rrCurrent) best = c;
  }
  if (best) best.rrCurrent -= total;
  return best;
}

export function pickRandom<T extends Candidate>(candidates: readonly T[], random: () => number): T | undefined {
  let total = 0;
  for (const c of candidates) total += weightOf(c);
  let r = random() * total;
  for (const c of candidates) {
    r -= weightOf(c);
    if (r < 0) return c;
  }
  return candidates[candidates.length - 1];
}

/** Highest priority wins; among equals the first listed, so an unweighted list is "first is master". */
export function pickMasterSlave<T extends Candidate>(candidates: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const c of candidates) if (!best || c.priority > best.priority) best = c;
  return best;
}

/** 32-bit FNV-1a over the UTF-16 code units: fast, stable across processes and restarts. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // A final avalanche: FNV's low bits mix poorly for keys that differ only at the end.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Weighted rendezvous hashing: every (key, host) pair gets a score and the best host wins. When
 * a host goes down only the keys it held move (to their second-best host), and they come back
 * when it revives; every process of every proxy computes the same choice.
 */
export function pickHashed<T extends Candidate>(candidates: readonly T[], key: string): T | undefined {
  let best: T | undefined;
  let bestScore = -Infinity;
  for (const c of candidates) {
    // u in (0, 1): never 0 (log would be -Infinity) nor 1 (log 0, a division by zero).
    const u = (fnv1a(`${key}\u0000${c.name}`) + 0.5) / 4294967296;
    const score = weightOf(c) / -Math.log(u);
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

export function pick<T extends Candidate>(rotation: Rotation, candidates: readonly T[], key: string | undefined, random: () => number): T | undefined {
  if (candidates.length <= 1) return candidates[0];
  switch (rotation) {
    case 'round-robin':
      return pickRoundRobin(candidates);
    case 'random':
      return pickRandom(candidates, random);
    case 'master-slave':
      return pickMasterSlave(candidates);
    case 'hash':
      // Without a key (a request that names no client) hashing has nothing to stick to.
      return key === undefined || key === '' ? pickRoundRobin(candidates) : pickHashed(candidates, key);
  }
}
