// Recipient header checks (Rspamd CHECK_TO_CC, MISSING_TO, INVALID_RCPT_8BIT).
import type { Task } from '../../plugin-api/index.js';
import { countBucket, eqCaseless, hasEightBit, mimeRecipients } from './util.js';

const RCPT_BUCKETS = [
  [1, 'ONE'],
  [2, 'TWO'],
  [3, 'THREE'],
  [5, 'FIVE'],
  [7, 'SEVEN'],
  [12, 'TWELVE'],
  [50, 'GT_50'],
] as const;

export function checkMissingTo(task: Task): void {
  if (!task.message.headers.has('to')) task.insert('MISSING_TO');
}

export function checkToCc(task: Task): void {
  // Rspamd has a recipient list once a To or Cc header is there, even when no address in it
  // parsed (`undisclosed-recipients:;`): that is RCPT_COUNT_ZERO, and the "all" symbols hold for
  // the empty list. Without either header it inserts nothing.
  const to = mimeRecipients(task);
  if (to.length === 0 && !task.message.headers.has('to') && !task.message.headers.has('cc')) return;
  const env = task.envelopeRcpt;
  task.insert(`RCPT_COUNT_${countBucket(to.length, RCPT_BUCKETS)}`, 1, String(to.length));
  let withName = 0;
  let nameIsAddr = 0;
  let matchEnv = 0;
  for (const a of to) {
    const name = a.name.toLowerCase();
    if (name === 'recipient' || name === 'recipients') task.insert('TO_DN_RECIPIENTS');
    if (a.name && eqCaseless(a.name, a.address)) nameIsAddr++;
    else if (a.name) withName++;
    for (const r of env) if (a.address && eqCaseless(r.address, a.address)) matchEnv++;
  }
  if (withName === 0 && nameIsAddr === 0) task.insert('TO_DN_NONE');
  else if (withName === to.length) task.insert('TO_DN_ALL');
  else if (withName > 0) task.insert('TO_DN_SOME');
  if (nameIsAddr === to.length) task.insert('TO_DN_EQ_ADDR_ALL');
  else if (nameIsAddr > 0) task.insert('TO_DN_EQ_ADDR_SOME');
  if (matchEnv === to.length) task.insert('TO_MATCH_ENVRCPT_ALL');
  else if (matchEnv > 0) task.insert('TO_MATCH_ENVRCPT_SOME');
}

export function checkRcpt8bit(task: Task): void {
  if (mimeRecipients(task).some(hasEightBit)) task.insert('INVALID_RCPT_8BIT');
}
