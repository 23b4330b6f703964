// The FUZZY_CALLBACK symbol: hash the message per rule, CHECK against a read server, turn the
// replies into symbols. A storage that does not answer is a logged skip, never a failed scan.
import ipaddr from 'ipaddr.js';
import type { Logger, Task } from '../../plugin-api/index.js';
import { messageHashes } from '../../rule-libs/fuzzy/message-hashes.js';
import { checkHashes } from '../../rule-libs/fuzzy/ops.js';
import type { FuzzyRule } from '../../rule-libs/fuzzy/rule.js';
import { interpretReplies, strongestBySymbol, textFacts, type FuzzyResult } from '../../rule-libs/fuzzy/score.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

export function compileWhitelist(list: readonly string[]): Range[] {
  return list.map((s) => {
    if (s.includes('/')) return ipaddr.parseCIDR(s);
    const a = ipaddr.parse(s);
    return [a, a.kind() === 'ipv4' ? 32 : 128] as Range;
  });
}

function whitelisted(ip: string | undefined, ranges: readonly Range[]): boolean {
  if (!ip || ranges.length === 0 || !ipaddr.isValid(ip)) return false;
  let a = ipaddr.parse(ip);
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
  return ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
}

/** What other modules (milter_headers fuzzy-hashes, logging) can read from task.cache. */
export interface FuzzyTaskFacts {
  matched: Array<FuzzyResult & { rule: string }>;
  /** `rule:type:hex` of every queried hash. */
  queried: string[];
}

export function makeFuzzyCheck(rules: readonly FuzzyRule[], whitelist: readonly Range[], log: Logger) {
  return async (task: Task): Promise<void> => {
    if (whitelisted(task.meta.ip, whitelist)) return;
    const msg = task.message;
    const facts = textFacts(msg.textParts);
    const seen: FuzzyTaskFacts = { matched: [], queried: [] };
    await Promise.all(rules.map(async (rule) => {
      const hashes = messageHashes(msg, rule);
      if (hashes.length === 0) return;
      for (const h of hashes) seen.queried.push(`${rule.name}:${h.type}:${h.digest.toString('hex')}`);
      const out = await checkHashes(rule, hashes, (req) => task.udp.exchange(req));
      if (out.failed) {
        if (!task.signal.aborted) log.warn('fuzzy storage did not answer', { rule: rule.name, server: out.server && `${out.server.host}:${out.server.port}` });
        return;
      }
      const { results, errors } = interpretReplies(rule, out.pairs, facts);
      for (const e of errors) task.insert(e, 1, rule.name);
      for (const r of results) seen.matched.push({ ...r, rule: rule.name });
      for (const [symbol, r] of strongestBySymbol(results)) task.insert(symbol, r.weight, r.options);
    }));
    task.cache.set('fuzzy_check', seen);
  };
}
