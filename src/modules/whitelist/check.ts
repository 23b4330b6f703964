import { readFileSync } from 'node:fs';
import { getDomain } from 'tldts';
import type { Task } from '../../plugin-api/index.js';
import { authOutcome } from '../shared/auth-results.js';
import type { WhitelistRule } from './config.js';

const org = (d: string): string => getDomain(d.toLowerCase(), { allowPrivateDomains: true }) ?? d.toLowerCase();

export interface CompiledRule { symbol: string; rule: WhitelistRule; domains: ReadonlySet<string> }

export function compileRule(symbol: string, rule: WhitelistRule): CompiledRule {
  const list = [...rule.domains];
  if (rule.domains_file) {
    for (const line of readFileSync(rule.domains_file, 'utf8').split('\n')) {
      const d = line.replace(/#.*/, '').trim();
      if (d) list.push(d);
    }
  }
  return { symbol, rule, domains: new Set(list.map(org)) };
}

/** Registrable domains each check authenticated for this message. */
function authenticated(task: Task): { spf: Set<string>; dkim: Set<string>; dmarc: Set<string> } {
  const spf = new Set<string>();
  const dkim = new Set<string>();
  const dmarc = new Set<string>();
  const s = authOutcome(task, 'spf');
  if (s?.result === 'pass') spf.add(org(s.domain));
  for (const sig of authOutcome(task, 'dkim')?.signatures ?? []) if (sig.result === 'pass') dkim.add(org(sig.domain));
  const m = authOutcome(task, 'dmarc');
  if (m?.result === 'pass') dmarc.add(org(m.domain));
  return { spf, dkim, dmarc };
}

function candidates(task: Task): string[] {
  const out = new Set<string>();
  for (const a of task.message.from) if (a.address.includes('@')) out.add(org(a.address.slice(a.address.lastIndexOf('@') + 1)));
  const env = task.envelopeFrom?.domain;
  if (env) out.add(org(env));
  return [...out];
}

export function makeWhitelistCheck(rules: readonly CompiledRule[]): (task: Task) => void {
  return (task) => {
    const listed = candidates(task);
    if (listed.length === 0) return;
    const auth = authenticated(task);
    for (const { symbol, rule, domains } of rules) {
      for (const d of listed) {
        if (!domains.has(d)) continue;
        const valid = (!rule.valid_spf || auth.spf.has(d)) && (!rule.valid_dkim || auth.dkim.has(d)) && (!rule.valid_dmarc || auth.dmarc.has(d));
        if (valid !== rule.blacklist) {
          task.insert(symbol, 1, d);
          break;
        }
      }
    }
  };
}
