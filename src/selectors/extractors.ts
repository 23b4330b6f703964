// The extractors: each takes one kind of fact out of the task and says its
// type. No value (absent header, no attachments, no user) is `undefined`, which makes the whole
// selector yield nothing. Facts Rspamd 3.4 falls back on when the request did not give them are
// kept: the sender IP comes from the first Received hop, the SMTP sender from Return-Path.

import { hostname as osHostname } from 'node:os';
import { getDomain } from 'tldts';
import type { EmailAddress, FoundUrl, MessageHeader, ReceivedHop, TextPart } from '../message/types.js';
import { parseEnvelopeAddress } from '../message/addresses.js';
import { MAX_WORDS, normaliseWord, stemmedWords, stripExceptions } from '../rule-libs/fuzzy/words.js';
import { DEFAULT_KEYS, shingles, textDigest } from '../rule-libs/fuzzy/digest.js';
import { positional, strings, tableFields, type CheckedArgs } from './args.js';
import { DIGEST_ENCODINGS, DIGEST_HASHES, digestOf, type DigestEncoding, type DigestHash } from './digest.js';
import type { Extractor } from './functions.js';
import type { SelectorArg } from './parse.js';
import type { SelectorEnv, SelectorTask } from './task.js';
import { EmailObject, IpObject, UrlObject, type SelectorTable, type Typed } from './values.js';
import { strftime } from './strftime.js';

/** Key of the task cache entry holding task variables (Rspamd's mempool variables). */
export const POOL_VARS_KEY = 'selectors:pool_vars';

/** Sets a task variable that `pool_var`, `country` and `asn` read (e.g. an ASN lookup's result). */
export function setPoolVar(task: Pick<SelectorTask, 'cache'>, name: string, value: string): void {
  let vars = task.cache.get(POOL_VARS_KEY) as Map<string, string> | undefined;
  if (!vars) task.cache.set(POOL_VARS_KEY, (vars = new Map()));
  vars.set(name, value);
}

function poolVar(task: SelectorTask, name: string): string | undefined {
  return (task.cache.get(POOL_VARS_KEY) as Map<string, string> | undefined)?.get(name);
}

const str = (value: string | undefined): Typed | undefined => (value === undefined ? undefined : { value, type: 'string' });
const strList = (value: string[]): Typed | undefined => (value.length === 0 ? undefined : { value, type: 'string_list' });

const DIGEST_ARGS = positional({ kind: 'words', words: DIGEST_ENCODINGS, optional: true }, { kind: 'words', words: DIGEST_HASHES, optional: true });
const ADDRESS_ARGS = (args: SelectorArg[], name: string): CheckedArgs => {
  strings(args, name);
  for (const a of args) if (!['smtp', 'mime', 'any', 'orig', 'envelope', 'rfc5322'].includes(a as string)) positional()([a], name);
  return args;
};

/**
 * Rspamd's address table: what `:addr`, `:domain`, `:user`, `:name` read. Rspamd keeps the
 * domain's case as written; the message parser lower-cases it, so the written form is looked up
 * in the text the address came from.
 */
function addressTable(a: EmailAddress, source: readonly string[]): SelectorTable {
  let addr = a.address;
  const needle = a.address.toLowerCase();
  for (const text of source) {
    const i = text.toLowerCase().indexOf(needle);
    if (i >= 0 && needle !== '') {
      addr = text.slice(i, i + needle.length);
      break;
    }
  }
  const at = addr.lastIndexOf('@');
  const domain = at >= 0 ? addr.slice(at + 1) : a.domain;
  return { addr, user: a.local, domain, name: a.name, raw: addr, flags: { valid: !a.invalid } };
}

function headerTexts(task: SelectorTask, ...names: string[]): string[] {
  return names.flatMap((n) => task.message.headers.get(n).map((h) => h.raw));
}

function wants(args: CheckedArgs): 'smtp' | 'mime' | 'any' {
  if (args.includes('smtp') || args.includes('envelope')) return 'smtp';
  if (args.includes('mime') || args.includes('rfc5322')) return 'mime';
  return 'any';
}

function smtpFrom(task: SelectorTask): EmailAddress | undefined {
  const from = task.envelopeFrom;
  if (from && from.address !== '') return from;
  // 3.4 takes the SMTP sender from Return-Path when the request gave none.
  const rp = task.message.headers.first('return-path')?.value;
  const parsed = rp === undefined ? undefined : parseEnvelopeAddress(rp);
  return parsed && parsed.address !== '' ? parsed : undefined;
}

