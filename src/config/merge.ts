// Layering of config files the way Rspamd admins expect: `local.d/<file>` is merged over the
// shipped file (maps merged key by key, lists and scalars replaced), `override.d/<file>`
// replaces the shipped file and local.d whole.

import { ownValue, setOwn } from '../core/records.js';
import { describeValue, type ConfigIssue } from './errors.js';
import type { PositionMap, YamlSource } from './yaml-source.js';

export type PlainMap = Record<string, unknown>;

export function isPlainMap(v: unknown): v is PlainMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Maps merge recursively; anything else in `over` (lists, scalars, null) replaces `base`. Keys
 * are data (the YAML parser keeps a `__proto__` key as an own property): each is defined as an
 * own property and read as one, so a `__proto__` key is an entry the schema then sees (and
 * refuses), not a new prototype whose keys every lookup on the map would find.
 */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isPlainMap(base) || !isPlainMap(over)) return over;
  const out: PlainMap = { ...base };
  for (const [k, v] of Object.entries(over)) setOwn(out, k, deepMerge(ownValue(base, k), v));
  return out;
}

export interface LayeredDoc {
  /** The merged document (a map; `{}` when no layer exists). */
  value: PlainMap;
  positions: PositionMap;
  /** Files that contributed, in the order applied. */
  files: string[];
  /** File to blame for a value with no recorded position (defaults filled by the schema). */
  blame: string;
  issues: ConfigIssue[];
}

/**
 * Combines the layers of one logical file. `override` wins outright; otherwise `local` is
 * merged over `base`. Each layer must be a map at the top (or empty).
 */
export function layer(
  base: YamlSource | undefined,
  local: YamlSource | undefined,
  override: YamlSource | undefined,
  fallbackName: string,
): LayeredDoc {
  const layers = override ? [override] : [base, local].filter((s): s is YamlSource => s !== undefined);
  const issues: ConfigIssue[] = [];
  const positions: PositionMap = new Map();
  let value: PlainMap = {};
  for (const src of layers) {
    issues.push(...src.issues);
    if (src.issues.length || src.value === undefined || src.value === null) continue;
    if (!isPlainMap(src.value)) {
      issues.push({ file: src.file, path: '', expected: 'a map of settings at the top level', found: describeValue(src.value), line: 1, column: 1 });
      continue;
    }
    value = deepMerge(value, src.value) as PlainMap;
    for (const [k, p] of src.positions) positions.set(k, p);
  }
  return {
    value,
    positions,
    files: layers.map((l) => l.file),
    blame: layers.at(-1)?.file ?? fallbackName,
    issues,
  };
}
