// Reads one YAML config file keeping where every key and value sits, so an issue found later
// (after merging and schema validation) can still point at `file:line:column`.

import { readFile } from 'node:fs/promises';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { formatPath, type ConfigIssue } from './errors.js';

export interface Position {
  file: string;
  line: number;
  column: number;
}

/** Path key → position of the value (and of the key, under `key:` prefix). */
export type PositionMap = Map<string, Position>;

export function pathKey(path: ReadonlyArray<PropertyKey>, ofKey = false): string {
  return (ofKey ? 'key:' : 'val:') + path.map(String).join('\u0000');
}

export interface YamlSource {
  file: string;
  /** The plain value; undefined for an empty file. */
  value: unknown;
  positions: PositionMap;
  issues: ConfigIssue[];
}

/** Parses YAML text; syntax errors become issues with line numbers (the value is then undefined). */
export function parseYamlSource(file: string, text: string): YamlSource {
  const lc = new LineCounter();
  // uniqueKeys (the default) makes a key written twice an error instead of a silent override.
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true });
  const positions: PositionMap = new Map();
  const issues: ConfigIssue[] = [];
  for (const e of doc.errors) {
    const lp = e.linePos?.[0];
    issues.push({
      file,
      path: '',
      expected: 'valid YAML',
      found: (e.message.split('\n')[0] ?? e.code).replace(/ at line \d+, column \d+:?$/, ''),
      ...(lp ? { line: lp.line, column: lp.col } : {}),
    });
  }
  if (issues.length) return { file, value: undefined, positions, issues };

  const at = (offset: number): Position => {
    const p = lc.linePos(offset);
    return { file, line: p.line, column: p.col };
  };
  const lineCol = (offset: number): { line: number; column: number } => {
    const p = lc.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const walk = (node: unknown, path: PropertyKey[]): void => {
    const n = node as Node | null;
    if (n?.range) positions.set(pathKey(path), at(n.range[0]));
    if (isMap(n)) {
      for (const pair of n.items) {
        const k = isScalar(pair.key) ? pair.key.value : pair.key;
        const seg = String(k);
        const keyNode = pair.key as Node | null;
        if (keyNode?.range) positions.set(pathKey([...path, seg], true), at(keyNode.range[0]));
        // No setting, module, group or symbol is called `__proto__`; in JavaScript the key is
        // also the object's prototype, which schemas drop without a word where any name is allowed.
        if (seg === '__proto__') {
          issues.push({ file, path: formatPath([...path, seg]), expected: 'a key other than __proto__', found: '"__proto__"', ...(keyNode?.range ? lineCol(keyNode.range[0]) : {}) });
        }
        walk(pair.value, [...path, seg]);
      }
    } else if (isSeq(n)) {
      n.items.forEach((item, i) => walk(item, [...path, i]));
    }
  };
  walk(doc.contents, []);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    issues.push({ file, path: '', expected: 'valid YAML', found: (err as Error).message });
  }
  return { file, value: value ?? undefined, positions, issues };
}

/** Reads a file if it exists; a missing file is `undefined`, not an error (layers are optional). */
export async function readYamlSource(file: string, displayName = file): Promise<YamlSource | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return {
      file: displayName,
      value: undefined,
      positions: new Map(),
      issues: [{ file: displayName, path: '', expected: 'a readable file', found: (err as Error).message }],
    };
  }
  return parseYamlSource(displayName, text);
}
