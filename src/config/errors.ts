// Configuration problems as data. Loading collects every issue it can find before failing,
// so an administrator fixes a config in one round instead of one error per restart.

export interface ConfigIssue {
  /** The file the offending value came from (as given to the loader, e.g. `conf/local.d/mailsift.yaml`). */
  file: string;
  /** Key path inside the merged document, e.g. `workers.normal.max_message`; '' for the document itself. */
  path: string;
  /** What the value should have been (`a non-negative size`, `one of: json, text`). */
  expected: string;
  /** What was there, rendered short (`-1`, `"abc"`, `a map`), or '' when not applicable. */
  found: string;
  line?: number;
  column?: number;
}

export const CONFIG_ERROR_CODE = 'MS_CONFIG_INVALID';

/** Thrown by loadConfig when any file is invalid; carries every issue found. */
export class ConfigError extends Error {
  readonly code = CONFIG_ERROR_CODE;
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    const sorted = sortIssues(issues);
    super(formatIssues(sorted));
    this.issues = sorted;
    this.name = 'ConfigError';
  }
}

export function isConfigError(err: unknown): err is ConfigError {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === CONFIG_ERROR_CODE;
}

/** File by file, top to bottom: the order an administrator fixes them in. */
export function sortIssues(issues: readonly ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

/** `file:line:col: path: expected X, found Y` — one line per issue, grep- and editor-friendly. */
export function formatIssue(i: ConfigIssue): string {
  const where = i.line !== undefined ? `${i.file}:${i.line}:${i.column ?? 1}` : i.file;
  const key = i.path ? ` ${i.path}:` : '';
  const found = i.found ? `, found ${i.found}` : '';
  return `${where}:${key} expected ${i.expected}${found}`;
}

export function formatIssues(issues: readonly ConfigIssue[]): string {
  return issues.map(formatIssue).join('\n');
}

const MAX_FOUND_CHARS = 60; // keeps one issue on one terminal line even for a pasted blob

/** A short human rendering of a value for the "found" part of an issue. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `a list (${v.length} item${v.length === 1 ? '' : 's'})`;
  if (typeof v === 'object') return 'a map';
  const s = typeof v === 'string' ? JSON.stringify(v) : String(v);
  return s.length > MAX_FOUND_CHARS ? `${s.slice(0, MAX_FOUND_CHARS)}…` : s;
}

/** Display form of a key path: `workers.normal.zstd.input_dictionaries[0].id`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}
