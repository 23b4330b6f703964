import { getDomain } from 'tldts';
import type { MapHandle, ModuleMaps, Task } from '../../plugin-api/index.js';
import { authOutcome } from '../../module-helpers/auth-results.js';
import type { WhitelistRule } from './config.js';

const org = (d: string): string => getDomain(d.toLowerCase(), { allowPrivateDomains: true }) ?? d.toLowerCase();

export interface CompiledRule {
  symbol: string;
  rule: WhitelistRule;
  /** Inline domains, reduced to registrable domains. */
  domains: ReadonlySet<string>;
  /** Map sources (files, http); their entries are read as written, so both forms are looked up. */
  maps: readonly MapHandle[];
}

export async function compileRule(symbol: string, rule: WhitelistRule, maps: ModuleMaps): Promise<CompiledRule> {
  const inline = typeof rule.domains === 'string' ? [] : rule.domains;
  const sources = [typeof rule.domains === 'string' ? rule.domains : undefined, rule.domains_file].filter((u): u is string => u !== undefined);
  const handles = await Promise.all(sources.map((url) => maps.add({ url, kind: 'set', description: `whitelist ${symbol} domains` })));
  return { symbol, rule, domains: new Set(inline.map(org)), maps: handles };
}

/** The rule lists `d` (a registrable domain): inline, or in one of its maps. */
function lists(rule: CompiledRule, d: string): boolean {
  return rule.domains.has(d) || rule.maps.some((m) => m.has(d));
}

/** A rule with neither inline domains nor a map cannot fire. */
export const hasDomains = (rule: CompiledRule): boolean => rule.domains.size > 0 || rule.maps.length > 0;

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
    for (const compiled of rules) {
      const { symbol, rule } = compiled;
      for (const d of listed) {
        if (!lists(compiled, d)) continue;
        const valid = (!rule.valid_spf || auth.spf.has(d)) && (!rule.valid_dkim || auth.dkim.has(d)) && (!rule.valid_dmarc || auth.dmarc.has(d));
        if (valid !== rule.blacklist) {
          task.insert(symbol, 1, d);
          break;
        }
      }
    }
  };
}
