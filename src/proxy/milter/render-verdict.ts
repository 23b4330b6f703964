// A scan result → the reply frames for the MTA (as Rspamd 3.4 sends them:
// rspamd_milter_send_task_results and rspamd_milter_process_milter_block in milter.c 3.4).
// Frame order: the milter block (header removals, additions, CHGFROM, ADDRCPT, DELRCPT),
// DKIM-Signature inserts, REPLBODY, the no_action header, then exactly one final reply.
//
// Where this departs from Rspamd 3.4's milter, and why (numbered across this file, session.ts
// and session-state.ts):
//  4. FIXED. Header counts are kept live: a deletion lowers the count of its name, so deleting
//     the same name twice (remove_headers, then the add-header or spam_header path) sends each
//     deletion once. Rspamd re-sends deletions for indices that no longer exist; MTAs ignore
//     those, so the MTA ends with the same headers either way, and `cur_hdr` no longer drops
//     twice for one header.
//  5. FIXED. In the spam_header path the DKIM-Signature inserts come before the ACCEPT: Rspamd
//     sends them after it, and an MTA ignores frames after the final reply (signature lost).
//  6. FIXED. REPLBODY is split into frames of at most 65 535 bytes (libmilter's chunk size);
//     Rspamd sends one frame of any size, which libmilter MTAs cannot read.
//  7. REPLICATED. `no_action` turns any action into X-Rspamd-Action + ACCEPT, not only reject:
//     that is what the flag means ("do not apply the action, say it in a header").
//  9. FIXED (as Rspamd master). The QUARANTINE reason is `messages.smtp_message` when there is
//     one, else `quarantineMessage`; 3.4 always sends "Spam message quarantined".
// 10. FIXED. A legacy string entry of `add_headers` counts as a header like every other
//     addition, so a later negative `order` is computed with it.
// 11. FIXED. `reject = "discard"|"quarantine"` and `no_action` of a milter block apply to that
//     message only; Rspamd keeps them for every later message of the milter connection.
// Beyond those: SMTP reply texts are made safe for the MTA (CR/LF → space, `%` → `%%`, which
// Postfix and libmilter undouble), and an empty smtp_message falls back to the configured text.

import type { MilterActionType, MilterOptions } from './options.js';
import { isJsonObject, type JsonObject, type JsonValue } from './ordered-json.js';
import { requiredAction, type MilterReply } from './protocol.js';
import { asciiLower } from './session-state.js';

/** libmilter's MILTER_CHUNK_SIZE: the largest REPLBODY frame an MTA reads. */
export const MAX_REPLBODY_CHUNK = 65_535;

export interface VerdictInput {
  result: JsonObject;
  newBody?: Buffer;
  /** Header fields the MTA sent for this message. */
  headerCount: number;
  /** Occurrences per lower-cased header name (copied, not changed). */
  headerOccurrences: ReadonlyMap<string, number>;
}

export interface Verdict {
  replies: MilterReply[];
  /** The scanner's action, when it had one. */
  action?: string;
  /** What the MTA is told, for the log: `accept`, `reject`, `tempfail`, … */
  outcome: string;
  /** Things worth a log line: values ignored, why a TEMPFAIL. */
  problems: Problem[];
}

export interface Problem {
  /** `error`: our configuration is at fault (it reaches the controller's error ring). */
  level: 'warn' | 'error';
  text: string;
}

export function tempfailVerdict(problem: string, level: Problem['level'] = 'warn'): Verdict {
  return { replies: [{ kind: 'tempfail' }], outcome: 'tempfail', problems: [{ level, text: problem }] };
}

/** Text of a REPLYCODE: one line, `%` doubled (Postfix and libmilter read `%%` as `%`). */
function smtpText(s: string): string {
  return s.replace(/[\r\n\0]+/g, ' ').replace(/%/g, '%%');
}

class Renderer {
  readonly replies: MilterReply[] = [];
  readonly problems: Problem[] = [];
  /** Rspamd's `cur_hdr`: headers in the message as far as we know, never below 0. */
  #cur: number;
  #occ: Map<string, number>;

  constructor(input: VerdictInput) {
    this.#cur = input.headerCount;
    this.#occ = new Map(input.headerOccurrences);
  }

