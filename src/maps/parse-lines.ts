// The line format shared by every map kind: `key [whitespace value]`, `#`
// comments (also after a value) unless written `\#`, quoted keys with backslash escapes, and
// `/pattern/flags` keys for regexp maps. Pure: text in, entries out.

export interface MapEntry {
  key: string;
  /** Absent when the line has only a key (the map's default value then applies). */
  value?: string;
  /** Set for `/pattern/flags` keys: the pattern and its flags, without the slashes. */
  regexp?: { source: string; flags: string };
  /** 1-based line number, for load warnings. */
  line: number;
}

/** A longer line is not a map entry but garbage (or an attack on the loader); it is skipped. */
export const MAX_MAP_LINE_BYTES = 64 * 1024;

/** Cut a `#` comment, keeping `\#` as a literal `#`. */
function stripComment(line: string): string {
  let out = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && line[i + 1] === '#') {
      out += '#';
      i++;
      continue;
    }
    if (c === '#') break;
    out += c;
  }
  return out;
}

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t';
}

/** A quoted key: returns the key and the index after the closing quote, or undefined if unterminated. */
function readQuoted(s: string): { key: string; end: number } | undefined {
  let key = '';
  for (let i = 1; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      key += s[++i];
      continue;
    }
    if (c === '"') return { key, end: i + 1 };
    key += c;
  }
  return undefined;
}

/** `/pattern/flags`: the pattern runs to the last `/` before the first whitespace. */
function readRegexpKey(s: string): { source: string; flags: string; end: number } | undefined {
  let ws = 0;
  while (ws < s.length && !isSpace(s[ws])) ws++;
  const token = s.slice(0, ws);
  const last = token.lastIndexOf('/');
  if (last <= 0) return undefined;
  const flags = token.slice(last + 1);
  if (!/^[a-zA-Z]*$/.test(flags)) return undefined;
  return { source: token.slice(1, last), flags, end: ws };
}

export function parseMapText(text: string, opts: { regexpKeys?: boolean } = {}): MapEntry[] {
  const entries: MapEntry[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!;
    if (raw.length > MAX_MAP_LINE_BYTES) continue;
    const line = stripComment(raw).trim();
    if (line === '') continue;
    let key: string;
    let rest: string;
    let regexp: MapEntry['regexp'];
    if (line[0] === '"') {
      const q = readQuoted(line);
      if (!q) continue;
      key = q.key;
      rest = line.slice(q.end);
    } else if (opts.regexpKeys && line[0] === '/' && readRegexpKey(line)) {
      const r = readRegexpKey(line)!;
      regexp = { source: r.source, flags: r.flags };
      key = line.slice(0, r.end);
      rest = line.slice(r.end);
    } else {
      let i = 0;
      while (i < line.length && !isSpace(line[i])) i++;
      key = line.slice(0, i);
      rest = line.slice(i);
    }
    const value = rest.trim();
    const e: MapEntry = { key, line: n + 1 };
    if (value !== '') e.value = value;
    if (regexp) e.regexp = regexp;
    entries.push(e);
  }
  return entries;
}
