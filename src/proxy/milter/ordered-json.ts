// A JSON reader that keeps object keys in document order. The verdict depends on it: the
// `remove_headers` and `add_headers` objects of a scan result are applied in the order the
// scanner wrote them (Rspamd iterates its UCL objects in insertion order), and JSON.parse moves
// keys that look like array indices ("1", "42") to the front. Objects become Maps; a repeated
// key keeps its first position and its last value (JSON.parse's value rule).

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = Map<string, JsonValue>;

/** Nesting deeper than any scan result; stops a hostile reply from exhausting the stack. */
export const MAX_JSON_DEPTH = 64;

export class JsonSyntaxError extends Error {
  constructor(message: string, at: number) {
    super(`${message} at offset ${at}`);
    this.name = 'JsonSyntaxError';
  }
}

export interface ParseOptions {
  /**
   * Top-level keys whose values are wanted; others are checked for syntax but not built (a
   * scan result's `symbols` is most of its bytes and the milter never reads it).
   */
  keepTopLevel?: ReadonlySet<string>;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Reader {
  readonly s: string;
  i = 0;
  constructor(s: string) {
    this.s = s;
  }

  fail(msg: string): never {
    throw new JsonSyntaxError(msg, this.i);
  }

  ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.i = i;
  }

  value(depth: number, build: boolean): JsonValue {
    if (depth > MAX_JSON_DEPTH) this.fail('nesting too deep');
    this.ws();
    const c = this.s.charCodeAt(this.i);
    switch (c) {
      case 0x7b: // {
        return this.object(depth, build, undefined);
      case 0x5b: // [
        return this.array(depth, build);
      case 0x22: // "
        return this.string();
      case 0x74: // t
        return this.literal('true', true);
      case 0x66: // f
        return this.literal('false', false);
      case 0x6e: // n
        return this.literal('null', null);
      default:
        return this.number();
    }
  }

  literal<T extends JsonValue>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail('unexpected token');
    this.i += word.length;
    return v;
  }

  number(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail('unexpected token');
    this.i += m[0].length;
    return Number(m[0]);
  }

  string(): string {
    const s = this.s;
    let i = this.i + 1; // past the opening quote
    let out = '';
    let runStart = i;
    for (;;) {
      if (i >= s.length) {
        this.i = i;
        this.fail('unterminated string');
      }
      const c = s.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) {
        this.i = i;
        this.fail('control character in string');
      }
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += s.slice(runStart, i);
      const e = s[i + 1];
      i += 2;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          const hex = s.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            this.i = i;
            this.fail('bad \\u escape');
          }
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          this.i = i - 1;
          this.fail('bad escape');
      }
      runStart = i;
    }
    out += s.slice(runStart, i);
    this.i = i + 1;
    return out;
  }

  array(depth: number, build: boolean): JsonValue[] {
    this.i++; // [
    const out: JsonValue[] = [];
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return out;
    }
    // Each element consumes at least one character, so the input length bounds this loop.
    for (;;) {
      const v = this.value(depth + 1, build);
      if (build) out.push(v);
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x5d) return out;
      if (c !== 0x2c) {
        this.i--;
        this.fail("expected ',' or ']'");
      }
    }
  }

  object(depth: number, build: boolean, keep: ReadonlySet<string> | undefined): JsonObject {
    this.i++; // {
    const out: JsonObject = new Map();
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x22) this.fail('expected a key');
      const key = this.string();
      this.ws();
      if (this.s.charCodeAt(this.i++) !== 0x3a) {
        this.i--;
        this.fail("expected ':'");
      }
      const wanted = build && (keep === undefined || keep.has(key));
      const v = this.value(depth + 1, wanted);
      if (wanted) out.set(key, v);
      this.ws();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x7d) return out;
      if (c !== 0x2c) {
        this.i--;
        this.fail("expected ',' or '}'");
      }
    }
  }
}

export function parseOrderedJson(text: string, opts: ParseOptions = {}): JsonValue {
  const r = new Reader(text);
  r.ws();
  let v: JsonValue;
  if (opts.keepTopLevel && r.s.charCodeAt(r.i) === 0x7b) v = r.object(0, true, opts.keepTopLevel);
  else v = r.value(0, true);
  r.ws();
  if (r.i !== text.length) r.fail('trailing characters');
  return v;
}

export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return v instanceof Map;
}
