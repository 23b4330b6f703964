// What a message's reputation is kept for: the client address (masked), the sender's domain
// (marked when no SPF, DKIM or DMARC pass vouches for it, so forged mail does not stain the real
// domain) and the registrable domains its links point to.
import { getDomain } from 'tldts';
import type { Task } from '../../plugin-api/index.js';
import { maskedAddress } from '../../module-helpers/masked-address.js';
import type { ReputationConfig } from './config.js';

/** Symbols of an authentication pass that make the From domain the sender's own. */
const AUTHENTICATED = ['DMARC_POLICY_ALLOW', 'R_DKIM_ALLOW', 'R_SPF_ALLOW'];
/** Marks a sender domain no authentication vouched for. */
export const UNVERIFIED = '?';

export type TokenKind = 'ip' | 'sender' | 'url';

export interface Token {
  kind: TokenKind;
  value: string;
  /** How many of the message's links point there (1 for the others). */
  weight: number;
}

export function ipToken(ip: string | undefined, cfg: ReputationConfig): string | undefined {
  return maskedAddress(ip, cfg.ipv4_mask, cfg.ipv6_mask) || undefined;
}

export function senderToken(task: Task): string | undefined {
  const from = task.message.from[0]?.domain || task.envelopeFrom?.domain;
  if (!from) return undefined;
  const domain = getDomain(from.toLowerCase()) ?? from.toLowerCase();
  const vouched = AUTHENTICATED.some((s) => task.hasSymbol(s));
  return vouched ? domain : domain + UNVERIFIED;
}

/** Registrable domains of the links (not the ones only shown as link text), most frequent first. */
export function urlTokens(task: Task, max: number): Token[] {
  const counts = new Map<string, number>();
  for (const u of task.message.urls) {
    if (u.isEmail || u.flags.has('html_displayed')) continue;
    const d = u.tld ?? u.host;
    if (!d) continue;
    counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, max).map(([value, weight]) => ({ kind: 'url', value, weight }));
}

export function messageTokens(task: Task, cfg: ReputationConfig): Token[] {
  const out: Token[] = [];
  const ip = ipToken(task.meta.ip, cfg);
  if (ip) out.push({ kind: 'ip', value: ip, weight: 1 });
  const sender = senderToken(task);
  if (sender) out.push({ kind: 'sender', value: sender, weight: 1 });
  out.push(...urlTokens(task, cfg.max_urls));
  return out;
}
