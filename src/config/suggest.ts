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
  keyType?: ZodType;
  /** An enum's values (zod keeps them as a value → value map). */
  entries?: Record<string, string | number>;
}

function defOf(s: ZodType): SchemaDef {
  return (s as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

/** Object and record schemas reachable at this node (through wrappers, pipes and unions). */
function mapsAt(s: ZodType, path: ReadonlyArray<PropertyKey>): SchemaDef[] {
  const d = defOf(s);
  if (WRAPPERS.has(d.type) && d.innerType) return mapsAt(d.innerType, path);
  if (d.type === 'pipe') return [...(d.in ? mapsAt(d.in, path) : []), ...(d.out ? mapsAt(d.out, path) : [])];
  if (d.type === 'union') return (d.options ?? []).flatMap((o) => mapsAt(o, path));
  if (path.length === 0) return d.type === 'object' || d.type === 'record' ? [d] : [];
  const [head, ...rest] = path;
  if (d.type === 'object' && d.shape && typeof head === 'string' && d.shape[head]) return mapsAt(d.shape[head], rest);
  if (d.type === 'record' && d.valueType) return mapsAt(d.valueType, rest);
  if (d.type === 'array' && d.element && typeof head === 'number') return mapsAt(d.element, rest);
  return [];
}

/** The names an enum allows (through wrappers); none for any other schema. */
function enumValues(s: ZodType | undefined): string[] {
  if (!s) return [];
  const d = defOf(s);
  if (WRAPPERS.has(d.type) && d.innerType) return enumValues(d.innerType);
  return d.type === 'enum' && d.entries ? Object.values(d.entries).map(String) : [];
}

/** Keys a strict map accepts at `path` of `schema`: an object's fields, or a record's enum keys. */
export function allowedKeys(schema: ZodType, path: ReadonlyArray<PropertyKey>): string[] {
  const keys = new Set<string>();
  for (const m of mapsAt(schema, path)) {
    const own = m.type === 'object' ? Object.keys(m.shape ?? {}) : enumValues(m.keyType);
    for (const k of own) keys.add(k);
  }
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
  // Case and `-` against `_` are the same name to a reader (`add-header`, `X-Spamd-Bar`).
  const norm = (s: string): string => s.toLowerCase().replace(/-/g, '_');
  const w = norm(word);
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, norm(c));
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}
