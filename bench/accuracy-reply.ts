// What the accuracy bench reads from a server's replies: the score, action and symbols of a
// /checkv2 reply, the `add header` threshold from the controller's /actions, and the checks that
// keep the two servers' tables comparable (the verdict the reply's action gives against the one
// the score gives; the symbols that fire on every message and so say nothing about it).
import type { ScanResultBody } from '../src/client/types.js';
import type { CorpusMessage } from './corpus.js';

export interface ScanOutcome {
  msg: CorpusMessage;
  score: number;
  action: string;
  /**
   * The reply's `required_score`: Rspamd 3.4 puts the highest threshold there (reject, 15), not
   * the `add header` one the tables use, so it is kept only to show which it was.
   */
  requiredScore?: number;
  symbols: Record<string, number>;
  /** Spam probability from the BAYES_SPAM/BAYES_HAM option, undefined without one. */
  bayesProb?: number;
}

/** The first option of BAYES_SPAM/BAYES_HAM ("99.87%" in both servers) as a spam probability. */
function bayesProbOf(symbols: Record<string, { options?: string[] }>): number | undefined {
  for (const [name, sign] of [['BAYES_SPAM', 1], ['BAYES_HAM', -1]] as const) {
    const opt = symbols[name]?.options?.[0];
    const pct = opt === undefined ? Number.NaN : Number.parseFloat(opt);
    if (Number.isFinite(pct)) return 0.5 + (sign * pct) / 200;
  }
  return undefined;
}

/** One /checkv2 reply as the bench keeps it; a reply without a numeric score is an error of the run. */
export function scanOutcomeOf(msg: CorpusMessage, result: ScanResultBody): ScanOutcome {
  if (typeof result.score !== 'number' || !Number.isFinite(result.score)) throw new Error(`${msg.name}: reply without a score${result.is_skipped ? ' (skipped)' : ''}`);
  const syms = result.symbols ?? {};
  const prob = bayesProbOf(syms);
  return {
    msg,
    score: result.score,
    action: typeof result.action === 'string' ? result.action : '',
    ...(typeof result.required_score === 'number' ? { requiredScore: result.required_score } : {}),
    // Keyed by the object's keys: a symbol object's `name` is the server's word, the key the wire's.
    symbols: Object.fromEntries(Object.entries(syms).map(([k, s]) => [s.name ?? k, typeof s.score === 'number' ? s.score : 0])),
    ...(prob !== undefined ? { bayesProb: prob } : {}),
  };
}

/** Rspamd's controller /actions reply: `[{ action, value }]`, value null for an action without a threshold. */
export function addHeaderThreshold(actionsReply: unknown): number {
  if (!Array.isArray(actionsReply)) throw new Error('/actions: expected an array');
  for (const a of actionsReply as Array<{ action?: unknown; value?: unknown }>) {
    const name = typeof a?.action === 'string' ? a.action.replace('_', ' ') : '';
    if (name === 'add header' && typeof a.value === 'number' && Number.isFinite(a.value)) return a.value;
  }
  throw new Error('/actions: no threshold for "add header"');
}

/** Actions that mark the message as spam to the user (the header, the subject, or refusing it). */
const SPAM_ACTIONS = new Set(['add header', 'rewrite subject', 'soft reject', 'reject']);

export function actionMarksSpam(action: string): boolean {
  return SPAM_ACTIONS.has(action.toLowerCase().replace('_', ' '));
}

/**
 * Messages whose action disagrees with `score ≥ threshold` (a forced action, or a threshold other
 * than the one read): the tables count by score, so these are listed beside them.
 */
export function actionDisagreements(outcomes: readonly ScanOutcome[], threshold: number): ScanOutcome[] {
  // soft reject is Rspamd's temporary failure (e.g. a rate limit), not a verdict on the content.
  return outcomes.filter((o) => o.action.toLowerCase() !== 'soft reject' && actionMarksSpam(o.action) !== o.score >= threshold);
}

/** Symbols present (any score, zero included) in at least `share` of the outcomes, most frequent first. */
export function commonSymbols(outcomes: readonly ScanOutcome[], share: number): Array<{ name: string; hits: number; scores: number[] }> {
  const seen = new Map<string, { hits: number; scores: Set<number> }>();
  for (const o of outcomes) {
    for (const [name, score] of Object.entries(o.symbols)) {
      const s = seen.get(name) ?? { hits: 0, scores: new Set<number>() };
      s.hits++;
      s.scores.add(score);
      seen.set(name, s);
    }
  }
  const min = Math.max(1, Math.ceil(share * outcomes.length));
  return [...seen.entries()]
    .filter(([, s]) => s.hits >= min)
    .map(([name, s]) => ({ name, hits: s.hits, scores: [...s.scores].sort((a, b) => a - b) }))
    .sort((a, b) => b.hits - a.hits || a.name.localeCompare(b.name));
}

/** The refusal kinds refusalKind names (rather than quoting the text). */
export const KNOWN_REFUSAL = /^\d+ (already learned|too few tokens|learn conditions denied)/;

/**
 * A learn refusal's kind, so refusals of one kind count together: its status and its text without
 * the message-specific parts (message ids, counts). Both servers' wordings: "<id> has been already
 * learned as spam, ignore it", "<id> contains less tokens than required for … classifier: 5 < 11",
 * "… learn conditions denied learning spam in bayes: already in class spam; probability 99.87%".
 */
export function refusalKind(status: number, text: string): string {
  if (/already learned/.test(text)) return `${status} already learned`;
  if (/less tokens/.test(text)) return `${status} too few tokens`;
  const reason = /: (already in class \w+)/.exec(text)?.[1];
  if (/learn conditions denied/.test(text)) return `${status} learn conditions denied${reason ? ` (${reason})` : ''}`;
  return `${status} ${text.replace(/<[^>]*>?/g, '<id>').replace(/\d+(\.\d+)?/g, 'N').slice(0, 60)}`;
}

/** Chunks of a chunked learn reply read at most (each one advances, so this only bounds the work). */
const MAX_REPLY_CHUNKS = 1000;

/** The body of a `Transfer-Encoding: chunked` reply; stops at the last chunk or at the first malformed size. */
function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (let n = 0; n < MAX_REPLY_CHUNKS && at < body.length; n++) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = Number.parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isInteger(size) || size <= 0) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * A controller's whole learn reply (read until the server closed the connection): the status and
 * the refusal's text, the JSON body's `error` if there is one, else the reason phrase (mailsift's
 * 204 carries its text there only). Whatever the status, a body is read: Rspamd 3.4 sends one
 * with its 204.
 */
export function parseLearnReply(raw: Buffer): { status: number; text: string } {
  const headEnd = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, headEnd < 0 ? raw.length : headEnd).toString('latin1');
  const line = /^HTTP\/1\.[01] (\d{3})(?: ([^\r\n]*))?/.exec(head);
  if (!line) throw new Error(`not an HTTP reply: ${JSON.stringify(head.slice(0, 80))}`);
  const reason = line[2] ?? '';
  let body = headEnd < 0 ? Buffer.alloc(0) : raw.subarray(headEnd + 4);
  if (/^transfer-encoding:\s*chunked\s*$/im.test(head)) body = dechunk(body);
  let text = reason;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    if (typeof parsed?.error === 'string') text = parsed.error;
  } catch { /* no JSON body: the reason phrase is the text */ }
  return { status: Number(line[1]), text };
}
