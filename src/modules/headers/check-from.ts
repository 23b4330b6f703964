// From, envelope-from and Reply-To checks (Rspamd CHECK_FROM, CHECK_REPLYTO, MULTIPLE_FROM, …).
import type { EmailAddress, Task } from '../../plugin-api/index.js';
import { eqCaseless, hasEightBit, mimeRecipients } from './util.js';

const TITLE_MR = /^(mrs?)[.\s]/;
const TITLE_DR = /^(dr)[.\s]/;
/** An address glued to the text before it, e.g. `"Name"<a@b>` (regexp R_NO_SPACE_IN_FROM). */
const NO_SPACE_IN_FROM = /\S<[-\w.]+@[-\w.]+>/;
const SPAM_FLAG_VALUE = /^(?:yes|true)/i;

export function checkMissingFrom(task: Task): void {
  const from = task.message.headers.first('from');
  if (!from || from.value === '') task.insert('MISSING_FROM');
}

export function checkFrom(task: Task): void {
  const env = task.envelopeFrom;
  const from = task.message.from[0];
  if (env && env.invalid) task.insert('ENVFROM_INVALID');
  if (from) {
    if (from.invalid) task.insert('FROM_INVALID');
    const name = from.name;
    if (!name) {
      task.insert('FROM_NO_DN');
    } else if (eqCaseless(name, from.address)) {
      task.insert('FROM_DN_EQ_ADDR');
    } else {
      task.insert('FROM_HAS_DN');
      const n = name.toLowerCase();
      const mr = TITLE_MR.exec(n);
      if (mr) task.insert('FROM_NAME_HAS_TITLE', 1, mr[1]);
      const dr = TITLE_DR.exec(n);
      if (dr) task.insert('FROM_NAME_HAS_TITLE', 1, dr[1]);
      if (/\s\s/.test(n)) task.insert('FROM_NAME_EXCESS_SPACE');
    }
    if (env) {
      if (eqCaseless(env.address, from.address)) task.insert('FROM_EQ_ENVFROM');
      else if (env.address !== '') task.insert('FROM_NEQ_ENVFROM', 1, [from.address, env.address]);
    }
  }
  const to = mimeRecipients(task);
  if (!from || to.length !== 1) return;
  const first = to[0]!;
  if (eqCaseless(first.address, from.address)) task.insert('TO_EQ_FROM');
  else if (first.domain && from.domain && eqCaseless(first.domain, from.domain)) task.insert('TO_DOM_EQ_FROM_DOM');
}

/** `user+tag`: the part before the first `+` (not empty) and the tags after it. */
const PLUS_TAGS = /^([^+][^+]*)(\+.*)$/;

/**
 * Tags of a sub-addressed mailbox (Rspamd lua_util.remove_email_aliases), or undefined when the
 * address has none. Gmail ignores dots in the user part, so a dotted Gmail user counts as tagged
 * (with no tags); googlemail.com is Gmail too.
 */
export function aliasTags(addr: EmailAddress): string[] | undefined {
  const domain = addr.domain.toLowerCase();
  const gmail = domain === 'gmail.com' || domain === 'googlemail.com';
  const user = gmail ? addr.local.replaceAll('.', '') : addr.local;
  const m = PLUS_TAGS.exec(user);
  if (m) return m[2]!.split('+').filter((t) => t.length > 0);
  if (gmail && user !== addr.local) return [];
  return undefined;
}

/**
 * The address as Rspamd's EMAIL_PLUS_ALIASES prefilter hands it to the rules after it: without
 * its plus tags, a Gmail user without dots (and googlemail.com read as gmail.com). The same
 * object when there is nothing to take off.
 */
export function withoutAliases(addr: EmailAddress): EmailAddress {
  const domain = addr.domain.toLowerCase();
  const gmail = domain === 'gmail.com' || domain === 'googlemail.com';
  const user = gmail ? addr.local.replaceAll('.', '') : addr.local;
  const local = PLUS_TAGS.exec(user)?.[1] ?? user;
  if (local === addr.local) return addr;
  const dom = domain === 'googlemail.com' ? 'gmail.com' : addr.domain;
  return { ...addr, local, domain: dom, address: `${local}@${dom}` };
}

