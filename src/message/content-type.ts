// Structured header values: Content-Type and Content-Disposition with their parameters,
// including RFC 2231 continuations (`name*0=`, `name*1=`) and charset-tagged values
// (`name*=utf-8''%E2%82%AC`). Values here are bounded by the header line limit, so string
// work is fine.
import { decodeCharset } from './charset.js';
import { decodeEncodedWords, type EncodedWordBudget } from './encoded-words.js';
import { MAX_CONTENT_PARAMS } from './limits.js';
import type { ContentType } from './types.js';

export interface ParsedParams {
  /** The value before the first `;`, trimmed, lower-cased. */
  value: string;
  params: Record<string, string>;
  /** More than MAX_CONTENT_PARAMS parameters: the rest were not read. */
  tooManyParams?: boolean;
}

const TYPE_RE = /^[a-z0-9!#$%&'*+.^_`|~-]+\/[a-z0-9!#$%&'*+.^_`|~-]+$/;

const SEMICOLON = 0x3b;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Split on `;` outside double quotes: the leading value and at most `max` parameters after it;
 * `truncated` when there were more.
 */
function splitParams(value: string, max: number): { pieces: string[]; truncated: boolean } {
  const pieces: string[] = [];
  const n = value.length;
  let from = 0;
  let quoted = false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c === BACKSLASH && quoted) i++;
    else if (c === DQUOTE) quoted = !quoted;
    else if (c === SEMICOLON && !quoted) {
      pieces.push(value.slice(from, i));
      from = i + 1;
      if (pieces.length > max) return { pieces, truncated: from < n };
    }
  }
  pieces.push(value.slice(from));
  return { pieces, truncated: false };
}

function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) return t.slice(1, -1).replace(/\\(.)/g, '$1');
  // A stray opening quote with no closing one: keep the text, drop the quote.
  if (t.startsWith('"')) return t.slice(1);
  return t;
}

function percentBytes(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25 && i + 2 < s.length + 0 && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      out.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(c & 0xff);
  }
  return Buffer.from(out);
}

interface Segment {
  index: number;
  extended: boolean;
  text: string;
}

/**
 * Parse `value; a=b; c*=...` into a lower-cased leading value and decoded parameters (at most
 * MAX_CONTENT_PARAMS). `words`: the message's encoded-word budget.
 */
export function parseParams(header: string, words?: EncodedWordBudget): ParsedParams {
  const { pieces, truncated } = splitParams(header, MAX_CONTENT_PARAMS);
  const value = pieces[0]!.trim().toLowerCase();
  const params: Record<string, string> = {};
  const continued = new Map<string, Segment[]>();
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i]!;
    const eq = piece.indexOf('=');
    if (eq <= 0) continue;
    let name = piece.slice(0, eq).trim().toLowerCase();
    const raw = piece.slice(eq + 1);
    const m = /^([^*]+)\*(\d+)?(\*)?$/.exec(name);
    if (m) {
      name = m[1]!;
      const index = m[2] === undefined ? 0 : Number(m[2]);
      const extended = m[2] === undefined ? true : m[3] === '*';
      let list = continued.get(name);
      if (!list) continued.set(name, (list = []));
      list.push({ index, extended, text: extended ? raw.trim() : unquote(raw) });
      continue;
    }
    const v = unquote(raw);
    if (!(name in params)) params[name] = v.includes('=?') ? decodeEncodedWords(v, words) : v;
  }
  for (const [name, segs] of continued) {
    segs.sort((a, b) => a.index - b.index);
    let charset = '';
    const bytes: Buffer[] = [];
    segs.forEach((s, k) => {
      let text = s.text;
      if (s.extended && k === 0) {
        const q1 = text.indexOf("'");
        const q2 = q1 >= 0 ? text.indexOf("'", q1 + 1) : -1;
        if (q2 >= 0) {
          charset = text.slice(0, q1);
          text = text.slice(q2 + 1);
        }
      }
      bytes.push(s.extended ? percentBytes(unquote(text)) : Buffer.from(text, 'utf8'));
    });
    // RFC 2231 values override plain ones: they are the precise form.
    params[name] = decodeCharset(Buffer.concat(bytes), charset || 'utf-8').text;
  }
  return truncated ? { value, params, tooManyParams: true } : { value, params };
}

/** Content-Type header value (or undefined when absent) → ContentType. */
export function parseContentType(header: string | undefined, fallback = 'text/plain', words?: EncodedWordBudget): ContentType {
  if (header === undefined) return { type: fallback, params: {} };
  const { value, params, tooManyParams } = parseParams(header, words);
  let ct: ContentType;
  if (TYPE_RE.test(value)) ct = { type: value, params };
  // Bare `text` or `multipart` appear in the wild; keep what the sender meant.
  else if (value === 'text') ct = { type: 'text/plain', params, invalid: true };
  else ct = { type: fallback, params, invalid: true };
  if (tooManyParams) ct.tooManyParams = true;
  return ct;
}
