// What one rule looks up in one message: names and addresses collected by check type, each
// once (a name found by several checks carries every label), whitelisted ones left out.
import ipaddr from 'ipaddr.js';
import { domainToASCII } from 'node:url';
import { getDomain } from 'tldts';
import type { MapHandle, Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import type { CompiledRule } from './compile.js';
import { hashKey, type HashName } from './hash.js';
import { mayBeIp } from '../../message/ip.js';
import { memoize } from '../../message/memo.js';
import { decodePercentLenient } from '../../message/uri-decode.js';

const NON_ASCII = /[^\x00-\x7f]/;

function isIpHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return mayBeIp(h) && ipaddr.isValid(h);
}

export interface RblRequest {
  /** Name queried (A record), or the name to resolve first with `resolveIp`. */
  name: string;
  /** The element as found (IP text, domain, address) for result options. */
  orig: string;
  /** Check labels that found it (`from`, `received`, `url`, …). */
  labels: Set<string>;
  /** Not counted against the per-task DNS cap (sender IP, HELO, rDNS: one each per message). */
  forced: boolean;
  resolveIp: boolean;
}

export interface RuleMaps {
  whitelist?: MapHandle | undefined;
  localExclude?: MapHandle | undefined;
}

/** Element → labels another list whitelisted it for. */
export type Whitelisted = ReadonlyMap<string, ReadonlySet<string>>;

// Memoized: every rule of every message asks again for the same relays and domains.
const orgDomain = memoize((d: string): string => getDomain(d, { allowPrivateDomains: true }) ?? d);

/** `d.c.b.a` for IPv4, reversed nibbles for IPv6; undefined for text that is not an address. */
export const reverseIp = memoize(reverseIpUncached);

function reverseIpUncached(ip: string): string | undefined {
  if (!mayBeIp(ip) || !ipaddr.isValid(ip)) return undefined;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return (addr as ipaddr.IPv4).octets.slice().reverse().join('.');
  const hex = (addr as ipaddr.IPv6).parts.map((p) => p.toString(16).padStart(4, '0')).join('');
  return hex.split('').reverse().join('.');
}

const ipVersion = memoize(ipVersionUncached);

function ipVersionUncached(ip: string): 4 | 6 | undefined {
  if (!mayBeIp(ip) || !ipaddr.isValid(ip)) return undefined;
  const a = ipaddr.parse(ip);
  return a.kind() === 'ipv4' || (a as ipaddr.IPv6).isIPv4MappedAddress() ? 4 : 6;
}

/** hashKey by `hash\0format\0len\0data`, memoized: the same addresses recur in message after message. */
const cachedHashKey = memoize((spec: string): string => {
  const [hash, format, len, ...data] = spec.split('\0');
  return hashKey(data.join('\0'), hash as HashName, format as 'hex' | 'base32' | 'base64', len === '' ? undefined : Number(len));
});

/** Rspamd refuses names with empty labels, labels over 63 bytes or starting/ending with `-`. */
function validLabels(n: string): boolean {
  // One pass over the labels, without splitting (this runs for every candidate of every rule).
  let start = 0;
  for (;;) {
    const dot = n.indexOf('.', start);
    const end = dot < 0 ? n.length : dot;
    if (end === start || end - start > 63 || n.charCodeAt(start) === 45 || n.charCodeAt(end - 1) === 45) return false;
    if (dot < 0) return true;
    start = dot + 1;
  }
}

/** validLabels, remembered: the same keys are looked up in one zone after another. */
const validKey = memoize(validLabels);

/** Whether `key.zone` is a name Rspamd would look up. */
function validName(key: string, zone: string): boolean {
  return key.length + 1 + zone.length <= 253 && validKey(key) && validKey(zone);
}

/** An element as a lookup key: lower case, no trailing dot. */
const plainKey = memoize((elem: string): string => elem.toLowerCase().replace(/\.$/, ''));
/** plainKey in the ASCII (punycode) form lists publish IDN names in; '' when the name has none. */
const asciiKey = memoize((elem: string): string => {
  const key = plainKey(elem);
  return NON_ASCII.test(key) ? domainToASCII(key) : key;
});

/** Rspamd's alias removal: `user+tag` → `user`; Gmail ignores dots and has one domain. */
function canonicalEmail(user: string, domain: string): { user: string; domain: string } {
  let u = user.toLowerCase();
  let d = domain.toLowerCase();
  const plus = u.indexOf('+');
  if (plus > 0) u = u.slice(0, plus);
  if (d === 'gmail.com' || d === 'googlemail.com') {
    u = u.replace(/\./g, '');
    d = 'gmail.com';
  }
  return { user: u, domain: d };
}

export class RequestCollector {
  readonly requests = new Map<string, RblRequest>();
  constructor(
    private readonly rule: CompiledRule,
    private readonly maps: RuleMaps,
    private readonly whitelisted: Whitelisted,
  ) {}

