// Automatic selection of configured settings rules by their conditions (Rspamd's
// settings rules): ip, from, rcpt, user, authenticated, request headers, selectors.
// Conditions are compiled once; a rule without conditions is only reachable through Settings-ID.
// A selector condition reads the message: the caller hands a lazily made task, so requests
// matched by the envelope alone never parse the message here.

import ipaddr from 'ipaddr.js';
import type { ScanMeta } from '../plugin-api/index.js';
import type { SettingsRule } from './contract.js';
import { compileSelector, type SelectorTask } from '../selectors/index.js';

/** Priority of a `Settings` header and of rules that give none (Rspamd "low"). */
export const LOW_SETTINGS_PRIORITY = 1;

type Check = (meta: ScanMeta, task: () => SelectorTask) => boolean;

export interface ConditionalRule {
  id: string;
  priority: number;
  matches: Check;
}

function compileAddressPattern(p: string): (addr: string) => boolean {
  const re = /^\/(.*)\/([a-z]*)$/.exec(p);
  if (re) {
    const rx = new RegExp(re[1]!, re[2]!.replace(/[^imsu]/g, ''));
    return (a) => rx.test(a);
  }
  const lower = p.toLowerCase();
  if (lower.startsWith('@')) return (a) => a.toLowerCase().endsWith(lower);
  if (!lower.includes('@')) return (a) => a.toLowerCase().split('@')[0] === lower;
  return (a) => a.toLowerCase() === lower;
}

function anyOf(patterns: string[]): (value: string) => boolean {
  const fns = patterns.map(compileAddressPattern);
  return (v) => fns.some((f) => f(v));
}

function stripBrackets(a: string): string {
  return a.startsWith('<') && a.endsWith('>') ? a.slice(1, -1) : a;
}

function compileIp(list: string[]): Check {
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  for (const item of list) {
    try {
      if (item.includes('/')) ranges.push(ipaddr.parseCIDR(item));
      else {
        const a = ipaddr.parse(item);
        ranges.push([a, a.kind() === 'ipv4' ? 32 : 128]);
      }
    } catch {
      // Config validation owns error reporting; an unparsable entry simply never matches.
    }
  }
  return (meta) => {
    if (!meta.ip || !ipaddr.isValid(meta.ip)) return false;
    let addr = ipaddr.parse(meta.ip);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    return ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  };
}

/** Compile the rules that have conditions; the rest are selectable by id only. */
export function compileConditionalRules(rules: readonly SettingsRule[]): ConditionalRule[] {
  const out: ConditionalRule[] = [];
  for (const rule of rules) {
    const c = rule.conditions;
    if (!c) continue;
    const checks: Check[] = [];
    if (c.ip?.length) checks.push(compileIp(c.ip));
    if (c.from?.length) {
      const m = anyOf(c.from);
      checks.push((meta) => meta.from !== undefined && m(stripBrackets(meta.from)));
    }
    if (c.rcpt?.length) {
      const m = anyOf(c.rcpt);
      checks.push((meta) => meta.rcpt.some((r) => m(stripBrackets(r))));
    }
    if (c.user?.length) {
      const m = anyOf(c.user);
      checks.push((meta) => meta.user !== undefined && m(meta.user));
    }
    if (c.authenticated !== undefined) {
      const want = c.authenticated;
      checks.push((meta) => (meta.user !== undefined && meta.user !== '') === want);
    }
    if (c.requestHeader) {
      for (const [name, pattern] of Object.entries(c.requestHeader)) {
        const key = name.toLowerCase();
        const re = /^\/(.*)\/([a-z]*)$/.exec(pattern);
        const rx = new RegExp(re ? re[1]! : pattern, re ? re[2]!.replace(/[^imsu]/g, '') : '');
        checks.push((meta) => (meta.requestHeaders.get(key) ?? []).some((v) => rx.test(v)));
      }
    }
    if (c.selector?.length) {
      // Checked when the config loaded (schema.ts): compiling cannot fail here.
      const selectors = c.selector.map((text) => compileSelector(text));
      // Rspamd: any value, even '', counts; an empty list does not.
      checks.push((_meta, task) => selectors.some((s) => {
        const v = s.combine(task());
        return v !== undefined && (typeof v === 'string' || v.length > 0);
      }));
    }
    if (checks.length === 0) continue;
    out.push({ id: rule.id, priority: rule.priority ?? LOW_SETTINGS_PRIORITY, matches: (meta, task) => checks.every((f) => f(meta, task)) });
  }
  // Highest priority first; inside one priority, alphabetical (Rspamd), and in 3.4 the last
  // applied rule replaces the earlier ones, so the alphabetically last match of the level wins.
  return out.sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The rule that applies to this request among rules with priority above `floor`, or undefined.
 * Only the first priority level with a match counts.
 */
export function matchRule(rules: readonly ConditionalRule[], meta: ScanMeta, floor: number, task: () => SelectorTask): ConditionalRule | undefined {
  let found: ConditionalRule | undefined;
  for (const r of rules) {
    if (r.priority <= floor) break;
    if (found && r.priority < found.priority) break;
    if (r.matches(meta, task)) found = r;
  }
  return found;
}