/**
 * TAGGED_FROM / TAGGED_RCPT (Rspamd's EMAIL_PLUS_ALIASES prefilter): plus-tagged sender or
 * recipients, envelope first, then headers. Rspamd also rewrites the addresses without their
 * tags for later rules; mailsift's rules keep reading them as written, but for ENVFROM_PRVS and
 * ENVFROM_VERP, whose verdicts turn on it (withoutAliases).
 */
export function checkTagged(task: Task): void {
  for (const from of [task.envelopeFrom, task.message.from[0]]) {
    const tags = from && from.local ? aliasTags(from) : undefined;
    if (tags) task.insert('TAGGED_FROM', 1, tags);
  }
  for (const rcpts of [task.envelopeRcpt, mimeRecipients(task)]) {
    let tagged = false;
    const all: string[] = [];
    for (const r of rcpts) {
      const tags = r.local ? aliasTags(r) : undefined;
      if (!tags) continue;
      tagged = true;
      all.push(...tags);
    }
    if (tagged) task.insert('TAGGED_RCPT', 1, all);
  }
}

export function checkMultipleFrom(task: Task): void {
  const from = task.message.from;
  if (from.length > 1) task.insert('MULTIPLE_FROM', 1, from.map((a) => a.address));
}

export function checkFrom8bit(task: Task): void {
  const from = task.message.from[0];
  if (from && hasEightBit(from)) task.insert('INVALID_FROM_8BIT');
}

export function checkNoSpaceInFrom(task: Task): void {
  for (const hdr of task.message.headers.get('from')) {
    if (NO_SPACE_IN_FROM.test(hdr.raw)) {
      task.insert('R_NO_SPACE_IN_FROM');
      return;
    }
  }
}

export function checkReplyTo(task: Task): void {
  const m = task.message;
  const rtHeader = m.headers.first('reply-to');
  if (!rtHeader) return;
  const rt = m.replyTo[0];
  if (!rt || rt.address === '' || rt.invalid) {
    task.insert('REPLYTO_UNPARSEABLE');
    return;
  }
  task.insert('HAS_REPLYTO', 1, rt.address);
  const title = task.getSymbol('FROM_NAME_HAS_TITLE')?.options?.[0];
  if (title && rt.address.toLowerCase().startsWith(title)) task.insert('REPLYTO_EMAIL_HAS_TITLE');

  const from = m.from[0];
  if (!from) return;
  const fromHeader = m.headers.first('from');
  if (fromHeader && fromHeader.value === rtHeader.value) {
    task.insert('REPLYTO_EQ_FROM');
    return;
  }
  if (eqCaseless(from.address, rt.address)) {
    task.insert('REPLYTO_ADDR_EQ_FROM');
  } else if (from.domain && rt.domain) {
    if (eqCaseless(from.domain, rt.domain)) {
      task.insert('REPLYTO_DOM_EQ_FROM_DOM');
    } else {
      const to = mimeRecipients(task)[0];
      if (to && eqCaseless(to.address, rt.address)) {
        // Mailing lists and automatic mail legitimately reply to the recipient.
        const h = m.headers;
        if (!(h.has('list-unsubscribe') || h.has('x-to-get-off-this-list') || h.has('x-list') || h.has('auto-submitted'))) {
          task.insert('REPLYTO_EQ_TO_ADDR');
        }
      } else {
        task.insert('REPLYTO_DOM_NEQ_FROM_DOM');
      }
    }
  }
  if (from.name && rt.name && eqCaseless(from.name, rt.name)) task.insert('REPLYTO_DN_EQ_FROM_DN');
}

/**
 * From and Reply-To both at free-mail services, but at different ones (Rspamd rules/misc.lua):
 * a sender whose answers are collected somewhere else than where the mail claims to come from.
 * Compares the first option of FREEMAIL_FROM and FREEMAIL_REPLYTO (the matched domains).
 */
export function checkFreemailReplyToNeqFrom(task: Task): void {
  const from = task.getSymbol('FREEMAIL_FROM')?.options?.[0];
  const rt = task.getSymbol('FREEMAIL_REPLYTO')?.options?.[0];
  if (from !== undefined && rt !== undefined && from !== rt) task.insert('FREEMAIL_REPLYTO_NEQ_FROM_DOM');
}

export function checkSpamFlag(task: Task): void {
  const h = task.message.headers;
  for (const name of ['x-spam-flag', 'x-spam', 'x-spam-status']) {
    if (h.get(name).some((x) => SPAM_FLAG_VALUE.test(x.value))) {
      task.insert('SPAM_FLAG');
      return;
    }
  }
}
