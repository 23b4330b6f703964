// The transforms. Each declares the types it accepts and, for string
// functions, `mapType`, so the pipeline (compile.ts) can map it over a list's elements.
// Where Rspamd 3.4 misbehaves on its own lazy lists (`sort` and `pack_numbers` saw an empty or
// unsorted list, `inverse` could never fire) we do what the documentation says.

import ipaddr from 'ipaddr.js';
import { getDomain } from 'tldts';
import { positional, strings, type CheckedArgs } from './args.js';
import { DIGEST_ENCODINGS, DIGEST_HASHES, digestOf, type DigestEncoding, type DigestHash } from './digest.js';
import { SelectorError } from './errors.js';
import type { Transform } from './functions.js';
import { isSelectorObject, listElemType, luaSub, type SelectorType, type Typed } from './values.js';

/** Matches plus captures one `regexp` transform returns for one input (a hostile header can match often). */
export const MAX_REGEXP_RESULTS = 1024;
/** Numbers `pack_numbers` packs from one list. */
export const MAX_PACKED_NUMBERS = 4096;

const ofString = (value: string | undefined): Typed | undefined => (value === undefined ? undefined : { value, type: 'string' });
const elemType = (t: SelectorType): SelectorType => (listElemType(t) ?? t) as SelectorType;
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const NUM = { kind: 'number' } as const;
const OPT_NUM = { kind: 'number', optional: true } as const;
const OPT_STR = { kind: 'string', optional: true } as const;

/** Characters of one input a `regexp` transform searches (a selector may run over a whole body). */
export const MAX_REGEXP_INPUT_CHARS = 256 * 1024;

/**
 * A repeated group that itself contains a repetition (`(a+)+`, `(\w*x?)*`): the shape that makes a
 * backtracking engine take exponential time. JavaScript has no match limit (PCRE has), and a
 * selector may come from a controller request, so such patterns are refused when compiled.
 */
export function hasNestedRepetition(source: string): boolean {
  const groups: boolean[] = [];
  let inClass = false;
  let lastClosedHadRepeat = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      i++;
      lastClosedHadRepeat = false;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    const repeat = c === '*' || c === '+' || (c === '{' && /^\{\d*,?\d*\}/.test(source.slice(i)));
    if (repeat) {
      if (lastClosedHadRepeat) return true;
      if (groups.length > 0) groups[groups.length - 1] = true;
      lastClosedHadRepeat = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') groups.push(false);
    else if (c === ')') {
      const had = groups.pop() ?? false;
      if (had && groups.length > 0) groups[groups.length - 1] = true;
      lastClosedHadRepeat = had;
      continue;
    }
    lastClosedHadRepeat = false;
  }
  return false;
}

/** `/pattern/flags` or a bare pattern, as Rspamd's regexp cache reads it; compiled once at load. */
function compileRegexp(text: string, name: string): RegExp {
  const m = /^\/(.*)\/([imsxurOL]*)$/s.exec(text);
  const source = m ? m[1]! : text;
  if (hasNestedRepetition(source)) {
    throw new SelectorError('ERR_SELECTOR_ARGS', `invalid arguments for ${name}: nested repetition in regexp (exponential backtracking)`);
  }
  const flags = new Set(['g', 'u']);
  for (const f of m?.[2] ?? '') if (f === 'i' || f === 's' || f === 'm') flags.add(f);
  try {
    return new RegExp(source, [...flags].join(''));
  } catch {
    try {
      flags.delete('u'); // PCRE accepts escapes the `u` flag rejects (`\-`, `\_`)
      return new RegExp(source, [...flags].join(''));
    } catch (err) {
      throw new SelectorError('ERR_SELECTOR_ARGS', `invalid arguments for ${name}: bad regexp: ${(err as Error).message}`);
    }
  }
}

function regexpSearch(re: RegExp, full: string): string[] | undefined {
  const input = full.length > MAX_REGEXP_INPUT_CHARS ? full.slice(0, MAX_REGEXP_INPUT_CHARS) : full;
  const out: string[] = [];
  re.lastIndex = 0;
  while (out.length < MAX_REGEXP_RESULTS) {
    const m = re.exec(input);
    if (!m) break;
    for (const g of m) if (g !== undefined) out.push(g);
    // An empty match must still move on, or the loop would find it forever.
    if (m[0] === '') {
      if (re.lastIndex >= input.length) break;
      re.lastIndex++;
    }
  }
  return out.length > 0 ? out.slice(0, MAX_REGEXP_RESULTS) : undefined;
}

