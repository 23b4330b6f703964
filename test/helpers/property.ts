// Shared pieces of the property tests (fast-check): run parameters that a developer can turn
// up for a long local run, the "only a coded error" check, and a mutator that turns valid
// inputs into nearly-valid ones (the inputs that reach deep into a parser).
//
//   FC_NUM_RUNS=20000 FC_SEED=42 node scripts/run-tests.mjs test/http/parsers-property.test.ts
//
// FC_NUM_RUNS replaces every property's default run count; FC_SEED replaces the fixed seed.
// A failure prints the seed and the path of the shrunk counter-example; replay it with
// FC_SEED=<seed> (and FC_PATH=<path> to jump straight to it).

import fc from 'fast-check';
import { ERROR_TABLE } from '../../src/http/errors.js';

/** Fixed by default so that `npm test` is reproducible; a failing seed is printed by fast-check. */
const DEFAULT_SEED = 0x5eed17;

function envInt(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, found ${JSON.stringify(v)}`);
  return n;
}

/**
 * fast-check parameters for a property whose default run count keeps the file within a few
 * seconds on a loaded 2-core machine.
 */
export function fcParams<T = unknown>(defaultRuns: number): fc.Parameters<T> {
  const numRuns = envInt('FC_NUM_RUNS') ?? defaultRuns;
  const seed = envInt('FC_SEED') ?? DEFAULT_SEED;
  const path = process.env.FC_PATH;
  return { numRuns, seed, includeErrorInReport: true, ...(path ? { path } : {}) };
}

/** The code of a thrown value, when it carries a string one. */
export function codeOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Describes a thrown value that is not a coded error, for the assertion message. */
function describeThrown(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}\n${err.stack ?? ''}`;
  return String(err);
}

/**
 * Runs `fn`; a throw is fine only when it is one of the server's coded errors (a code in the
 * one status table of src/http/errors.ts), optionally restricted to `allowed`. Returns the
 * result, or the code thrown.
 */
export function expectCoded<T>(fn: () => T, allowed?: ReadonlySet<string>): { ok: true; value: T } | { ok: false; code: string } {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    const code = codeOf(err);
    if (code === undefined || !(code in ERROR_TABLE)) {
      throw new Error(`threw something that is not a coded error: ${describeThrown(err)}`);
    }
    if (allowed && !allowed.has(code)) throw new Error(`threw code ${code}, expected one of ${[...allowed].join(', ')}`);
    return { ok: false, code };
  }
}

/**
 * CPU milliseconds (user + system) that `fn` takes; the property tests bound the cost of one
 * parse with it (wall time would measure the machine's load instead).
 */
export function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

/** Byte strings a parser gives meaning to; the mutator splices them in. */
export const DEFAULT_TOKENS: readonly string[] = [
  '\r\n', '\n', '\r', '\r\n\r\n', '\n\n', ' ', '\t', ':', ';', ',', '=', '"', "'", '\\', '--', '-', '/', '?', '&', '%', '%zz', '#',
  '{', '}', '[', ']', '0', '00000000', 'ffffffffffff', '1', '-1', '999999999999999999', 'NaN', '1e309', '\x00', '\xff', '\xc2\xa0', '\xe2\x80\xa8',
  '__proto__', 'constructor', 'prototype', 'toString', 'chunked', 'Content-Length', 'Transfer-Encoding', 'zstd', 'HTTP/1.1', 'HTTP/1.0',
];

export interface Mutation {
  kind: 'flip' | 'insert-byte' | 'delete' | 'duplicate' | 'truncate' | 'token' | 'swap';
  /** Position, as a fraction-free integer taken modulo the current length. */
  at: number;
  len: number;
  byte: number;
  token: number;
}

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom<Mutation['kind']>('flip', 'insert-byte', 'delete', 'duplicate', 'truncate', 'token', 'token', 'swap'),
  at: fc.nat(),
  len: fc.integer({ min: 1, max: 64 }),
  byte: fc.integer({ min: 0, max: 255 }),
  token: fc.nat(),
});