  #chg(index: number, name: string, value: string): void {
    this.replies.push({ kind: 'chgheader', index, name, value });
  }

  #dec(): void {
    if (this.#cur > 0) this.#cur--;
    else this.problems.push({ level: 'warn', text: 'header count would go below 0' });
  }

  /** Rspamd's remove_headers numbering: N > 0 the Nth occurrence, 0 all (last first), N < 0 counted from the end. */
  removeHeader(name: string, n: number): void {
    const key = asciiLower(name);
    const k = this.#occ.get(key) ?? 0;
    if (k === 0) return;
    if (n > 0) {
      if (k < n) return;
      this.#chg(n, name, '');
      this.#occ.set(key, k - 1);
      this.#dec();
    } else if (n === 0) {
      // k ≤ maxHeaders (session-state caps it).
      for (let i = k; i > 0; i--) {
        this.#chg(i, name, '');
        this.#dec();
      }
      this.#occ.set(key, 0);
    } else {
      if (-n > k) return;
      this.#chg(k + n + 1, name, '');
      this.#occ.set(key, k - 1);
      this.#dec();
    }
  }

  /** One `{value, order|index}` entry of add_headers, placed as Rspamd places it. */
  insertOne(name: string, spec: JsonValue): void {
    if (!isJsonObject(spec)) return;
    const value = spec.get('value');
    if (typeof value !== 'string') return;
    // ucl_object_lookup_any: `order` if present (whatever its type), else `index`.
    const idx = spec.has('order') ? spec.get('order') : spec.get('index');
    if (typeof idx !== 'number' || !Number.isFinite(idx)) {
      this.replies.push({ kind: 'addheader', name, value });
    } else {
      const order = Math.trunc(idx);
      if (order >= 0) this.replies.push({ kind: 'insheader', index: Math.min(order, 0xffffffff), name, value });
      else if (order === -1) this.replies.push({ kind: 'addheader', name, value });
      // +2: the MTA's own Received, which the filter never saw, sits above what we count.
      else if (-order <= this.#cur) this.replies.push({ kind: 'insheader', index: this.#cur + order + 2, name, value });
      else this.replies.push({ kind: 'insheader', index: 0, name, value });
    }
    this.#cur++;
  }

  /** The milter block's header and envelope operations; returns the per-message flags. */
  block(m: JsonObject, flags: Flags): void {
    const remove = m.get('remove_headers');
    if (isJsonObject(remove)) {
      for (const [name, n] of remove) {
        // Rspamd takes integers only ([master] also arrays of them).
        if (typeof n === 'number' && Number.isInteger(n)) this.removeHeader(name, n);
        else if (Array.isArray(n)) for (const x of n) if (typeof x === 'number' && Number.isInteger(x)) this.removeHeader(name, x);
      }
    }
    const add = m.get('add_headers');
    if (isJsonObject(add)) {
      for (const [name, spec] of add) {
        if (typeof spec === 'string') {
          this.replies.push({ kind: 'addheader', name, value: spec });
          this.#cur++; // quirk 10, fixed
        } else if (isJsonObject(spec)) {
          this.insertOne(name, spec);
        } else if (Array.isArray(spec)) {
          for (const one of spec) this.insertOne(name, one);
        } else {
          this.problems.push({ level: 'warn', text: `add_headers ${name}: a ${spec === null ? 'null' : typeof spec} is not a header value` });
        }
      }
    }
    const from = m.get('change_from');
    if (typeof from === 'string') this.replies.push({ kind: 'chgfrom', sender: from });
    const addRcpt = m.get('add_rcpt');
    if (Array.isArray(addRcpt)) for (const r of addRcpt) if (typeof r === 'string') this.replies.push({ kind: 'addrcpt', rcpt: r });
    const delRcpt = m.get('del_rcpt');
    if (Array.isArray(delRcpt)) for (const r of delRcpt) if (typeof r === 'string') this.replies.push({ kind: 'delrcpt', rcpt: r });
    const reject = m.get('reject');
    if (typeof reject === 'string') {
      if (reject === 'discard') flags.discard = true;
      else if (reject === 'quarantine') flags.quarantine = true;
      else {
        flags.discard = false;
        flags.quarantine = false;
      }
    }
    const noAction = m.get('no_action');
    if (typeof noAction === 'boolean') flags.noAction = noAction;
  }

  /** `spam_header` of the milter block, honoured for `add header` only. */
  spamHeader(m: JsonObject, defaultName: string): boolean {
    const sh = m.get('spam_header');
    if (typeof sh === 'string') {
      this.removeHeader(defaultName, 0);
      this.#chg(1, defaultName, sh);
      return true;
    }
    if (isJsonObject(sh)) {
      for (const [name, v] of sh) {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
        this.removeHeader(name, 0);
        this.#chg(1, name, String(v));
      }
      return true;
    }
    return false;
  }

  dkim(sig: JsonValue | undefined): void {
    if (typeof sig === 'string') {
      this.replies.push({ kind: 'insheader', index: 1, name: 'DKIM-Signature', value: sig });
    } else if (Array.isArray(sig)) {
      let i = 1;
      for (const v of sig) {
        if (typeof v === 'string') this.replies.push({ kind: 'insheader', index: i, name: 'DKIM-Signature', value: v });
        i++;
      }
    }
  }

  body(b: Buffer): void {
    // An empty rewritten body still replaces the body: one empty frame.
    let off = 0;
    do {
      this.replies.push({ kind: 'replbody', chunk: b.subarray(off, off + MAX_REPLBODY_CHUNK) });
      off += MAX_REPLBODY_CHUNK;
    } while (off < b.length);
  }
}