function mimeRcpts(task: SelectorTask): EmailAddress[] {
  return [...task.message.to, ...task.message.cc].filter((a) => a.address !== '');
}

/** `task:get_from_ip()`: the request's IP or, without one, the top Received's (src/engine/received-client.ts). */
function senderIp(task: SelectorTask): string | undefined {
  return task.meta.ip;
}

/** Web URLs as `task:get_urls()` gives them: no e-mail addresses, no images. */
function webUrls(task: SelectorTask): FoundUrl[] {
  return task.message.urls.filter((u) => !u.isEmail && !u.flags.has('image'));
}

function hopTable(h: ReceivedHop): SelectorTable {
  const helo = h.fromHelo?.replace(/^\[(.*)\]$/, '$1');
  const t: SelectorTable = {
    from_hostname: helo ?? h.fromHostname,
    from_ip: h.fromIp,
    real_hostname: h.fromHostname,
    real_ip: h.fromIp,
    by_hostname: h.by,
    proto: h.protocol?.toLowerCase(),
    timestamp: h.timestamp ? String(Math.floor(h.timestamp.getTime() / 1000)) : undefined,
    for: h.for,
    flags: { ssl: h.tls, authenticated: h.authenticated },
    raw: h.raw,
  };
  for (const k of Object.keys(t)) if (t[k] === undefined) delete t[k];
  return t;
}

function headerTable(h: MessageHeader, newline: string): SelectorTable {
  return {
    name: h.name,
    value: h.raw.replace(/\r?\n[ \t]/g, ' ').trim(),
    decoded: h.value,
    raw: `${h.name}:${h.raw}${newline}`,
    order: h.order,
    empty_separator: !h.raw.startsWith(' ') && !h.raw.startsWith('\t'),
    tab_separated: h.raw.startsWith('\t'),
  };
}

/** Words of every text part in the requested form (Rspamd's `get_words`), capped at MAX_WORDS. */
function words(parts: readonly TextPart[], how: string): Typed | undefined {
  const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
  const out: Array<string | SelectorTable> = [];
  for (const p of parts) {
    if (how === 'stem') {
      for (const w of stemmedWords(p.text)) if (out.length < MAX_WORDS) out.push(w);
      continue;
    }
    for (const seg of segmenter.segment(stripExceptions(p.text))) {
      if (out.length >= MAX_WORDS) break;
      if (!seg.isWordLike) continue;
      const norm = normaliseWord(seg.segment);
      if (!norm) continue;
      if (how === 'raw') out.push(seg.segment);
      else if (how === 'norm') out.push(norm);
      else out.push({ raw: seg.segment, norm, stem: stemmedWords(seg.segment)[0] ?? norm });
    }
  }
  return { value: out, type: how === 'full' ? 'table_list' : 'string_list' };
}

/** The part a mail reader would show: the first non-empty HTML part, else the first non-empty plain one. */
function displayedPart(task: SelectorTask): TextPart | undefined {
  const parts = task.message.textParts.filter((p) => !p.empty);
  return parts.find((p) => p.kind === 'html') ?? parts[0];
}

const URL_FLAGS = ['phished', 'numeric', 'obscured', 'redirected', 'html_displayed', 'text', 'subject', 'host_encoded', 'schema_encoded', 'path_encoded', 'query_encoded', 'missing_slashes', 'idn', 'has_port', 'has_user', 'schemaless', 'unnormalised', 'zw_spaces', 'url_displayed', 'image', 'query', 'content', 'no_tld', 'truncated', 'redirect_target', 'invisible', 'special'] as const;

const SPECIFIC_URL_FIELDS = {
  limit: { kind: 'number' },
  esld_limit: { kind: 'number', optional: true },
  exclude_flags: { kind: 'list', words: URL_FLAGS, optional: true },
  flags: { kind: 'list', words: URL_FLAGS, optional: true },
  flags_mode: { kind: 'words', words: ['explicit'], optional: true },
  prefix: { kind: 'string', optional: true },
  need_content: { kind: 'words', words: ['true', 'false'], optional: true },
  need_emails: { kind: 'words', words: ['true', 'false'], optional: true },
  need_images: { kind: 'words', words: ['true', 'false'], optional: true },
  ignore_redirected: { kind: 'words', words: ['true', 'false'], optional: true },
} as const;

type SpecificParams = Record<string, string | string[] | number | boolean>;