  #whitelisted(elem: string, label: string): boolean {
    if (this.rule.ignoreWhitelist) return false;
    if (this.maps.whitelist?.has(elem)) return true;
    return this.whitelisted.get(elem)?.has(label) === true;
  }

  add(elem: string, label: string, forced: boolean, isIp: boolean): void {
    if (this.#whitelisted(elem, label)) return;
    const r = this.rule;
    // Lists publish IDN names in their ASCII (punycode) form; a name that has none is not looked up.
    const key = isIp ? reverseIp(elem) : r.hash ? plainKey(elem) : asciiKey(elem);
    if (!key) return;
    const seen = this.requests.get(key);
    if (seen) {
      seen.labels.add(label);
      seen.forced ||= forced;
      return;
    }
    const resolveIp = r.resolveIp && !isIp;
    let name: string;
    if (resolveIp) {
      if (key.length > 253 || !validKey(key)) return;
      name = key;
    } else {
      const base = r.hash ? cachedHashKey(`${r.hash}\0${r.hashFormat}\0${r.hashLen ?? ''}\0${key}`) : key;
      if (!validName(base, r.zone)) return;
      name = `${base}.${r.zone}`;
    }
    this.requests.set(key, { name, orig: elem, labels: new Set([label]), forced, resolveIp });
  }

  addEmail(user: string, domain: string, label: string): void {
    const e = canonicalEmail(user, domain);
    if (!e.user || !e.domain) return;
    if (this.rule.emailsDomainOnly) return this.add(e.domain, label, false, false);
    if (this.#whitelisted(e.domain, label)) return;
    const delim = this.rule.emailsDelimiter ?? (this.rule.hash ? '@' : '.');
    this.add(`${e.user}${delim}${e.domain}`, label, false, false);
  }
}

/**
 * The address the IP checks treat as the sender's: the `IP` the MTA gave or, without one, the
 * address the engine read from the top Received header as Rspamd 3.4 does
 * (src/engine/received-client.ts). A message a local relay handed on has a local address there,
 * which the IP lists are not asked about.
 */
function senderIp(task: Task): string | undefined {
  return task.meta.ip;
}

/** Whether the rule applies to this message at all (Rspamd's pipeline guards). */
export function ruleApplies(task: Task, rule: CompiledRule, maps: RuleMaps): boolean {
  if (rule.requireSymbols.some((s) => !task.hasSymbol(s))) return false;
  if (rule.excludeUsers && task.meta.user) return false;
  if (rule.excludeLocal || rule.excludePrivateIps) {
    const ip = senderIp(task);
    if (ip && (isLocalAddress(ip) || maps.localExclude?.has(ip) === true)) return false;
  }
  return true;
}

function ipAllowed(rule: CompiledRule, ip: string): boolean {
  const v = ipVersion(ip);
  return (v === 4 && rule.ipv4) || (v === 6 && rule.ipv6);
}

function collectReceived(task: Task, rule: CompiledRule, c: RequestCollector, maps: RuleMaps): void {
  const hops = task.received;
  const total = hops.length;
  const { minPos, maxPos, flags, nflags } = rule.received;
  hops.forEach((hop, i) => {
    const pos = i + 1;
    const ip = hop.fromIp;
    if (!ip || !ipAllowed(rule, ip)) return;
    if (rule.excludePrivateIps && isLocalAddress(ip)) return;
    if (rule.excludeLocal && maps.localExclude?.has(ip)) return;
    if (minPos !== undefined && (minPos === -1 ? pos !== total : minPos < 0 ? pos <= total + minPos : pos < minPos)) return;
    if (maxPos !== undefined && ((maxPos < -1 && total + maxPos >= pos) || (maxPos > 0 && pos > maxPos))) return;
    const got = new Set<string>([...(hop.tls ? ['ssl'] : []), ...(hop.authenticated ? ['authenticated'] : [])]);
    if (flags?.some((f) => !got.has(f)) || nflags?.some((f) => got.has(f))) return;
    c.add(ip, 'received', false, true);
  });
}

function collectDkim(task: Task, rule: CompiledRule, c: RequestCollector): void {
  const trace = task.getSymbol('DKIM_TRACE')?.options ?? [];
  let fromDomain: string | undefined;
  if (rule.dkimMatchFrom) {
    const d = task.message.from[0]?.domain;
    if (d) fromDomain = rule.urlFullHostname ? d : orgDomain(d);
  }
  for (const opt of trace) {
    const m = /^([^:]*):([+\-~?])$/.exec(opt);
    // Only valid signatures count: a forged one names any domain it likes.
    if (!m || m[2] !== '+' || !m[1]) continue;
    const domain = m[1].toLowerCase();
    const name = rule.dkimDomainOnly && !rule.urlFullHostname ? orgDomain(domain) : domain;
    if (rule.dkimMatchFrom && name !== fromDomain) continue;
    c.add(name, 'dkim', rule.dkimMatchFrom, false);
  }
}

/** What every URL rule reads of one URL; worked out once per message (urlElements). */
interface UrlElement {
  image: boolean;
  content: boolean;
  /** Numeric host: its reversed address ('' when it does not parse), else undefined. */
  reversedIp: string | undefined;
  host: string;
  /** Registrable domain (the URL's own, or the host's). */
  domain: string;
}

const URL_ELEMENTS_KEY = 'rbl:url-elements';

/** The message's URLs as the URL rules look them up: e-mail and redirected URLs left out. */
function urlElements(task: Task): UrlElement[] {
  let out = task.cache.get(URL_ELEMENTS_KEY) as UrlElement[] | undefined;
  if (out) return out;
  out = [];
  for (const u of task.message.urls) {
    if (u.isEmail || u.flags.has('redirected')) continue;
    const host = u.hostAscii || u.host;
    if (!host) continue;
    const numeric = u.flags.has('numeric') || isIpHost(host);
    out.push({
      image: u.flags.has('image'),
      content: u.flags.has('content'),
      reversedIp: numeric ? (reverseIp(host.replace(/^\[|\]$/g, '')) ?? '') : undefined,
      host,
      domain: u.tld ?? orgDomain(host),
    });
  }
  task.cache.set(URL_ELEMENTS_KEY, out);
  return out;
}

function collectUrls(task: Task, rule: CompiledRule, c: RequestCollector): void {
  const wantPlain = rule.checks.has('urls');
  const wantContent = rule.checks.has('content_urls');
  let n = 0;
  for (const u of urlElements(task)) {
    if (n >= rule.requestsLimit) break;
    if (u.image && !rule.images) continue;
    if (u.content ? !wantContent : !wantPlain) continue;
    if (u.reversedIp !== undefined) {
      if (rule.noIp) continue;
      if (u.reversedIp) c.add(u.reversedIp, 'url', false, false);
    } else {
      c.add(rule.urlFullHostname ? u.host : u.domain, 'url', false, false);
    }
    n++;
  }
}

function collectEmails(task: Task, rule: CompiledRule, c: RequestCollector): void {
  const found: Array<{ user: string; domain: string }> = [];
  for (const e of task.message.emails) if (!e.invalid) found.push({ user: e.local, domain: e.domain });
  for (const u of task.message.urls) {
    if (!u.isEmail) continue;
    const m = /^(?:mailto:)?([^@?]+)@([^?&]+)/i.exec(u.url);
    // The address is the sender's text: a bad %-escape (`%ff`) is kept, never a URIError.
    if (m) found.push({ user: decodePercentLenient(m[1]!), domain: m[2]! });
  }
  let n = 0;
  for (const e of found) {
    if (n++ >= rule.requestsLimit) break;
    const domain = rule.emailsDomainOnly && !rule.urlFullHostname ? orgDomain(e.domain.toLowerCase()) : e.domain;
    c.addEmail(e.user, domain, 'email');
  }
}

/** Values the rule's selectors yield: addresses reversed, names as they are; capped like URLs. */
function collectSelected(task: Task, rule: CompiledRule, c: RequestCollector): void {
  let n = 0;
  for (const { label, selector } of rule.selectors ?? []) {
    for (const v of selector.flatten(task) ?? []) {
      if (v === '') continue;
      if (n++ >= rule.requestsLimit) return;
      c.add(v, label, false, isIpHost(v));
    }
  }
}

/** Every lookup of `rule` for this message, or undefined when the rule does not apply. */
export function collectRequests(task: Task, rule: CompiledRule, maps: RuleMaps, whitelisted: Whitelisted): Map<string, RblRequest> | undefined {
  if (!ruleApplies(task, rule, maps)) return undefined;
  const c = new RequestCollector(rule, maps, whitelisted);
  const ch = rule.checks;
  // Rspamd 3.4 drops the whole rule when HELO or rDNS is missing; we skip only that check.
  if (ch.has('helo') && task.meta.helo) c.add(task.meta.helo, 'helo', true, false);
  if (ch.has('dkim')) collectDkim(task, rule, c);
  if (ch.has('emails')) collectEmails(task, rule, c);
  if (ch.has('replyto')) {
    const rt = task.message.replyTo[0];
    if (rt && !rt.invalid && rt.local && rt.domain) c.addEmail(rt.local, rt.domain, 'replyto');
  }
  if (ch.has('urls') || ch.has('content_urls')) collectUrls(task, rule, c);
  const ip = ch.has('from') ? senderIp(task) : undefined;
  if (ip && ipAllowed(rule, ip)) c.add(ip, 'from', true, true);
  if (ch.has('received')) collectReceived(task, rule, c, maps);
  const host = task.meta.hostname;
  if (ch.has('rdns') && host && host !== 'unknown') c.add(host, 'rdns', true, false);
  if (ch.has('selector') && rule.selectors) collectSelected(task, rule, c);
  return c.requests;
}
