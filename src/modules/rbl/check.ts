// Runs a set of lists over one message: collects every rule's lookups, sends them all at once
// (identical names once), waits under one deadline, then inserts whitelist results first so
// blacklist results for elements a whitelist vouched for are dropped, as Rspamd does.
import type { DnsResult, Task } from '../../plugin-api/index.js';
import { hitsForAnswers } from './answers.js';
import { collectRequests } from './candidates.js';
import type { RblRequest, RuleMaps } from './candidates.js';
import type { CompiledRule } from './compile.js';

export interface PreparedRule { rule: CompiledRule; maps: RuleMaps }

/** Task cache key of the whitelisted elements (a promise: later runs wait for the early one). */
const WHITE_KEY = 'rbl:whitelisted';
type WhiteMap = Map<string, Set<string>>;

/** Answers that are not failures: the element is simply not listed. */
const NOT_LISTED = new Set(['NXDOMAIN', 'NODATA']);
/** Not the list's fault: the task is ending, or this task used up its lookups. */
const SILENT = new Set(['CANCELLED', 'LIMIT']);

interface Outcome { answers: string[]; error?: string; code?: string }

type Lookup = (name: string, forced: boolean) => Promise<DnsResult | 'deadline'>;

async function resolveRequest(req: RblRequest, rule: CompiledRule, lookup: Lookup): Promise<Array<{ orig: string; outcome: Outcome }>> {
  const one = async (name: string): Promise<Outcome> => {
    const r = await lookup(name, req.forced);
    if (r === 'deadline') return { answers: [], error: 'query timed out', code: 'TIMEOUT' };
    if (r.ok) return { answers: r.results.filter((v): v is string => typeof v === 'string') };
    return { answers: [], error: r.error, code: r.code };
  };
  if (!req.resolveIp) return [{ orig: req.orig, outcome: await one(req.name) }];
  // Two steps (SPAMHAUS_ZEN_URIBL): the name's addresses, then each address in the list.
  const addrs = await one(req.name);
  const out: Array<{ orig: string; outcome: Outcome }> = [];
  await Promise.all(addrs.answers.map(async (ip) => {
    const rev = ip.split('.').reverse().join('.');
    out.push({ orig: `${ip}:${req.orig}`, outcome: await one(`${rev}.${rule.zone}`) });
  }));
  return out;
}

function insertOutcome(task: Task, rule: CompiledRule, req: RblRequest, orig: string, o: Outcome, white: WhiteMap, labels: Set<string>): void {
  if (o.error !== undefined) {
    if (NOT_LISTED.has(o.code ?? '')) return;
    if (SILENT.has(o.code ?? '')) {
      task.log.debug('rbl lookup not made', { rule: rule.key, name: req.name, error: o.error });
      return;
    }
    task.log.info('rbl lookup failed', { rule: rule.key, name: req.name, error: o.error });
    task.insert(`${rule.symbol}_FAIL`, 1, `${orig}:${o.error}`);
    return;
  }
  for (const h of hitsForAnswers(rule, orig, labels, o.answers)) {
    task.insert(h.symbol, 1, h.option);
    if (rule.whiteSymbols.has(h.symbol)) {
      let s = white.get(req.orig);
      if (!s) white.set(req.orig, (s = new Set()));
      s.add(h.label);
    }
  }
}

/**
 * The check of one group of rules. `publishesWhitelist`: this group runs first and shares the
 * elements its whitelist lists found with groups that run after it.
 */
export function makeRblCheck(rules: readonly PreparedRule[], timeoutSeconds: number, publishesWhitelist: boolean): (task: Task) => Promise<void> {
  return async (task) => {
    let publish: ((w: WhiteMap) => void) | undefined;
    let inherited: WhiteMap = new Map();
    if (publishesWhitelist) {
      task.cache.set(WHITE_KEY, new Promise<WhiteMap>((resolve) => { publish = resolve; }));
    } else {
      const p = task.cache.get(WHITE_KEY) as Promise<WhiteMap> | undefined;
      if (p) inherited = await p;
    }
    const white: WhiteMap = new Map(inherited);
    try {
      await runRules(task, rules, timeoutSeconds, white, inherited);
    } finally {
      publish?.(white);
    }
  };
}

async function runRules(task: Task, rules: readonly PreparedRule[], timeoutSeconds: number, white: WhiteMap, known: WhiteMap): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => { timer = setTimeout(resolve, timeoutSeconds * 1000, 'deadline'); });
  const inflight = new Map<string, Promise<DnsResult | 'deadline'>>();
  const lookup: Lookup = (name, forced) => {
    let p = inflight.get(name);
    if (!p) {
      p = Promise.race([task.dns.request({ type: 'A', name, forced }), deadline]);
      inflight.set(name, p);
    }
    return p;
  };
  try {
    const started = rules.map(({ rule, maps }) => {
      const reqs = collectRequests(task, rule, maps, known);
      const pending = [...(reqs?.values() ?? [])].map(async (req) => ({ req, results: await resolveRequest(req, rule, lookup) }));
      return { rule, pending };
    });
    // Whitelists first: their answers decide which blacklist answers count.
    for (const { rule, pending } of started.filter((s) => s.rule.isWhitelist)) {
      for (const { req, results } of await Promise.all(pending)) {
        for (const r of results) insertOutcome(task, rule, req, r.orig, r.outcome, white, req.labels);
      }
    }
    await Promise.all(started.filter((s) => !s.rule.isWhitelist).map(async ({ rule, pending }) => {
      for (const { req, results } of await Promise.all(pending)) {
        const labels = rule.ignoreWhitelist ? req.labels : new Set([...req.labels].filter((l) => !white.get(req.orig)?.has(l)));
        if (labels.size === 0) continue;
        for (const r of results) insertOutcome(task, rule, req, r.orig, r.outcome, white, labels);
      }
    }));
  } finally {
    clearTimeout(timer);
  }
}