function specificParams(a: SelectorArg | number | undefined, name: string): SpecificParams {
  if (a === undefined) return { limit: 9999 };
  if (typeof a !== 'object' || Array.isArray(a)) return positional({ kind: 'table' })([String(a)], name) as never;
  return tableFields(a, SPECIFIC_URL_FIELDS, name);
}

/** Rspamd's preference among a message's URLs: obscured 3, user/port/subject/phished 2, displayed text 0. */
function urlPriority(u: FoundUrl): number {
  if (u.flags.has('image')) return 0;
  if (u.flags.has('html_displayed')) return 0;
  if (u.isEmail) return 1;
  if (u.flags.has('obscured')) return 3;
  if (u.flags.has('has_user') || u.flags.has('has_port') || u.flags.has('subject') || u.flags.has('phished')) return 2;
  return 1;
}

interface Ranked {
  url: FoundUrl;
  priority: number;
}

/** Groups ordered as Rspamd sorts them: highest priority first, then fewer URLs; ties by first seen. */
function sortGroups(groups: Map<string, Ranked[]>): Ranked[][] {
  const list = [...groups.values()].map((g) => [...g].sort((a, b) => a.priority - b.priority));
  const top = (g: Ranked[]): number => g[g.length - 1]!.priority;
  return list.sort((a, b) => (top(a) !== top(b) ? top(b) - top(a) : a.length - b.length));
}

/** Takes the best remaining URL of each group in turn until `limit` (Rspamd takes from the end). */
function roundRobin(groups: Ranked[][], limit: number, out: Map<string, FoundUrl>): void {
  let left = limit;
  let progressed = true;
  while (left > 0 && progressed) {
    progressed = false;
    for (const g of groups) {
      if (left <= 0) break;
      const r = g.pop();
      if (!r) continue;
      progressed = true;
      if (!out.has(r.url.url)) {
        out.set(r.url.url, r.url);
        left--;
      }
    }
  }
}

/**
 * Rspamd's "most specific" URLs (lua_util.filter_specific_urls): candidates grouped by
 * registrable domain (at most `esld_limit` kept per domain), groups ranked by priority; with no
 * more domains than `limit` the best URL of each domain is taken in turns, otherwise the same is
 * done over the domains' public suffixes.
 */
function specificUrls(task: SelectorTask, p: SpecificParams): FoundUrl[] {
  const include = p.flags as string[] | undefined;
  const exclude = p.exclude_flags as string[] | undefined;
  const candidates = task.message.urls.filter((u) => {
    if (u.isEmail && p.need_emails !== true) return false;
    if (u.flags.has('image') && p.need_images !== true) return false;
    if (u.flags.has('content') && p.need_content !== true) return false;
    if (p.ignore_redirected === true && u.flags.has('redirected')) return false;
    if (exclude?.some((f) => u.flags.has(f))) return false;
    if (include) return p.flags_mode === 'explicit' ? include.every((f) => u.flags.has(f)) : include.some((f) => u.flags.has(f));
    return true;
  });
  const limit = Math.max(0, Math.trunc(p.limit as number));
  const perDomain = p.esld_limit === undefined ? Infinity : Math.max(1, Math.trunc(p.esld_limit as number));
  const eslds = new Map<string, Ranked[]>();
  const tlds = new Map<string, Ranked[]>();
  for (const url of candidates) {
    const esld = url.tld ?? url.host;
    const r = { url, priority: urlPriority(url) };
    const g = eslds.get(esld);
    if (!g) eslds.set(esld, [r]);
    else if (g.length < perDomain) g.push(r);
    const suffix = esld.split('.').slice(1).join('.');
    const t = tlds.get(suffix);
    if (t) t.push(r);
    else tlds.set(suffix, [r]);
  }
  const out = new Map<string, FoundUrl>();
  roundRobin(sortGroups(eslds.size <= limit ? eslds : tlds), limit, out);
  return [...out.values()];
}

function urlMethodList(list: Array<UrlObject | EmailObject>, method: CheckedArgs[number]): Typed | undefined {
  if (list.length === 0) return undefined;
  if (typeof method !== 'string') return { value: list, type: 'userdata_list' };
  const out: string[] = [];
  for (const o of list) {
    const v = o.call(method);
    if (v !== undefined && v !== null) out.push(String(v));
  }
  return { value: out, type: 'string_list' };
}

function emailObjects(task: SelectorTask): EmailObject[] {
  return task.message.emails.map((e) => {
    const host = e.domain.toLowerCase();
    return new EmailObject(e.local, host, getDomain(host) ?? host);
  });
}

