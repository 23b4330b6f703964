// Runs a set of lists over one message: collects every rule's lookups, sends them all at once
// (identical names once), waits under one deadline, then inserts whitelist results first so
// blacklist results for elements a whitelist vouched for are dropped, as Rspamd does.
import { withDeadline } from '../../plugin-api/index.js';
import type { DnsResult, Task } from '../../plugin-api/index.js';
import { hitsForAnswers } from './answers.js';
import { collectRequests } from './candidates.js';
import type { RblRequest, RuleMaps } from './candidates.js';
import type { CompiledRule } from './compile.js';
import type { OutageLog } from '../../module-helpers/outage-log.js';

export interface PreparedRule { rule: CompiledRule; maps: RuleMaps }

/** Task cache key of the whitelisted elements (a promise: later runs wait for the early one). */
const WHITE_KEY = 'rbl:whitelisted';
type WhiteMap = Map<string, Set<string>>;

/** Answers that are not failures: the element is simply not listed. */
const NOT_LISTED = new Set(['NXDOMAIN', 'NODATA']);
/** Not the list's fault: the task is ending, or this task used up its lookups. */
const SILENT = new Set(['CANCELLED', 'LIMIT']);

interface Outcome { answers: string[]; error?: string; code?: string }

const TIMED_OUT: Outcome = { answers: [], error: 'query timed out', code: 'TIMEOUT' };

function outcomeOf(r: DnsResult): Outcome {
  if (r.ok) return { answers: r.results.filter((v): v is string => typeof v === 'string') };
  return { answers: [], error: r.error, code: r.code };
}

/**
 * The lookups of one check, each name once: all are started before any is awaited, and they are
 * awaited together under one deadline. A message makes dozens of list lookups, most answered from
 * the resolver's cache: those are taken at once (no promise), the others cost one promise each.
 */
class LookupBatch {
  readonly #task: Task;
  readonly #outcomes = new Map<string, Outcome>();
  readonly #started = new Set<string>();
  readonly #waits: Array<Promise<unknown>> = [];
  /** Two-step requests → the pairs their first step found. */
  readonly #resolved = new Map<RblRequest, Array<{ orig: string; name: string }>>();
  /** Set once the check stopped waiting: a first step answering later starts nothing more. */
  #settled = false;

  constructor(task: Task) {
    this.#task = task;
  }

  #start(name: string, forced: boolean): void {
    if (this.#settled || this.#started.has(name)) return;
    this.#started.add(name);
    const req = { type: 'A', name, forced };
    const hit = this.#task.dns.cached(req);
    if (hit) this.#outcomes.set(name, outcomeOf(hit));
    else this.#waits.push(this.#task.dns.request(req).then((r) => { this.#outcomes.set(name, outcomeOf(r)); }));
  }

  /**
   * A request's lookups: its name, or for two-step requests (SPAMHAUS_ZEN_URIBL) the name's
   * addresses first and then each address in the list.
   */
  startRequest(req: RblRequest, zone: string): void {
    if (!req.resolveIp) {
      this.#start(req.name, req.forced);
      return;
    }
    this.#waits.push(this.#task.dns.request({ type: 'A', name: req.name, forced: req.forced }).then((r) => {
      if (this.#settled) return undefined;
      const pairs = outcomeOf(r).answers.map((ip) => ({ orig: `${ip}:${req.orig}`, name: `${ip.split('.').reverse().join('.')}.${zone}` }));
      this.#resolved.set(req, pairs);
      const before = this.#waits.length;
      for (const p of pairs) this.#start(p.name, req.forced);
      return Promise.all(this.#waits.slice(before));
    }));
  }

  /** The (element, queried name) pairs whose outcomes answer `req`. */
  pairs(req: RblRequest): Array<{ orig: string; name: string }> {
    return req.resolveIp ? this.#resolved.get(req) ?? [] : [{ orig: req.orig, name: req.name }];
  }

  /** Resolves when every lookup has an outcome or the deadline passed, whichever is first. */
  async settle(timeoutSeconds: number): Promise<void> {
    try {
      await withDeadline(Promise.all(this.#waits), timeoutSeconds * 1000);
    } finally {
      this.#settled = true;
    }
  }

  /** The outcome for `name`; a lookup still unanswered at the deadline timed out. */
  outcome(name: string): Outcome {
    return this.#outcomes.get(name) ?? TIMED_OUT;
  }
}

function insertOutcome(task: Task, rule: CompiledRule, req: RblRequest, orig: string, o: Outcome, white: WhiteMap, labels: Set<string>, failed: OutageLog): void {
  if (o.error !== undefined) {
    if (NOT_LISTED.has(o.code ?? '')) return;
    if (SILENT.has(o.code ?? '')) {
      task.log.debug('rbl lookup not made', { rule: rule.key, name: req.name, error: o.error });
      return;
    }
    failed(task, { rule: rule.key, name: req.name, error: o.error });
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
 * elements its whitelist lists found with groups that run after it. `inheritsWhitelist`: this
 * group waits for those elements before it looks anything up (see lateNeedsEarlyWhitelist).
 */
export function makeRblCheck(rules: readonly PreparedRule[], timeoutSeconds: number, failed: OutageLog, publishesWhitelist: boolean, inheritsWhitelist = !publishesWhitelist): (task: Task) => Promise<void> {
  return async (task) => {
    let publish: ((w: WhiteMap) => void) | undefined;
    let inherited: WhiteMap = new Map();
    if (publishesWhitelist) {
      task.cache.set(WHITE_KEY, new Promise<WhiteMap>((resolve) => { publish = resolve; }));
    } else if (inheritsWhitelist) {
      const p = task.cache.get(WHITE_KEY) as Promise<WhiteMap> | undefined;
      if (p) inherited = await p;
    }
    const white: WhiteMap = new Map(inherited);
    try {
      await runRules(task, rules, timeoutSeconds, white, inherited, failed);
    } finally {
      publish?.(white);
    }
  };
}

async function runRules(task: Task, rules: readonly PreparedRule[], timeoutSeconds: number, white: WhiteMap, known: WhiteMap, failed: OutageLog): Promise<void> {
  const batch = new LookupBatch(task);
  const planned = rules.map(({ rule, maps }) => {
    const reqs = [...(collectRequests(task, rule, maps, known)?.values() ?? [])];
    for (const req of reqs) batch.startRequest(req, rule.zone);
    return { rule, reqs };
  });
  await batch.settle(timeoutSeconds);
  // Whitelists first: their answers decide which blacklist answers count.
  for (const { rule, reqs } of planned) {
    if (!rule.isWhitelist) continue;
    for (const req of reqs) {
      for (const p of batch.pairs(req)) insertOutcome(task, rule, req, p.orig, batch.outcome(p.name), white, req.labels, failed);
    }
  }
  for (const { rule, reqs } of planned) {
    if (rule.isWhitelist) continue;
    for (const req of reqs) {
      const labels = rule.ignoreWhitelist ? req.labels : new Set([...req.labels].filter((l) => !white.get(req.orig)?.has(l)));
      if (labels.size === 0) continue;
      for (const p of batch.pairs(req)) insertOutcome(task, rule, req, p.orig, batch.outcome(p.name), white, labels, failed);
    }
  }
}