function ipMask(input: string, v4: number, v6: number): string | undefined {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(input.replace(/^\[(.*)\]$/, '$1'));
  } catch {
    return undefined;
  }
  const bytes = addr.toByteArray();
  const bits = Math.max(0, Math.min(bytes.length * 8, Math.trunc(addr.kind() === 'ipv4' ? v4 : v6)));
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return ipaddr.fromByteArray(bytes).toString();
}

/** Lua `string.pack` codes for one number each; the result string holds one byte per char. */
function packNumbers(list: readonly string[], fmt: string): string | undefined {
  const nums = list.slice(0, MAX_PACKED_NUMBERS).map(Number);
  const parts: Buffer[] = [];
  for (const n of nums) {
    const v = Number.isFinite(n) ? n : 0;
    let b: Buffer;
    switch (fmt) {
      case 'f': b = Buffer.alloc(4); b.writeFloatLE(v); break;
      case 'd': case 'n': b = Buffer.alloc(8); b.writeDoubleLE(v); break;
      case 'b': b = Buffer.alloc(1); b.writeInt8(Math.max(-128, Math.min(127, Math.trunc(v)))); break;
      case 'B': b = Buffer.alloc(1); b.writeUInt8(Math.max(0, Math.min(255, Math.trunc(v)))); break;
      case 'h': b = Buffer.alloc(2); b.writeInt16LE(Math.max(-32768, Math.min(32767, Math.trunc(v)))); break;
      case 'H': b = Buffer.alloc(2); b.writeUInt16LE(Math.max(0, Math.min(65535, Math.trunc(v)))); break;
      case 'i': b = Buffer.alloc(4); b.writeInt32LE(Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(v)))); break;
      case 'I': b = Buffer.alloc(4); b.writeUInt32LE(Math.max(0, Math.min(2 ** 32 - 1, Math.trunc(v)))); break;
      case 'l': case 'j': b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(Math.trunc(Math.max(-(2 ** 63), Math.min(2 ** 63 - 1024, v))))); break;
      case 'L': case 'J': b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(Math.trunc(Math.max(0, Math.min(2 ** 64 - 2048, v))))); break;
      default: return undefined;
    }
    parts.push(b);
  }
  return Buffer.concat(parts).toString('latin1');
}

/** Whether a method's answer counts as true (Lua: anything but nil and false). */
function truthy(v: unknown): boolean {
  return v !== undefined && v !== null && v !== false && v !== 'false';
}

function mapRequired(name: string) {
  return (args: Parameters<NonNullable<Transform['args']>>[0]): CheckedArgs => positional({ kind: 'string' })(args, name);
}