function urlFlagList(a: SelectorArg | number | undefined, name: string): string[] | undefined {
  if (a === undefined) return undefined;
  const list = typeof a === 'string' ? [a] : Array.isArray(a) ? a : positional({ kind: 'list' })([String(a)], name) as never;
  for (const f of list) if (!(URL_FLAGS as readonly string[]).includes(f)) positional({ kind: 'words', words: URL_FLAGS })([f], name);
  return list;
}

export const EXTRACTORS: Readonly<Record<string, Extractor>> = {
  id: {
    description: "Return value from function's argument or an empty string, For example, `id('Something')` returns a string 'Something'",
    args: positional({ kind: 'string', optional: true }),
    get: (_t, args) => ({ value: (args[0] as string | undefined) ?? '', type: 'string' }),
  },
  list: {
    description: "Return a list from function's arguments or an empty list, For example, `list('foo', 'bar')` returns a list {'foo', 'bar'}",
    args: strings,
    get: (_t, args) => ({ value: args.map(String), type: 'string_list' }),
  },
  ip: {
    description: 'Get source IP address',
    get: (t) => {
      const ip = senderIp(t);
      return ip === undefined ? undefined : { value: new IpObject(ip), type: 'userdata' };
    },
  },
  from: {
    description: 'Get MIME or SMTP from (e.g. `from(\'smtp\')` or `from(\'mime\')`, uses any type by default)',
    args: ADDRESS_ARGS,
    get: (t, args) => {
      const w = wants(args);
      const smtp = w === 'mime' ? undefined : smtpFrom(t);
      const a = smtp ?? (w === 'smtp' ? undefined : t.message.from[0]);
      if (!a || a.address === '') return undefined;
      const source = smtp ? [...(t.meta.requestHeaders.get('from') ?? []), ...headerTexts(t, 'return-path')] : headerTexts(t, 'from');
      return { value: addressTable(a, source), type: 'table' };
    },
  },
  rcpts: {
    description: 'Get MIME or SMTP rcpts (e.g. `rcpts(\'smtp\')` or `rcpts(\'mime\')`, uses any type by default)',
    args: ADDRESS_ARGS,
    get: (t, args) => {
      const w = wants(args);
      const smtp = t.envelopeRcpt.filter((a) => a.address !== '');
      const useSmtp = w === 'smtp' || (w === 'any' && smtp.length > 0);
      const list = useSmtp ? smtp : mimeRcpts(t);
      const source = useSmtp ? [...(t.meta.requestHeaders.get('rcpt') ?? []), ...t.meta.rcpt] : headerTexts(t, 'to', 'cc');
      return list.length === 0 ? undefined : { value: list.map((a) => addressTable(a, source)), type: 'table_list' };
    },
  },
  country: { description: 'Get country (ASN module must be executed first)', get: (t) => str(poolVar(t, 'country')) },
  asn: { description: 'Get AS number (ASN module must be executed first)', get: (t) => str(poolVar(t, 'asn')) },
  user: { description: 'Get authenticated user name', get: (t) => str(t.meta.user) },
  to: {
    description: 'Get principal recipient',
    get: (t) => str(t.meta.deliverTo ?? t.envelopeRcpt[0]?.address ?? mimeRcpts(t)[0]?.address),
  },
  digest: {
    description: 'Get content digest',
    get: (t) => {
      // 16 bytes, as Rspamd's; computed over the part digests and the subject (Rspamd 3.4 chains
      // t1ha2 over the same inputs, so the value differs from 3.4's but is stable per message).
      const chunks = t.message.parts.map((p) => Buffer.from(digestOf(p.content, 'hex'), 'hex'));
      if (t.message.subject) chunks.push(Buffer.from(t.message.subject, 'utf8'));
      return { value: digestOf(Buffer.concat(chunks)).slice(0, 32), type: 'string' };
    },
  },
  attachments: {
    description: 'Get list of all attachments digests. The first optional argument is encoding (`hex`, `base32` (and forms `bleach32`, `rbase32`), `base64`), the second optional argument is optional hash type (`blake2`, `sha256`, `sha1`, `sha512`, `md5`)',
    args: DIGEST_ARGS,
    get: (t, args) => strList(t.message.parts.filter((p) => p.isAttachment).map((p) => digestOf(p.content, args[0] as DigestEncoding | undefined, args[1] as DigestHash | undefined))),
  },
  files: {
    description: 'Get all attachments files',
    get: (t) => strList(t.message.parts.flatMap((p) => (p.filename ? [p.filename] : []))),
  },
  languages: {
    description: 'Get languages for text parts (no language detection yet: always empty)',
    get: () => undefined,
  },
  helo: { description: 'Get helo value', get: (t) => str(t.meta.helo) },
  header: {
    description: "Get header with the name that is expected as an argument. The optional second argument accepts list of flags: `full`: returns all headers with this name with all data (like task:get_header_full()); `strong`: use case sensitive match when matching header's name",
    args: (args, name) => {
      const out = positional({ kind: 'string' }, { kind: 'string', optional: true })(args, name);
      if (typeof out[1] === 'string' && !/strong|full/.test(out[1])) positional({ kind: 'words', words: ['strong', 'full'] })([out[1]], name);
      return out;
    },
    get: (t, args) => {
      const name = args[0] as string;
      const flags = (args[1] as string | undefined) ?? '';
      const strong = flags.includes('strong');
      let list = t.message.headers.get(name);
      if (strong) list = list.filter((h) => h.name === name);
      if (list.length === 0) return undefined;
      if (flags.includes('full')) return { value: list.map((h) => headerTable(h, t.message.newline)), type: 'table_list' };
      return { value: list[0]!.value, type: 'string' };
    },
  },
  received: {
    description: 'Get list of received headers. If no arguments specified, returns list of tables. Otherwise, selects a specific element, e.g. `by_hostname`',
    args: positional({ kind: 'string', optional: true }),
    get: (t, args) => {
      if (t.received.length === 0) return undefined;
      const tables = t.received.map(hopTable);
      const field = args[0] as string | undefined;
      if (field === undefined) return { value: tables, type: 'table_list' };
      return { value: tables.flatMap((h) => (typeof h[field] === 'string' ? [h[field]] : [])), type: 'string_list' };
    },
  },
  urls: {
    description: 'Get list of all urls. If no arguments specified, returns list of url objects. Otherwise, calls a specific method, e.g. `get_tld`',
    args: positional({ kind: 'string', optional: true }),
    get: (t, args) => urlMethodList(webUrls(t).map((u) => new UrlObject(u)), args[0]),
  },
  specific_urls: {
    description: 'Get most specific urls. Arguments are equal to the Lua API function',
    args: (args, name) => {
      if (args.length > 1) positional({ kind: 'table' })(args, name);
      return [specificParams(args[0], name) as never];
    },
    get: (t, args) => {
      const urls = specificUrls(t, args[0] as unknown as SpecificParams);
      return urls.length === 0 ? undefined : { value: urls.map((u) => new UrlObject(u)), type: 'userdata_list' };
    },
  },
  specific_urls_filter_map: {
    description: 'Get most specific urls, filtered by some map. Arguments are equal to the Lua API function',
    args: (args, name) => {
      const [map] = positional({ kind: 'string' }, { kind: 'table', optional: true })(args, name);
      return [map, specificParams(args[1], name) as never];
    },
    get: (t, args, env) => {
      const map = env.map?.(args[0] as string);
      if (!map) return undefined;
      const urls = specificUrls(t, args[1] as unknown as SpecificParams).filter((u) => map.get(u.url) !== undefined);
      return urls.length === 0 ? undefined : { value: urls.map((u) => new UrlObject(u)), type: 'userdata_list' };
    },
  },
  urls_filtered: {
    description: 'Get list of all urls filtered by flags_include/exclude (see rspamd_task:get_urls_filtered for description)',
    args: (args, name) => {
      if (args.length > 2) positional({ kind: 'list' }, { kind: 'list' })(args, name);
      return [urlFlagList(args[0], name) as never, urlFlagList(args[1], name) as never];
    },
    get: (t, args) => {
      const inc = args[0] as unknown as string[] | undefined;
      const exc = args[1] as unknown as string[] | undefined;
      const urls = t.message.urls.filter((u) => !u.isEmail && (!inc || inc.some((f) => u.flags.has(f))) && !exc?.some((f) => u.flags.has(f)));
      return urls.length === 0 ? undefined : { value: urls.map((u) => new UrlObject(u)), type: 'userdata_list' };
    },
  },
  emails: {
    description: 'Get list of all emails. If no arguments specified, returns list of url objects. Otherwise, calls a specific method, e.g. `get_user`',
    args: positional({ kind: 'string', optional: true }),
    get: (t, args) => urlMethodList(emailObjects(t), args[0]),
  },
  pool_var: {
    description: 'Get specific pool var. The first argument must be variable name, the second argument is optional and defines the type (string by default)',
    args: positional({ kind: 'string' }, { kind: 'string', optional: true }),
    get: (t, args) => str(poolVar(t, args[0] as string)),
  },
  task_cache: {
    description: 'Get value of specific key from task cache. The first argument must be the key name',
    args: positional({ kind: 'string' }),
    get: (t, args) => {
      const v = t.cache.get(args[0] as string);
      if (typeof v === 'string') return { value: v, type: 'string' };
      if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return { value: v, type: 'string_list' };
      return undefined;
    },
  },
  request_header: {
    description: 'Get specific HTTP request header. The first argument must be header name.',
    args: positional({ kind: 'string' }),
    get: (t, args) => str(t.getRequestHeader(args[0] as string)),
  },
  time: {
    description: 'Get task timestamp. The first argument is type: `connect`: connection timestamp; `message`: timestamp as defined by `Date` header (default). The second argument is optional time format (strftime, always GMT)',
    args: positional({ kind: 'words', words: ['connect', 'message'], optional: true }, { kind: 'string', optional: true }),
    get: (t, args) => {
      const what = (args[0] as string | undefined) ?? 'message';
      const ms = what === 'connect' ? t.connectTime ?? Date.now() : t.message.date?.getTime();
      if (ms === undefined || !Number.isFinite(ms)) return undefined;
      const secs = Math.floor(ms / 1000);
      const fmt = args[1] as string | undefined;
      return { value: fmt === undefined ? String(secs) : strftime(fmt, secs), type: 'string' };
    },
  },
  words: {
    description: 'Get words from text parts: `stem`: stemmed words (default); `raw`: raw words; `norm`: normalised words (lowercased); `full`: list of tables',
    args: positional({ kind: 'words', words: ['stem', 'raw', 'norm', 'full'], optional: true }),
    get: (t, args) => words(t.message.textParts, (args[0] as string | undefined) ?? 'stem'),
  },
  queueid: { description: 'Get queue ID', get: (t) => str(t.meta.queueId) },
  uid: { description: 'Get ID of the task being processed', get: (t) => str(t.uid) },
  messageid: { description: 'Get message ID', get: (t) => str(t.message.messageId) },
  symbol: {
    description: 'Get specific symbol. The first argument must be the symbol name. The second argument is an optional shadow result name. Returns the symbol table. See task:get_symbol()',
    args: positional({ kind: 'string' }, { kind: 'string', optional: true }),
    get: (t, args) => {
      const s = t.getSymbol?.(args[0] as string);
      return s ? { value: { ...s } as SelectorTable, type: 'table' } : undefined;
    },
  },
  scan_result: {
    description: 'Get full scan result (either default or shadow if shadow result name is specified) Returns the result table. See task:get_metric_result()',
    args: positional({ kind: 'string', optional: true }),
    get: (t) => {
      const v = t.verdict?.();
      return v ? { value: { score: v.score, required_score: v.requiredScore, action: v.action, symbols: v.symbols.map((s) => s.name) }, type: 'table' } : undefined;
    },
  },
  metatokens: {
    description: 'Get metatokens for a message as strings (no neural metatokens yet: always empty)',
    get: () => undefined,
  },
  rspamd_hostname: {
    description: 'Get hostname of the filter server',
    get: (_t, _a, env: SelectorEnv) => ({ value: env.hostname ?? osHostname(), type: 'string' }),
  },
  fuzzy_digest: {
    description: 'Get strong fuzzy digest (hex string) of the part an MUA would display. Returns nil if the message has no usable text part.',
    get: (t) => {
      const p = displayedPart(t);
      if (!p) return undefined;
      const w = stemmedWords(p.text);
      return w.length === 0 ? undefined : { value: textDigest(w).toString('hex'), type: 'string' };
    },
  },
  fuzzy_shingles: {
    description: 'Get list of fuzzy shingle hashes (as strings) for the part an MUA would display. Returns an empty list if no usable text part exists.',
    get: (t) => {
      const p = displayedPart(t);
      const w = p ? stemmedWords(p.text) : [];
      return { value: w.length === 0 ? [] : shingles(w, 'old', DEFAULT_KEYS).map(String), type: 'string_list' };
    },
  },
  authenticated: {
    description: "Returns the string 'true' if the task has an authenticated user, otherwise 'false'.",
    get: (t) => ({ value: t.meta.user ? 'true' : 'false', type: 'string' }),
  },
  received_count: {
    description: 'Get the number of Received headers as a string (hop count for the message).',
    get: (t) => ({ value: String(t.message.headers.get('received').length), type: 'string' }),
  },
};
