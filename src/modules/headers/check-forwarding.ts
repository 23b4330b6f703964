// Forwarding detection (Rspamd's rules/forwarding.lua, group `forwarding`, all scored 0): they
// exist so that composites can take the weight off FORGED_SENDER / FORGED_RECIPIENTS / SPF
// failures that a forwarder causes by design. Each needs the envelope the MTA passed.
import type { Task } from '../../plugin-api/index.js';
import { mimeRecipients } from './util.js';

/** The one envelope recipient of a forwarded copy; forwarders deliver to a single address. */
function singleRcpt(task: Task): { address: string; local: string; domain: string } | undefined {
  const rcpt = task.envelopeRcpt;
  if (rcpt.length !== 1 || !rcpt[0]!.address) return undefined;
  return rcpt[0];
}

/** Google forwarding: MAIL FROM `user+caf_=rcpt=domain@…`, the recipient folded into the tag. */
export function checkFwdGoogle(task: Task): void {
  const from = task.envelopeFrom;
  const rcpt = singleRcpt(task);
  if (!from?.address || !rcpt) return;
  const user = from.local.toLowerCase();
  const tag = `+caf_=${rcpt.address.toLowerCase().replaceAll('@', '=')}`;
  if (!user.includes(tag)) return;
  const cut = user.lastIndexOf('+caf_=');
  if (cut > 0) task.insert('FWD_GOOGLE', 1, `${user.slice(0, cut)}@${from.domain}`);
}

/** Yandex / Mail.ru: their relays (by client host name) mark forwarded copies with a header. */
function makeProviderCheck(symbol: string, host: RegExp, header: string): (task: Task) => void {
  return (task) => {
    if (!task.envelopeFrom?.address || task.envelopeRcpt.length === 0) return;
    const hn = task.meta.hostname?.toLowerCase();
    if (hn && host.test(hn) && task.message.headers.has(header)) task.insert(symbol);
  };
}

export const checkFwdYandex = makeProviderCheck('FWD_YANDEX', /\.yandex\.[a-z]+$/, 'x-yandex-forward');
export const checkFwdMailru = makeProviderCheck('FWD_MAILRU', /\.mail\.ru$/, 'x-mailru-forward');

/** Sender Rewriting Scheme: MAIL FROM `SRS0=hash=tt=domain=user@forwarder`, naming the recipient. */
export function checkFwdSrs(task: Task): void {
  const from = task.envelopeFrom;
  const rcpt = singleRcpt(task);
  if (!from?.address || !rcpt) return;
  const user = from.local.toLowerCase();
  // Rspamd's test reads the recipient as a Lua pattern; a plain substring is what it means.
  if (/^srs[01]=/.test(user) && user.includes(`=${rcpt.domain.toLowerCase()}=${rcpt.local.toLowerCase()}`)) task.insert('FWD_SRS');
}

/** `<a+tag@b>` → `a@b`: the recipient a Received `for` clause names, without a sub-address. */
function normalizeFor(addr: string): string {
  const bare = /^<?([^>]*)>?$/.exec(addr)?.[1] ?? addr;
  const m = /^([^+][^+]*)\+[^@]*@(.*)$/.exec(bare);
  return m ? `${m[1]}@${m[2]}` : bare;
}

/**
 * The first Received hop that names its recipient (`for <…>`) names another address than the
 * envelope recipient: an earlier hop delivered it to someone who passed it on. A list that
 * re-sends to its own To address (List-Unsubscribe) is not a forward.
 */
export function checkForwarded(task: Task): void {
  const rcpt = singleRcpt(task);
  const to = mimeRecipients(task);
  if (!rcpt || to.length === 0) return;
  // task.received is capped at MAX_RECEIVED_HOPS; the loop stops at the first `for`.
  for (const hop of task.received) {
    if (hop.for === undefined) continue;
    const addr = normalizeFor(hop.for);
    if (addr.toLowerCase() === rcpt.address.toLowerCase()) return;
    if (task.message.headers.has('list-unsubscribe') && to[0]!.address.toLowerCase() === addr.toLowerCase()) return;
    task.insert('FORWARDED', 1, addr);
    return;
  }
}
