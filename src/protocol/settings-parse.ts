// The `Settings` request header: Rspamd parses it with UCL, so both JSON and UCL's relaxed
// syntax (`actions { reject = 1; } subject = "[UCL] %s"`) occur in the wild. JSON takes the
// fast path; anything else goes through a small lenient reader. Unparsable → undefined.

/** Nesting depth accepted in a settings value; protects the recursive reader's stack. */
const MAX_SETTINGS_DEPTH = 32;

export function parseSettingsValue(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (t.length === 0) return undefined;
  if (t[0] === '{') {
    try {
      const v: unknown = JSON.parse(t);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
      return undefined;
    } catch {
      // Not strict JSON; UCL below also accepts `{ ... }` with relaxed syntax.
    }
  }
  try {
    const r = new UclReader(t);
    const obj = r.readTopLevel();
    return obj;
  } catch {
    return undefined;
  }
}

class UclReader {
  #s: string;
  #i = 0;
  constructor(s: string) {
    this.#s = s;
  }

  readTopLevel(): Record<string, unknown> {
    this.#ws();
    if (this.#s[this.#i] === '{') {
      const o = this.#object(0);
      this.#ws();
      if (this.#i < this.#s.length) throw new Error('trailing data');
      return o;
    }
    const o = this.#members(0, undefined);
    return o;
  }

  #ws(): void {
    const s = this.#s;
    while (this.#i < s.length) {
      const c = s[this.#i]!;
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
        this.#i++;
      } else if (c === '#') {
        while (this.#i < s.length && s[this.#i] !== '\n') this.#i++;
      } else {
        break;
      }
    }
  }

  #members(depth: number, close: string | undefined): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (;;) {
      this.#ws();
      if (this.#i >= this.#s.length) {
        if (close) throw new Error('unterminated object');
        return out;
      }
      if (close && this.#s[this.#i] === close) {
        this.#i++;
        return out;
      }
      const key = this.#key();
      this.#ws();
      const c = this.#s[this.#i];
      if (c === '=' || c === ':') {
        this.#i++;
        this.#ws();
      } else if (c !== '{' && c !== '[') {
        throw new Error(`expected value for ${key}`);
      }
      const value = this.#value(depth + 1);
      // Own keys only: `__proto__` is a key like any other here, as it is for JSON.parse. Reading
      // `out[key]` would return Object.prototype for it and the merge below would write into it.
      const prev = Object.hasOwn(out, key) ? out[key] : undefined;
      // UCL merges repeated object keys (the later value wins for a scalar).
      if (prev !== undefined && isObject(prev) && isObject(value)) for (const [k, v] of Object.entries(value)) setOwn(prev, k, v);
      else setOwn(out, key, value);
      this.#ws();
      const sep = this.#s[this.#i];
      if (sep === ';' || sep === ',') this.#i++;
    }
  }

  #key(): string {
    const s = this.#s;
    const q = s[this.#i];
    if (q === '"' || q === "'") return this.#string();
    const start = this.#i;
    while (this.#i < s.length && /[A-Za-z0-9_\-./@*]/.test(s[this.#i]!)) this.#i++;
    if (this.#i === start) throw new Error('expected key');
    return s.slice(start, this.#i);
  }

  #object(depth: number): Record<string, unknown> {
    if (depth > MAX_SETTINGS_DEPTH) throw new Error('too deep');
    this.#i++; // '{'
    return this.#members(depth, '}');
  }

  #array(depth: number): unknown[] {
    if (depth > MAX_SETTINGS_DEPTH) throw new Error('too deep');
    this.#i++; // '['
    const out: unknown[] = [];
    for (;;) {
      this.#ws();
      if (this.#i >= this.#s.length) throw new Error('unterminated array');
      if (this.#s[this.#i] === ']') {
        this.#i++;
        return out;
      }
      out.push(this.#value(depth + 1));
      this.#ws();
      const sep = this.#s[this.#i];
      if (sep === ',' || sep === ';') this.#i++;
    }
  }

  #value(depth: number): unknown {
    const c = this.#s[this.#i];
    if (c === '{') return this.#object(depth);
    if (c === '[') return this.#array(depth);
    if (c === '"' || c === "'") return this.#string();
    const s = this.#s;
    const start = this.#i;
    while (this.#i < s.length && !/[;,\]}\r\n#]/.test(s[this.#i]!)) this.#i++;
    const word = s.slice(start, this.#i).trim();
    if (word.length === 0) throw new Error('empty value');
    switch (word.toLowerCase()) {
      case 'true':
      case 'yes':
      case 'on':
        return true;
      case 'false':
      case 'no':
      case 'off':
        return false;
      case 'null':
        return null;
    }
    if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(word)) return Number(word);
    return word;
  }

  #string(): string {
    const s = this.#s;
    const q = s[this.#i]!;
    this.#i++;
    let out = '';
    while (this.#i < s.length) {
      const c = s[this.#i]!;
      if (c === '\\' && this.#i + 1 < s.length) {
        const n = s[this.#i + 1]!;
        out += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n;
        this.#i += 2;
        continue;
      }
      if (c === q) {
        this.#i++;
        return out;
      }
      out += c;
      this.#i++;
    }
    throw new Error('unterminated string');
  }
}

/** Assignment that defines an own property even for `__proto__` (plain `o[k] = v` would re-parent `o`). */
function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