export const TRANSFORMS: Readonly<Record<string, Transform>> = {
  lower: {
    description: 'Returns the lowercased string',
    types: ['string'],
    mapType: 'string',
    process: (v) => ofString((v as string).replace(/[A-Z]+/g, (s) => s.toLowerCase())),
  },
  lower_utf8: {
    description: 'Returns the lowercased utf8 string',
    types: ['string'],
    mapType: 'string',
    process: (v) => ofString((v as string).toLowerCase()),
  },
  first: {
    description: 'Returns the first element',
    types: ['list'],
    process: (v, t) => (asList(v).length === 0 ? undefined : { value: asList(v)[0], type: elemType(t) }),
  },
  last: {
    description: 'Returns the last element',
    types: ['list'],
    process: (v, t) => (asList(v).length === 0 ? undefined : { value: asList(v)[asList(v).length - 1], type: elemType(t) }),
  },
  nth: {
    description: 'Returns the nth element',
    types: ['list'],
    args: positional(NUM),
    process: (v, t, args) => {
      const i = Math.trunc(args[0] as number);
      const item = i >= 1 ? asList(v)[i - 1] : undefined;
      return item === undefined ? undefined : { value: item, type: elemType(t) };
    },
  },
  take_n: {
    description: 'Returns the n first elements',
    types: ['list'],
    args: positional(NUM),
    process: (v, t, args) => ({ value: asList(v).slice(0, Math.max(0, Math.trunc(args[0] as number))), type: t }),
  },
  drop_n: {
    description: 'Returns list without the first n elements',
    types: ['list'],
    args: positional(NUM),
    process: (v, t, args) => ({ value: asList(v).slice(Math.max(0, Math.trunc(args[0] as number))), type: t }),
  },
  join: {
    description: 'Joins strings into a single string using separator in the argument',
    types: ['string_list'],
    args: positional(OPT_STR),
    process: (v, _t, args) => ofString(asList(v).join((args[0] as string | undefined) ?? '')),
  },
  join_nth: {
    description: 'Joins strings into a set of strings using N elements and a separator in the argument',
    types: ['string_list'],
    args: positional(NUM, OPT_STR),
    process: (v, _t, args) => {
      const list = asList(v) as string[];
      const step = Math.max(1, Math.trunc(args[0] as number));
      const out: string[] = [];
      for (let i = 0; i < list.length; i += step) out.push(list.slice(i, i + step).join((args[1] as string | undefined) ?? ''));
      return { value: out, type: 'string_list' };
    },
  },
  join_tables: {
    description: 'Joins tables into a table of strings',
    types: ['list'],
    args: positional(OPT_STR),
    process: (v, _t, args) => ({
      value: asList(v).map((e) => (Array.isArray(e) ? e.join((args[0] as string | undefined) ?? '') : String(e))),
      type: 'string_list',
    }),
  },
  sort: {
    description: 'Sort strings lexicographically',
    types: ['list'],
    process: (v, t) => ({ value: [...asList(v)].sort((a, b) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0)), type: t }),
  },
  uniq: {
    description: 'Returns a list of unique elements (using a hash table)',
    types: ['list'],
    process: (v, t) => {
      const seen = new Set<string>();
      const out: unknown[] = [];
      for (const e of asList(v)) {
        const k = String(e);
        if (!seen.has(k)) {
          seen.add(k);
          out.push(e);
        }
      }
      return { value: out, type: t };
    },
  },
  digest: {
    description: 'Create a digest from a string. The first argument is encoding (`hex`, `base32` (and forms `bleach32`, `rbase32`), `base64`), the second argument is optional hash type (`blake2`, `sha256`, `sha1`, `sha512`, `md5`)',
    types: ['string'],
    mapType: 'string',
    args: positional({ kind: 'words', words: DIGEST_ENCODINGS, optional: true }, { kind: 'words', words: DIGEST_HASHES, optional: true }),
    process: (v, _t, args) => ofString(digestOf(Buffer.from(v as string, 'utf8'), args[0] as DigestEncoding | undefined, args[1] as DigestHash | undefined)),
  },
  substring: {
    description: 'Extracts substring; the first argument is start, the second is the last (like in Lua)',
    types: ['string'],
    mapType: 'string',
    args: positional(OPT_NUM, OPT_NUM),
    process: (v, _t, args) => ofString(luaSub(v as string, (args[0] as number | undefined) ?? 1, (args[1] as number | undefined) ?? -1)),
  },
  prepend: {
    description: 'Prepends a string or a strings list',
    types: ['string'],
    mapType: 'string',
    args: strings,
    process: (v, _t, args) => ofString(args.join('') + (v as string)),
  },
  append: {
    description: 'Appends a string or a strings list',
    types: ['string'],
    mapType: 'string',
    args: strings,
    process: (v, _t, args) => ofString((v as string) + args.join('')),
  },
  regexp: {
    description: 'Regexp matching, returns all matches flattened in a single list',
    types: ['string'],
    mapType: 'string',
    args: (args, name) => {
      const [text] = positional({ kind: 'string' })(args, name);
      return [text, compileRegexp(text as string, name) as never];
    },
    process: (v, _t, args) => {
      const found = regexpSearch(args[1] as unknown as RegExp, v as string);
      return found ? { value: found, type: 'string_list' } : undefined;
    },
  },
  filter_map: {
    description: 'Returns a value if it exists in some map (or acts like a `filter` function)',
    types: ['string'],
    mapType: 'string',
    args: mapRequired('filter_map'),
    process: (v, _t, args, env) => (env.map?.(args[0] as string)?.get(v as string) !== undefined ? ofString(v as string) : undefined),
  },
  except_map: {
    description: 'Returns a value if it does not exists in some map (or acts like a `except` function)',
    types: ['string'],
    mapType: 'string',
    args: mapRequired('except_map'),
    process: (v, _t, args, env) => {
      const map = env.map?.(args[0] as string);
      if (!map) return undefined;
      return map.get(v as string) === undefined ? ofString(v as string) : undefined;
    },
  },
  apply_map: {
    description: 'Returns a value from some map corresponding to some key (or acts like a `map` function)',
    types: ['string'],
    mapType: 'string',
    args: mapRequired('apply_map'),
    process: (v, _t, args, env) => ofString(env.map?.(args[0] as string)?.get(v as string)),
  },
  id: {
    description: "Drops input value and return values from function's arguments or an empty string",
    types: ['string', 'list'],
    mapType: 'string',
    args: strings,
    process: (_v, _t, args) => (args.length >= 2 ? { value: args.map(String), type: 'string_list' } : ofString((args[0] as string | undefined) ?? '')),
  },
  equal: {
    description: 'Boolean function equal. Returns either nil or its argument if input is equal to argument',
    types: ['string'],
    mapType: 'string',
    args: positional({ kind: 'string' }),
    process: (v, _t, args) => (v === args[0] ? ofString(v as string) : undefined),
  },
  in: {
    description: 'Boolean function in. Returns either nil or its input if input is in args list',
    types: ['string'],
    mapType: 'string',
    args: strings,
    process: (v, _t, args) => (args.includes(v as string) ? ofString(v as string) : undefined),
  },
  not_in: {
    description: 'Boolean function not in. Returns either nil or its input if input is not in args list',
    types: ['string'],
    mapType: 'string',
    args: strings,
    process: (v, _t, args) => (args.includes(v as string) ? undefined : ofString(v as string)),
  },
  inverse: {
    description: "Inverses input. Empty string comes the first argument or 'true', non-empty string comes nil",
    types: ['string'],
    mapType: 'string',
    args: positional(OPT_STR),
    process: (v, _t, args) => ((v as string) === '' ? ofString((args[0] as string | undefined) ?? 'true') : undefined),
  },
  ipmask: {
    description: 'Applies mask to IP address. The first argument is the mask for IPv4 addresses, the second is the mask for IPv6 addresses.',
    types: ['string'],
    mapType: 'string',
    args: positional(NUM, OPT_NUM),
    process: (v, _t, args) => ofString(ipMask(v as string, args[0] as number, (args[1] as number | undefined) ?? (args[0] as number))),
  },
  to_ascii: {
    description: 'Returns the string with all non-ascii bytes replaced with the character given as second argument or `?`',
    types: ['string', 'list'],
    mapType: 'string',
    args: positional(OPT_STR),
    process: (v, _t, args) => {
      const rep = (args[0] as string | undefined) ?? '?';
      // Per byte, as Rspamd's `[\128-\255]` pattern: a two-byte UTF-8 letter gives two marks.
      const one = (s: string): string => s.replace(/[^\x00-\x7f]/gu, (ch) => rep.repeat(Buffer.byteLength(ch, 'utf8')));
      return Array.isArray(v) ? { value: v.map((s) => one(String(s))), type: 'string_list' } : ofString(one(v as string));
    },
  },
  get_tld: {
    description: 'Returns effective second-level domain (eSLD) using the Public Suffix List',
    types: ['string'],
    mapType: 'string',
    args: positional(),
    process: (v) => ofString(getDomain(v as string, { allowPrivateDomains: false }) ?? (v as string)),
  },
  pack_numbers: {
    description: 'Converts a list of strings to numbers & returns a packed string',
    types: ['string_list'],
    mapType: 'string',
    args: positional({ kind: 'words', words: ['f', 'd', 'n', 'b', 'B', 'h', 'H', 'i', 'I', 'l', 'L', 'j', 'J'], optional: true }),
    process: (v, _t, args) => ofString(packNumbers(asList(v) as string[], (args[0] as string | undefined) ?? 'f')),
  },
  filter_string_nils: {
    description: 'Removes all nils from a list of strings (when converted implicitly)',
    types: ['string_list'],
    args: positional(),
    process: (v) => ({ value: asList(v).filter((s) => typeof s === 'string' && s !== 'nil'), type: 'string_list' }),
  },
  apply_methods: {
    description: 'Apply a list of method calls to the userdata object',
    types: ['userdata'],
    args: strings,
    process: (v, _t, args) => {
      if (!isSelectorObject(v)) return undefined;
      const out: string[] = [];
      for (const m of args) {
        const r = v.call(String(m), []);
        if (truthy(r)) out.push(String(r));
      }
      return { value: out, type: 'string_list' };
    },
  },
  filter_method: {
    description: 'Apply method to list of userdata and use it as a filter, excluding elements for which method returns false/nil',
    types: ['userdata_list'],
    args: positional({ kind: 'string' }),
    process: (v, _t, args) => ({ value: asList(v).filter((o) => isSelectorObject(o) && truthy(o.call(args[0] as string, []))), type: 'userdata_list' }),
  },
};

/** Rspamd's alias. */
(TRANSFORMS as Record<string, Transform>).match = TRANSFORMS.regexp!;
