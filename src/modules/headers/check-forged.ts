// Envelope against headers (Rspamd's forged_recipients plugin): FORGED_RECIPIENTS when an
// RCPT TO and a To/Cc address each lack a counterpart, FORGED_SENDER when MAIL FROM is not the
// From address. Both need the envelope the MTA passed; mailing lists and forwarders change it on
// purpose, which the FORGED_*_MAILLIST / _FORWARDING composites neutralise.
import type { EmailAddress, Task } from '../../plugin-api/index.js';
import { mimeRecipients } from './util.js';

/**
 * Addresses compared from each side. The lists are the client's (RCPT TO, To/Cc); Rspamd trims
 * both to 99 when either is longer than 100, which bounds the work of a message naming thousands.
 */
const MAX_COMPARED = 99;
const TRIM_ABOVE = 100;

interface Side { addr: string; matched: boolean }

export function checkForged(task: Task): void {
  let smtp = task.envelopeRcpt;
  if (smtp.length === 0) return;
  let mime = mimeRecipients(task);
  if (mime.length === 0) return;
  if (smtp.length > TRIM_ABOVE || mime.length > TRIM_ABOVE) {
    smtp = smtp.slice(0, MAX_COMPARED);
    mime = mime.slice(0, MAX_COMPARED);
  }
  const user = task.meta.user;
  const envFrom = task.envelopeFrom?.address;
  const deliveredTo = task.message.headers.first('delivered-to')?.value.trim();

  // Envelope recipients by address and by domain; a domain is "seen" once a header address of
  // the same domain is found (aliases rewrite the user part, so the domain is good enough).
  const byAddr = new Map<string, Side>();
  const byDomain = new Map<string, { seenMime: boolean }>();
  const smtpSides: Array<[Side, string]> = [];
  for (const r of smtp) {
    if (!r.address) continue;
    const addr = r.address.toLowerCase();
    const dom = r.domain.toLowerCase();
    if (!byDomain.has(dom)) byDomain.set(dom, { seenMime: false });
    // The sender may Bcc itself; an authenticated user may be among the recipients.
    const side: Side = { addr: r.address, matched: user === addr || envFrom === addr };
    byAddr.set(addr, side);
    smtpSides.push([side, dom]);
  }

  const unmatchedMime: EmailAddress[] = [];
  for (const m of mime) {
    if (!m.address) continue;
    const addr = m.address.toLowerCase();
    const direct = byAddr.get(addr);
    if (direct) {
      direct.matched = true;
      continue;
    }
    if (deliveredTo === addr || user === addr) continue;
    const dom = byDomain.get(m.domain.toLowerCase());
    if (dom) {
      dom.seenMime = true;
      continue;
    }
    unmatchedMime.push(m);
  }
  const unmatchedSmtp = smtpSides.filter(([s, dom]) => !s.matched && !byDomain.get(dom)!.seenMime);
  if (unmatchedMime.length > 0 && unmatchedSmtp.length > 0) {
    task.insert('FORGED_RECIPIENTS', 1, [...unmatchedMime.map((m) => `m:${m.address}`), ...unmatchedSmtp.map(([s]) => `s:${s.addr}`)]);
  }

  if (!envFrom) return;
  const from = task.message.from[0]?.address;
  if (from === undefined || from.toLowerCase() !== envFrom.toLowerCase()) {
    task.insert('FORGED_SENDER', 1, from ? [from, envFrom] : [envFrom]);
  }
}
