// Turns zod's validation issues into ConfigIssues: file and line from the YAML positions,
// the key path in config spelling, what was expected in words, and what was found.

import type { ZodType, core } from 'zod';
import { describeValue, formatPath, type ConfigIssue } from './errors.js';
import type { LayeredDoc } from './merge.js';
import { allowedKeys, didYouMean } from './suggest.js';
import { pathKey } from './yaml-source.js';

type ZodIssue = core.$ZodIssue;
type Path = PropertyKey[];

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  object: 'a map',
  record: 'a map',
  array: 'a list',
  null: 'null',
};

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = root;
  for (const seg of path) {
    // A lone value where a list is accepted (`servers: "a:1"`) is that list's item 0.
    if (typeof v !== 'object' || v === null) return seg === 0 ? v : undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function expectedWords(issue: ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_WORDS[issue.expected] ?? issue.expected;
    case 'too_small': {
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'a non-empty string';
      const op = issue.inclusive === false ? '>' : '>=';
      return issue.origin === 'array' ? `a list of ${op} ${issue.minimum} items` : `a number ${op} ${issue.minimum}`;
    }
    case 'too_big': {
      const op = issue.inclusive === false ? '<' : '<=';
      return issue.origin === 'array' ? `a list of ${op} ${issue.maximum} items` : `a number ${op} ${issue.maximum}`;
    }
    case 'invalid_value':
      return issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return unionWords(issue.errors);
    default:
      return issue.message;
  }
}

/** Above this many allowed names, a suggestion replaces the list (a list is kept when there is none). */
const MAX_LISTED_WITH_HINT = 8;

/** What was expected, with ` (did you mean "x"?)` when a string is a near miss of an allowed name. */
function expectedWithHint(issue: ZodIssue, found: unknown): string {
  const words = expectedWords(issue);
  if (issue.code !== 'invalid_value' || typeof found !== 'string') return words;
  const hint = didYouMean(found, issue.values.filter((v): v is string => typeof v === 'string'));
  if (hint === undefined) return words;
  return issue.values.length > MAX_LISTED_WITH_HINT ? `one of ${issue.values.length} names (did you mean "${hint}"?)` : `${words} (did you mean "${hint}"?)`;
}

function unionWords(branches: ZodIssue[][]): string {
  const words = new Set<string>();
  for (const b of branches) for (const i of b) if (i.path.length === 0) words.add(expectedWords(i));
  return [...words].join(' or ') || 'a valid value';
}

/**
 * A union whose branch got past the type check (its issues sit deeper than the union)
 * reports that branch's issues: `{threshold: "x"}` is about `threshold`, not "number or map".
 */
function deepestBranch(branches: ZodIssue[][]): ZodIssue[] | undefined {
  return branches.find((b) => b.some((i) => i.path.length > 0));
}

/**
 * `rootKeys`: keys the file may hold at its top besides the schema's (a module file's `enabled`,
 * taken off before its schema sees the rest), offered as suggestions too.
 */
export function toConfigIssues(schema: ZodType, doc: LayeredDoc, issues: readonly ZodIssue[], rootKeys: readonly string[] = [], prefix: Path = []): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const locate = (path: Path, ofKey: boolean): Pick<ConfigIssue, 'file' | 'line' | 'column'> => {
    // Walk up to the nearest recorded node: a missing key is reported at its parent map.
    for (let n = path.length; n >= 0; n--) {
      const p = doc.positions.get(pathKey(path.slice(0, n), ofKey && n === path.length));
      if (p) return { file: p.file, line: p.line, column: p.column };
    }
    return { file: doc.blame };
  };
  for (const issue of issues) {
    const path: Path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      const allowed = [...allowedKeys(schema, path), ...(path.length === 0 ? rootKeys : [])];
      for (const key of issue.keys) {
        const hint = didYouMean(key, allowed);
        out.push({
          ...locate([...path, key], true),
          path: formatPath([...path, key]),
          expected: hint ? `a known key (did you mean "${hint}"?)` : `one of the known keys${allowed.length ? `: ${allowed.join(', ')}` : ''}`,
          found: `unknown key "${key}"`,
        });
      }
      continue;
    }
    if (issue.code === 'invalid_union') {
      const branch = deepestBranch(issue.errors);
      if (branch) {
        out.push(...toConfigIssues(schema, doc, branch, rootKeys, path));
        continue;
      }
    }
    const found = valueAt(doc.value, path);
    out.push({ ...locate(path, false), path: formatPath(path), expected: expectedWithHint(issue, found), found: describeValue(found) });
  }
  return out;
}
