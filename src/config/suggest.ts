// "Did you mean" for misspelt keys: finds which keys the schema allows at a path and the
// closest one by edit distance.

import type { ZodType } from 'zod';

/** Loose view of zod's internal definition: only the fields this walker reads. */
interface SchemaDef {
  type: string;
  shape?: Record<string, ZodType>;
  innerType?: ZodType;
  valueType?: ZodType;
  element?: ZodType;
  in?: ZodType;
  out?: ZodType;
  options?: ZodType[];
}

function defOf(s: ZodType): SchemaDef {
  return (s as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

/** Object schemas reachable at this node (through wrappers, pipes and unions). */
function objectsAt(s: ZodType, path: ReadonlyArray<PropertyKey>): SchemaDef[] {
  const d = defOf(s);
  if (WRAPPERS.has(d.type) && d.innerType) return objectsAt(d.innerType, path);
  if (d.type === 'pipe') return [...(d.in ? objectsAt(d.in, path) : []), ...(d.out ? objectsAt(d.out, path) : [])];
  if (d.type === 'union') return (d.options ?? []).flatMap((o) => objectsAt(o, path));
  if (path.length === 0) return d.type === 'object' ? [d] : [];
  const [head, ...rest] = path;
  if (d.type === 'object' && d.shape && typeof head === 'string' && d.shape[head]) return objectsAt(d.shape[head], rest);
  if (d.type === 'record' && d.valueType) return objectsAt(d.valueType, rest);
  if (d.type === 'array' && d.element && typeof head === 'number') return objectsAt(d.element, rest);
  return [];
}

/** Keys a strict map accepts at `path` of `schema`. */
export function allowedKeys(schema: ZodType, path: ReadonlyArray<PropertyKey>): string[] {
  const keys = new Set<string>();
  for (const o of objectsAt(schema, path)) for (const k of Object.keys(o.shape ?? {})) keys.add(k);
  return [...keys];
}

/** Edit distance counting a swap of neighbours as one edit (the commonest typo). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest candidate, if close enough to be a plausible typo (about a third of the word). */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase().replace(/-/g, '_');
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}
