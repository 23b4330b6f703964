// Turns the rbl config (shipped lists merged with local.d) into compiled rules: defaults
// applied, checks resolved, return codes compiled to regular expressions, result symbols known.
// Pure: maps are opened by the caller.
import { dataRecord } from '../../plugin-api/index.js';
import type { CompiledSelector } from '../../plugin-api/index.js';
import { CHECK_TYPES, DEFAULT_REQUESTS_LIMIT } from './config.js';
import type { CheckType, RblConfig, RblRule } from './config.js';
import { DEFAULT_RULES } from './defaults.js';
import type { HashName } from './hash.js';

/** Labels as Rspamd writes them in options (`1.2.3.4:from`) and keys `symbols_prefixes` by. */
export const CHECK_LABEL: Record<CheckType, string> = {
  from: 'from', received: 'received', helo: 'helo', rdns: 'rdns', dkim: 'dkim',
  emails: 'email', replyto: 'replyto', urls: 'url', content_urls: 'url', selector: 'selector',
};

export interface CompiledRule {
  key: string;
  /** label → selector text (the `selector` check); compiled in setup (index.ts) into `selectors`. */
  selectorTexts: Readonly<Record<string, string>> | undefined;
  selectors?: Array<{ label: string; selector: CompiledSelector }>;
  symbol: string;
  zone: string;
  checks: ReadonlySet<CheckType>;
  ipv4: boolean;
  ipv6: boolean;
  unknown: boolean;
  excludePrivateIps: boolean;
  excludeUsers: boolean;
  excludeLocal: boolean;
  noIp: boolean;
  images: boolean;
  dkimDomainOnly: boolean;
  dkimMatchFrom: boolean;
  emailsDomainOnly: boolean;
  emailsDelimiter: string | undefined;
  urlFullHostname: boolean;
  isWhitelist: boolean;
  ignoreWhitelist: boolean;
  hash: HashName | undefined;
  hashFormat: 'hex' | 'base32' | 'base64';
  hashLen: number | undefined;
  returncodes: Array<[string, RegExp[]]> | undefined;
  returnbits: Array<[string, number[]]> | undefined;
  prefixes: Readonly<Record<string, string>> | undefined;
  /** Result symbols whose elements whitelist (is_whitelist rules, minus exceptions). */
  whiteSymbols: ReadonlySet<string>;
  /** Every symbol this rule may insert, `_FAIL` included. */
  resultSymbols: string[];
  whitelistSources: string[] | undefined;
  received: { minPos?: number; maxPos?: number; flags?: string[]; nflags?: string[] };
  requestsLimit: number;
  requireSymbols: string[];
  resolveIp: boolean;
}

const BOOL_DEFAULTS = [
  'enabled', 'ipv4', 'ipv6', 'unknown', 'dkim_domainonly', 'emails_domainonly', 'exclude_private_ips',
  'exclude_users', 'exclude_local', 'no_ip', 'dkim_match_from',
] as const;

const asList = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Lua character classes Rspamd's return codes use, as RegExp text. */
const LUA_CLASS: Record<string, string> = { d: '\\d', D: '\\D', a: '[A-Za-z]', w: '[A-Za-z0-9]', s: '\\s', x: '[0-9A-Fa-f]', l: '[a-z]', u: '[A-Z]', p: '[!-/:-@[-`{-~]' };

/** A Lua pattern (as Rspamd matches return codes: anchored) as a RegExp. */
export function luaPatternToRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '%') {
      const n = pattern[++i] ?? '';
      out += LUA_CLASS[n] ?? n.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
    } else if (c === '-') {
      out += '*?';
    } else if ('.*+?[]^$'.includes(c)) {
      out += c;
    } else {
      out += c.replace(/[\\(){}|/]/g, '\\$&');
    }
  }
  return new RegExp(`^${out}$`);
}

function escapeExact(s: string): RegExp {
  return new RegExp(`^${s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}$`);
}

function bitsOf(v: number | string | Array<number | string>): number[] {
  return (Array.isArray(v) ? v : [v]).map(Number).filter((n) => Number.isInteger(n) && n >= 0);
}

/** Shipped lists with the user's entries merged over them field by field. */
export function mergedRules(cfg: RblConfig): Record<string, RblRule> {
  // Rule names are config keys: a record without a prototype (`out[k] ?? {}` finds only rules).
  const out = dataRecord<RblRule>();
  for (const [k, r] of Object.entries(DEFAULT_RULES)) out[k] = { ...r };
  for (const src of [cfg.rbls, cfg.rules ?? {}]) {
    for (const [k, r] of Object.entries(src)) out[k] = { ...(out[k] ?? {}), ...r };
  }
  return out;
}

