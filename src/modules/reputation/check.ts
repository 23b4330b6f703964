// The reputation of a message's client address, sender domain and link domains: scored from the
// verdicts counted for them (a filter), and this scan's verdict counted (after the verdict).
import { createHash } from 'node:crypto';
import type { Task } from '../../plugin-api/index.js';
import { isLocalAddress } from '../../module-helpers/local-address.js';
import type { StoreOutage } from '../../module-helpers/outage-log.js';
import type { ReputationConfig } from './config.js';
import type { Counts, ReputationStore, Verdict } from './store.js';
import { REPUTATION_SCORED } from './symbols.js';
import { messageTokens } from './tokens.js';
import type { Token, TokenKind } from './tokens.js';

const SYMBOL_PREFIX: Record<TokenKind, string> = { ip: 'IP_REPUTATION', sender: 'SENDER_REP', url: 'URL_REPUTATION' };
/** Bytes of the raw message hashed for a message with no Message-ID. */
const ID_BYTES = 16 * 1024;

export interface ReputationDeps {
  cfg: ReputationConfig;
  store: ReputationStore;
  outage: StoreOutage;
}

function skipped(task: Task, cfg: ReputationConfig): boolean {
  if (task.meta.raw) return true;
  if (!cfg.check_authed && task.meta.user) return true;
  return !cfg.check_local && task.meta.ip !== undefined && isLocalAddress(task.meta.ip);
}

/** (spam − ham) / n in [-1, 1] once `n` reaches the lower bound; undefined before. */
function balance(c: Counts, cfg: ReputationConfig): number | undefined {
  return c.n >= cfg.lower_bound ? (c.spam - c.ham) / c.n : undefined;
}

function insertBalance(task: Task, kind: TokenKind, b: number, options: string[], cfg: ReputationConfig): void {
  if (b >= cfg.min_ratio) task.insert(`${SYMBOL_PREFIX[kind]}_SPAM`, b, options);
  else if (b <= -cfg.min_ratio) task.insert(`${SYMBOL_PREFIX[kind]}_HAM`, -b, options);
}

export async function scoreReputation(task: Task, deps: ReputationDeps): Promise<void> {
  const { cfg, store } = deps;
  if (skipped(task, cfg)) return;
  const tokens = messageTokens(task, cfg);
  if (tokens.length === 0) return;
  let counts: Counts[];
  try {
    counts = await Promise.all(tokens.map((t) => store.read(t.kind, t.value)));
  } catch (e) {
    deps.outage(task, 'reputation not scored', e);
    task.insert('REPUTATION_FAIL', 1, e instanceof Error ? e.message : String(e));
    return;
  }
  // Links: the balances of the known domains, weighted by how many links go there.
  let urlWeight = 0;
  let urlSum = 0;
  const urlOptions: string[] = [];
  tokens.forEach((t, i) => {
    const c = counts[i]!;
    const b = balance(c, cfg);
    if (b === undefined) return;
    const option = `${t.value}: ${c.spam}/${c.ham}/${c.n}`;
    if (t.kind !== 'url') {
      insertBalance(task, t.kind, b, [option], cfg);
      return;
    }
    urlWeight += t.weight;
    urlSum += t.weight * b;
    urlOptions.push(option);
  });
  if (urlWeight > 0) insertBalance(task, 'url', urlSum / urlWeight, urlOptions, cfg);
}

/** This scan's verdict without the reputation symbols' own share. */
function verdictOf(task: Task, cfg: ReputationConfig): Verdict | undefined {
  const v = task.verdict();
  // Another module decided the action (GTUBE, greylisting, settings): the score says little.
  if (v.preResult) return undefined;
  let own = 0;
  for (const s of v.symbols) if (REPUTATION_SCORED.includes(s.name)) own += s.score;
  const score = v.score - own;
  if (score >= cfg.spam_score) return 'spam';
  if (score < cfg.ham_score) return 'ham';
  return 'other';
}

function messageId(task: Task): string {
  const h = createHash('sha256');
  const mid = task.message.messageId;
  if (mid) h.update('mid\0').update(mid);
  else h.update('raw\0').update(task.message.raw.subarray(0, ID_BYTES));
  return h.digest('base64url').slice(0, 24);
}

export async function countVerdict(task: Task, deps: ReputationDeps): Promise<void> {
  const { cfg, store } = deps;
  if (skipped(task, cfg)) return;
  const verdict = verdictOf(task, cfg);
  if (!verdict) return;
  const tokens: Token[] = messageTokens(task, cfg);
  if (tokens.length === 0) return;
  try {
    if (!(await store.firstSight(messageId(task)))) return;
    await Promise.all(tokens.map((t) => store.add(t.kind, t.value, verdict)));
  } catch (e) {
    deps.outage(task, 'verdict not counted', e);
  }
}
