// Envelope senders that name their recipient or their author on purpose (Rspamd's rules/misc.lua
// ENVFROM_PRVS and ENVFROM_VERP, score 0). Bounce tagging and per-recipient return paths make
// MAIL FROM differ from the From header by design; the FORGED_SENDER_VERP_SRS composite reads
// these to take FORGED_SENDER's weight off such mail. Rspamd reads the addresses after its
// EMAIL_PLUS_ALIASES prefilter took their plus tags off, so these do too.
import type { Task } from '../../plugin-api/index.js';
import { withoutAliases } from './check-from.js';

/**
 * Bounce Address Tag Validation: `prvs=TAG=user@dom` (the BATV draft; some senders write
 * `prvs=user=TAG@dom`) and SparkPost's `msprvs1=TAG=user@dom`. Groups: 1 the keyword, 2 the field
 * after it, 3 the rest (`x@dom`), 4 its domain. Rspamd's pattern also names Barracuda's
 * `btv1==TAG==user@dom`, but its capture list ends at the first group that took no part, so that
 * form never matches there; it is left out here for the same verdicts.
 */
const BATV = /^(prvs|msprvs1)=([^=]+)=(.+@(.+))$/;

/**
 * ENVFROM_PRVS: a BATV envelope sender whose untagged address is the From address. Rspamd tests
 * the address after the tag, then for `prvs=` also the field before it as the user part.
 */
export function checkEnvfromPrvs(task: Task): void {
  const env = task.envelopeFrom;
  const from = task.message.from[0];
  if (!env?.address || from === undefined) return;
  const m = BATV.exec(withoutAliases(env).address.toLowerCase());
  if (!m) return;
  const author = withoutAliases(from).address.toLowerCase();
  if (m[3] === author || (m[1] === 'prvs' && `${m[2]}@${m[4]}` === author)) task.insert('ENVFROM_PRVS');
}

/** Google's forwarding tag (`user+caf_=rcpt=dom@…`), which FWD_GOOGLE reports instead. */
const GOOGLE_FWD_TAG = '+caf_=';
const SRS_USER = /^srs[01]=/;

/**
 * ENVFROM_VERP: the one envelope recipient, written `user=domain`, inside the envelope sender's
 * user part (variable envelope return path: bounces name the address that failed), unless that
 * is Google's forwarding tag or an SRS address (forwarders, reported by FWD_GOOGLE / FWD_SRS).
 * Tags are off by then: `list-bounces+bob=example.org@…` reads `list-bounces`, as in Rspamd.
 */
export function checkEnvfromVerp(task: Task): void {
  const env = task.envelopeFrom;
  const rcpts = task.envelopeRcpt;
  if (!env?.address || rcpts.length !== 1) return;
  const verp = withoutAliases(rcpts[0]!).address.toLowerCase().replaceAll('@', '=');
  const user = withoutAliases(env).local.toLowerCase();
  if (!verp || !user.includes(verp)) return;
  if (user.includes(GOOGLE_FWD_TAG + verp) || SRS_USER.test(user)) return;
  task.insert('ENVFROM_VERP');
}