function resolveChecks(r: RblRule): Set<CheckType> {
  const set = new Set<CheckType>();
  if (r.checks) {
    const excluded = new Set(r.exclude_checks ?? []);
    for (const c of r.checks) if (!excluded.has(c)) set.add(c);
  } else {
    for (const c of CHECK_TYPES) if (r[c] === true) set.add(c);
  }
  if (r.images) set.add('urls');
  if (r.selector !== undefined && !r.exclude_checks?.includes('selector')) set.add('selector');
  // Rspamd upgrades a rule with no check at all to the sender-IP check.
  if (set.size === 0 && !r.checks) set.add('from');
  return set;
}

export function compileRules(cfg: RblConfig): CompiledRule[] {
  const out: CompiledRule[] = [];
  for (const [key, raw] of Object.entries(mergedRules(cfg))) {
    const r: RblRule = { ...raw };
    if (r.ignore_default !== undefined) r.ignore_defaults = r.ignore_default;
    if (r.ignore_whitelists !== undefined) r.ignore_whitelist = r.ignore_whitelists;
    if (!r.ignore_defaults) {
      for (const name of BOOL_DEFAULTS) if (r[name] === undefined) r[name] = cfg[`default_${name}`];
    }
    if (r.enabled === false || r.disabled === true || !r.rbl) continue;
    const symbol = r.symbol ?? key.toUpperCase();
    const codesSrc = r.returncodes ?? r.return_codes;
    const bitsSrc = r.returnbits ?? r.return_bits;
    const matcher = r.returncodes_matcher === 'equality' ? escapeExact : luaPatternToRegExp;
    const returncodes = codesSrc ? Object.entries(codesSrc).map(([s, v]): [string, RegExp[]] => [s.toUpperCase(), asList(v).map(matcher)]) : undefined;
    const returnbits = bitsSrc ? Object.entries(bitsSrc).map(([s, v]): [string, number[]] => [s.toUpperCase(), bitsOf(v)]) : undefined;
    const prefixes = r.symbols_prefixes;
    const withPrefixes = (s: string): string[] => (prefixes ? [...new Set(Object.values(prefixes))].map((p) => `${p}_${s}`) : [s]);
    const codeSymbols = [...(returncodes ?? []), ...(returnbits ?? [])].flatMap(([s]) => withPrefixes(s));
    const exceptions = new Set(asList(r.whitelist_exception));
    const whiteSymbols = new Set(r.is_whitelist ? codeSymbols.filter((s) => !exceptions.has(s)) : []);
    if (r.is_whitelist && !returncodes && !returnbits && !exceptions.has(symbol)) whiteSymbols.add(symbol);
    const checks = resolveChecks(r);
    const rule: CompiledRule = {
      key,
      selectorTexts: typeof r.selector === 'string' ? { selector: r.selector } : r.selector,
      symbol,
      zone: r.rbl.replace(/^\.+|\.+$/g, '').toLowerCase(),
      checks,
      ipv4: r.ipv4 ?? false,
      ipv6: r.ipv6 ?? false,
      unknown: r.unknown ?? false,
      excludePrivateIps: r.exclude_private_ips ?? false,
      excludeUsers: r.exclude_users ?? false,
      excludeLocal: r.exclude_local ?? false,
      noIp: r.no_ip ?? false,
      images: r.images ?? false,
      dkimDomainOnly: r.dkim_domainonly ?? false,
      dkimMatchFrom: r.dkim_match_from ?? false,
      emailsDomainOnly: r.emails_domainonly ?? false,
      emailsDelimiter: r.emails_delimiter,
      urlFullHostname: r.url_full_hostname ?? false,
      isWhitelist: r.is_whitelist ?? false,
      ignoreWhitelist: r.ignore_whitelist ?? false,
      hash: r.hash === 'blake2b' ? 'blake2' : r.hash,
      hashFormat: r.hash_format ?? 'hex',
      hashLen: r.hash_len,
      returncodes,
      returnbits,
      prefixes,
      whiteSymbols,
      resultSymbols: [...new Set([...withPrefixes(symbol), ...codeSymbols, `${symbol}_FAIL`])],
      whitelistSources: r.whitelist !== undefined ? asList(r.whitelist) : undefined,
      received: {
        ...(r.received_min_pos !== undefined ? { minPos: r.received_min_pos } : {}),
        ...(r.received_max_pos !== undefined ? { maxPos: r.received_max_pos } : {}),
        ...(r.received_flags ? { flags: r.received_flags } : {}),
        ...(r.received_nflags ? { nflags: r.received_nflags } : {}),
      },
      requestsLimit: r.requests_limit ?? DEFAULT_REQUESTS_LIMIT,
      requireSymbols: asList(r.require_symbols),
      resolveIp: r.resolve_ip ?? false,
    };
    out.push(rule);
  }
  return out;
}

/**
 * Whether a rule reads other symbols' results or work and so must run after them: DKIM results,
 * required symbols, the client's PTR name once_received may resolve (`rdns`).
 */
export function needsLateRun(rule: CompiledRule): boolean {
  return rule.checks.has('dkim') || rule.checks.has('rdns') || rule.requireSymbols.length > 0;
}