interface Flags {
  discard: boolean;
  quarantine: boolean;
  noAction: boolean;
}

function nonEmptyString(v: JsonValue | undefined): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

export function renderVerdict(input: VerdictInput, opts: MilterOptions): Verdict {
  const r = input.result;
  const action = r.get('action');
  if (typeof action !== 'string') return tempfailVerdict('the scan result has no action');
  const type: MilterActionType | undefined = opts.actions.get(action);
  if (type === undefined) {
    const v = tempfailVerdict(`action "${action}" is not known to the proxy (declare custom actions in its configuration)`, 'error');
    v.action = action;
    return v;
  }
  const messages = r.get('messages');
  const smtpMessage = isJsonObject(messages) ? nonEmptyString(messages.get('smtp_message')) : undefined;
  const out = new Renderer(input);
  const flags: Flags = { discard: opts.discardOnReject, quarantine: opts.quarantineOnReject, noAction: false };
  const done = (outcome: string): Verdict => ({ replies: out.replies, action, outcome, problems: out.problems });

  const block = r.get('milter');
  let processed = false;
  if (isJsonObject(block)) {
    out.block(block, flags);
    if (type === 'add header') processed = out.spamHeader(block, opts.spamHeader);
  }
  out.dkim(r.get('dkim-signature'));
  if (processed) {
    out.replies.push({ kind: 'accept' });
    return done('accept');
  }
  if (input.newBody) out.body(input.newBody);
  if (flags.noAction) {
    out.replies.push({ kind: 'addheader', name: 'X-Rspamd-Action', value: action }, { kind: 'accept' });
    return done('accept (no_action)');
  }
  const quarantineReason = (smtpMessage ?? opts.quarantineMessage).replace(/[\r\n]+/g, ' ');
  switch (type) {
    case 'reject':
      if (flags.discard) {
        out.replies.push({ kind: 'discard' });
        return done('discard');
      }
      if (flags.quarantine) {
        out.replies.push({ kind: 'quarantine', reason: quarantineReason }, { kind: 'accept' });
        return done('quarantine');
      }
      out.replies.push({ kind: 'replycode', text: `554 5.7.1 ${smtpText(smtpMessage ?? opts.rejectMessage)}` });
      return done('reject');
    case 'soft reject':
      out.replies.push({ kind: 'replycode', text: `451 4.7.1 ${smtpText(smtpMessage ?? opts.tempfailMessage)}` });
      return done('soft reject');
    case 'rewrite subject': {
      const subject = r.get('subject');
      if (typeof subject === 'string') out.replies.push({ kind: 'chgheader', index: 1, name: 'Subject', value: subject });
      out.replies.push({ kind: 'accept' });
      return done('accept');
    }
    case 'add header':
      out.removeHeader(opts.spamHeader, 0);
      out.replies.push({ kind: 'chgheader', index: 1, name: opts.spamHeader, value: 'Yes' }, { kind: 'accept' });
      return done('accept');
    case 'quarantine':
      out.replies.push({ kind: 'quarantine', reason: quarantineReason }, { kind: 'accept' });
      return done('quarantine');
    case 'discard':
      out.replies.push({ kind: 'discard' });
      return done('discard');
    default:
      // greylist (real greylisting arrives as a soft reject), no action, declared custom actions.
      out.replies.push({ kind: 'accept' });
      return done('accept');
  }
}

/**
 * Leave out the frames whose ability the MTA did not grant in OPTNEG: the MTA
 * would refuse them and fail the whole session. A quarantine that cannot be done becomes the
 * plain ACCEPT that follows it. Returns the kinds left out, for the log.
 */
export function withinGrant(replies: readonly MilterReply[], granted: number): { replies: MilterReply[]; dropped: string[] } {
  const kept: MilterReply[] = [];
  const dropped: string[] = [];
  for (const r of replies) {
    const need = requiredAction(r);
    if (need !== 0 && (granted & need) === 0) dropped.push(r.kind);
    else kept.push(r);
  }
  return { replies: kept, dropped };
}