/** Applies mutations in order; each one changes the input at a position chosen from its length. */
export function applyMutations(input: Buffer, muts: readonly Mutation[], tokens: readonly string[] = DEFAULT_TOKENS): Buffer {
  let b = input;
  for (const m of muts) {
    const n = b.length;
    const at = n === 0 ? 0 : m.at % (n + 1);
    switch (m.kind) {
      case 'flip':
        if (n > 0) {
          b = Buffer.from(b);
          b[at % n] = m.byte;
        }
        break;
      case 'insert-byte':
        b = Buffer.concat([b.subarray(0, at), Buffer.from([m.byte]), b.subarray(at)]);
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(n, at + m.len))]);
        break;
      case 'duplicate':
        b = Buffer.concat([b.subarray(0, Math.min(n, at + m.len)), b.subarray(at)]);
        break;
      case 'truncate':
        b = b.subarray(0, at);
        break;
      case 'token':
        b = Buffer.concat([b.subarray(0, at), Buffer.from(tokens[m.token % tokens.length]!, 'latin1'), b.subarray(at)]);
        break;
      case 'swap': {
        // Replace a span with a token: turns a valid field into a hostile one in place.
        const tok = Buffer.from(tokens[m.token % tokens.length]!, 'latin1');
        b = Buffer.concat([b.subarray(0, at), tok, b.subarray(Math.min(n, at + m.len))]);
        break;
      }
    }
  }
  return b;
}

/** Valid inputs from `base`, each with up to `maxMutations` mutations applied (none for some). */
export function mutated(base: fc.Arbitrary<Buffer>, maxMutations = 6, tokens: readonly string[] = DEFAULT_TOKENS): fc.Arbitrary<Buffer> {
  return fc.tuple(base, fc.array(mutationArb, { maxLength: maxMutations })).map(([b, muts]) => applyMutations(b, muts, tokens));
}

/** Random bytes, biased toward the protocol's special bytes so that they reach past the first check. */
export function noisyBytes(maxLength = 512): fc.Arbitrary<Buffer> {
  const piece = fc.oneof(
    { weight: 3, arbitrary: fc.uint8Array({ maxLength: 16 }).map((u) => Buffer.from(u)) },
    { weight: 2, arbitrary: fc.constantFrom(...DEFAULT_TOKENS).map((t) => Buffer.from(t, 'latin1')) },
    { weight: 2, arbitrary: fc.string({ maxLength: 12 }).map((s) => Buffer.from(s, 'latin1')) },
  );
  return fc.array(piece, { maxLength: Math.max(1, Math.floor(maxLength / 8)) }).map((ps) => Buffer.concat(ps).subarray(0, maxLength));
}

/** Splits `b` at the given cut points (taken modulo its length): the same bytes as a socket might deliver them. */
export function splitAt(b: Buffer, cuts: readonly number[]): Buffer[] {
  if (b.length === 0) return [b];
  const points = [...new Set(cuts.map((c) => c % b.length))].filter((c) => c > 0).sort((x, y) => x - y);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(b.subarray(prev, p));
    prev = p;
  }
  out.push(b.subarray(prev));
  return out;
}

/** Every object and array reachable from `v` has the ordinary prototype (nothing was re-parented). */
export function plainPrototypes(v: unknown, depth = 0): boolean {
  if (v === null || typeof v !== 'object' || depth > 64) return true;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (Array.isArray(v)) return proto === Array.prototype && v.every((x) => plainPrototypes(x, depth + 1));
  if (proto !== Object.prototype) return false;
  return Object.values(v as Record<string, unknown>).every((x) => plainPrototypes(x, depth + 1));
}

/** The own property names of Object.prototype now: compared after a run to catch pollution. */
export function objectPrototypeKeys(): string {
  return Reflect.ownKeys(Object.prototype).map(String).sort().join(',');
}
