// The typed milter instructions of a task (Task.milter): envelope changes and how a reject is
// carried out, written into the reply's `milter` object (the keys Rspamd's milter reads:
// change_from, add_rcpt, del_rcpt, reject, spam_header, no_action). The milter proxy turns them
// into SMFIR_CHGFROM, ADDRCPT, DELRCPT, QUARANTINE, DISCARD (src/proxy/milter/render-verdict.ts).

import type { Logger, MilterReply, PreResult, TaskMilter } from '../plugin-api/index.js';
import { setOwn } from '../core/records.js';

/** What the instructions need from the task. */
export interface MilterHost {
  readonly log: Logger;
  setMilter(patch: MilterReply): void;
  setPreResult(pre: PreResult): void;
}

/**
 * A milter frame carries each string up to a NUL, and the MTA parses an address out of it: a
 * NUL, CR, LF or a bracket inside would cut or bend it. Such a value is refused, not repaired.
 */
const UNSENDABLE = /[\0\r\n<>]/;
/** A header name a milter may set: printable ASCII but the colon (RFC 5322 field name). */
const SPAM_HEADER_NAME = /^[!-9;-~]+$/;
/** Longest address sent (RFC 5321's path limit is 256 octets; generous, but bounded). */
export const MAX_MILTER_ADDRESS = 1024;

/** `a@b`, `<a@b>` → `<a@b>`; `''`, `<>` → `<>`; undefined when it cannot be sent. */
export function milterAddress(raw: string): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const trimmed = raw.trim();
  const bare = trimmed.startsWith('<') && trimmed.endsWith('>') ? trimmed.slice(1, -1).trim() : trimmed;
  if (bare.length > MAX_MILTER_ADDRESS || UNSENDABLE.test(bare) || /\s/.test(bare)) return undefined;
  return `<${bare}>`;
}

export class TaskMilterInstructions implements TaskMilter {
  readonly #host: MilterHost;

  constructor(host: MilterHost) {
    this.#host = host;
  }

  #address(what: string, raw: string, allowNull: boolean): string | undefined {
    const a = milterAddress(raw);
    if (a === undefined || (a === '<>' && !allowNull)) {
      this.#host.log.warn(`milter ${what} refused: not an address a milter can send`, { value: String(raw).slice(0, 200) });
      return undefined;
    }
    return a;
  }

  changeFrom(address: string): void {
    const a = this.#address('change_from', address, true);
    if (a !== undefined) this.#host.setMilter({ change_from: a });
  }

  addRcpt(address: string): void {
    const a = this.#address('add_rcpt', address, false);
    if (a !== undefined) this.#host.setMilter({ add_rcpt: [a] });
  }

  delRcpt(address: string): void {
    const a = this.#address('del_rcpt', address, false);
    if (a !== undefined) this.#host.setMilter({ del_rcpt: [a] });
  }

  rejectAs(how: 'quarantine' | 'discard' | 'reject'): void {
    // Rspamd's milter reads any string other than discard/quarantine as "reject normally".
    this.#host.setMilter({ reject: how });
  }

  #force(how: 'quarantine' | 'discard', opts: { module: string; reason?: string; priority?: number }): void {
    this.rejectAs(how);
    const pre: PreResult = { action: 'reject', module: opts.module };
    if (opts.reason !== undefined) pre.message = opts.reason;
    if (opts.priority !== undefined) pre.priority = opts.priority;
    this.#host.setPreResult(pre);
  }

  quarantine(opts: { module: string; reason?: string; priority?: number }): void {
    this.#force('quarantine', opts);
  }

  discard(opts: { module: string; reason?: string; priority?: number }): void {
    this.#force('discard', opts);
  }

  spamHeader(value: string | Readonly<Record<string, string>>): void {
    if (typeof value === 'string') {
      if (/[\0\r\n]/.test(value)) {
        this.#host.log.warn('milter spam_header refused: a header value cannot hold NUL, CR or LF', {});
        return;
      }
      this.#host.setMilter({ spam_header: value });
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, v] of Object.entries(value)) {
      if (typeof v !== 'string' || !SPAM_HEADER_NAME.test(name) || /[\0\r\n]/.test(v)) {
        this.#host.log.warn('milter spam_header entry refused: not a header a milter can set', { name: name.slice(0, 100) });
        continue;
      }
      setOwn(headers, name, v);
    }
    if (Object.keys(headers).length > 0) this.#host.setMilter({ spam_header: headers });
  }

  noAction(): void {
    this.#host.setMilter({ no_action: true });
  }
}

/**
 * The `milter` object of a settings `apply` (configured, or a client's `Settings` header):
 * the envelope keys checked as Task.milter checks them. What cannot be sent is left out and
 * named in `refused`, so a bad value never reaches the MTA.
 */
export function settingsMilterPatch(v: Readonly<Record<string, unknown>>): { patch: MilterReply; refused: string[] } {
  const patch: MilterReply = {};
  const refused: string[] = [];
  const addresses = (key: 'add_rcpt' | 'del_rcpt'): void => {
    const raw = v[key];
    if (raw === undefined) return;
    const list = (Array.isArray(raw) ? raw : [raw]).map((x) => (typeof x === 'string' ? milterAddress(x) : undefined));
    const good = list.filter((a): a is string => a !== undefined && a !== '<>');
    if (good.length !== list.length) refused.push(key);
    if (good.length > 0) patch[key] = good;
  };
  if (v.change_from !== undefined) {
    const a = typeof v.change_from === 'string' ? milterAddress(v.change_from) : undefined;
    if (a === undefined) refused.push('change_from');
    else patch.change_from = a;
  }
  addresses('add_rcpt');
  addresses('del_rcpt');
  if (v.reject !== undefined) {
    if (v.reject === 'quarantine' || v.reject === 'discard' || v.reject === 'reject') patch.reject = v.reject;
    else refused.push('reject');
  }
  const sh = v.spam_header;
  if (typeof sh === 'string' && !/[\0\r\n]/.test(sh)) patch.spam_header = sh;
  else if (typeof sh === 'object' && sh !== null && !Array.isArray(sh)) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(sh)) {
      if (SPAM_HEADER_NAME.test(name) && typeof value === 'string' && !/[\0\r\n]/.test(value)) setOwn(headers, name, value);
      else refused.push(`spam_header.${name}`);
    }
    if (Object.keys(headers).length > 0) patch.spam_header = headers;
  } else if (sh !== undefined) refused.push('spam_header');
  if (v.no_action !== undefined) {
    if (typeof v.no_action === 'boolean') patch.no_action = v.no_action;
    else refused.push('no_action');
  }
  for (const k of Object.keys(v)) if (!SETTINGS_MILTER_KEYS.has(k)) refused.push(k);
  return { patch, refused };
}

/** The keys a settings `milter` object may have. */
export const SETTINGS_MILTER_KEYS: ReadonlySet<string> = new Set(['change_from', 'add_rcpt', 'del_rcpt', 'reject', 'spam_header', 'no_action']);
