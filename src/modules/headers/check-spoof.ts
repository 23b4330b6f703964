// Display-name and reply-address spoofing, read-receipt mismatches, undisclosed recipients and
// header-name case oddities (Rspamd misc.lua, headers_checks.lua, regexp/headers.lua).
import { parseAddressList } from '../../message/addresses.js';
import type { EmailAddress, Task } from '../../plugin-api/index.js';
import { eqCaseless, mimeRecipients } from './util.js';

function firstAddress(value: string | undefined): EmailAddress | undefined {
  if (value === undefined) return undefined;
  const a = parseAddressList(value)[0];
  return a && !a.invalid && a.address ? a : undefined;
}

export function checkDisplayName(task: Task): void {
  const from = task.message.from[0];
  if (!from || !from.name || !from.domain) return;
  const parsed = firstAddress(from.name);
  // `user@host` without a dot is more likely a name than an address.
  if (!parsed || !parsed.domain.includes('.')) return;
  if (eqCaseless(from.domain, parsed.domain)) return;
  const opts = [from.domain, parsed.domain];
  const targets = [...mimeRecipients(task), ...task.envelopeRcpt];
  if (targets.some((t) => t.domain !== '' && eqCaseless(t.domain, parsed.domain))) {
    task.insert('SPOOF_DISPLAY_NAME', 1, opts);
  } else {
    task.insert('FROM_NEQ_DISPLAY_NAME', 1, opts);
  }
}

export function checkSpoofReplyTo(task: Task): void {
  const m = task.message;
  const rt = m.headers.first('reply-to');
  const from = m.from[0];
  if (!rt || !from || !from.address) return;
  const to = mimeRecipients(task)[0];
  // Web contact forms send From = To; not a spoof.
  if (to && eqCaseless(to.address, from.address)) return;
  const env = task.envelopeRcpt;
  if (env.length === 0) return;
  if (env.length === 1 && eqCaseless(env[0]!.address, from.address)) return;
  if (!env.some((r) => eqCaseless(r.domain, from.domain))) return;
  const parsed = firstAddress(rt.value)?.domain;
  if (parsed && !eqCaseless(parsed, from.domain)) task.insert('SPOOF_REPLYTO', 1, [from.domain, parsed]);
}

export function checkReadConfirm(task: Task): void {
  const from = task.message.from[0];
  const cread = firstAddress(task.message.headers.first('x-confirm-reading-to')?.value);
  if (from && cread && !from.address.toLowerCase().includes(cread.address.toLowerCase())) {
    task.insert('HEADER_RCONFIRM_MISMATCH');
  }
}

export function checkForgedMdn(task: Task): void {
  const mdn = task.message.headers.first('disposition-notification-to')?.value;
  if (mdn === undefined) return;
  const targets = parseAddressList(mdn).filter((a) => !a.invalid && a.address);
  if (targets.length === 0) return;
  const rp = task.envelopeFrom?.address;
  if (!rp) {
    task.insert('HEADER_FORGED_MDN');
    return;
  }
  if (!targets.some((a) => eqCaseless(a.address, rp))) task.insert('HEADER_FORGED_MDN');
}

const UNDISCLOSED = /^[<"]?undisclosed[- ]recipients?\b.*:/i;

export function checkUndisclosed(task: Task): void {
  if (task.message.headers.get('to').some((h) => UNDISCLOSED.test(h.value))) task.insert('R_UNDISC_RCPT');
}

/** Header names written in an unusual case betray some bulk mailers. */
export function checkHeaderCase(task: Task): void {
  for (const h of task.message.headers.all) {
    if (h.name === 'Mime-Version') task.insert('MV_CASE');
    else if (h.name === 'X-mailer') task.insert('XM_CASE');
  }
}
