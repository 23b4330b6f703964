// E-mail addresses: header address lists (From, To, Cc, Reply-To) through postal-mime's
// parser, and SMTP envelope paths (MAIL FROM / RCPT TO values) per RFC 5321.
import { addressParser } from 'postal-mime';
import type { EmailAddress } from './types.js';

interface ParsedMailbox {
  name: string;
  address?: string;
  group?: ParsedMailbox[];
}

/** `local@domain` → EmailAddress; domain lower-cased; invalid when either side is missing. */
export function makeAddress(address: string, name = ''): EmailAddress {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) {
    return { name, address, local: at < 0 ? address : address.slice(0, at), domain: at < 0 ? '' : address.slice(at + 1).toLowerCase(), invalid: true };
  }
  const local = address.slice(0, at);
  const domain = address.slice(at + 1).toLowerCase();
  const out: EmailAddress = { name, address: `${local}@${domain}`, local, domain };
  if (/[\s<>()\[\],;]/.test(local) && !local.startsWith('"')) out.invalid = true;
  if (!/^(?:[^\s@<>()\[\],;]+|\[[^\]]*\])$/.test(domain)) out.invalid = true;
  return out;
}

function flatten(list: ParsedMailbox[], out: EmailAddress[]): void {
  for (const m of list) {
    if (m.group) flatten(m.group, out);
    else if (m.address) out.push(makeAddress(m.address, m.name ?? ''));
    else if (m.name) out.push({ name: '', address: m.name, local: m.name, domain: '', invalid: true });
  }
}

/** Nameless mailboxes per list looked up in the text for a dropped name (each look reads the list once). */
const MAX_ECHOED_NAMES = 64;

/**
 * postal-mime drops a display name that is the address itself (`"a@b.c" <a@b.c>`); Rspamd keeps
 * it, and FROM_DN_EQ_ADDR / TO_DN_EQ_ADDR_* are about exactly that name. Put it back where the
 * text shows the address, quoted or not, right before its `<address>`.
 */
function restoreEchoedNames(value: string, out: EmailAddress[]): void {
  let lower: string | undefined;
  let budget = MAX_ECHOED_NAMES;
  for (const a of out) {
    if (a.name || a.invalid || !a.address) continue;
    if (budget-- === 0) return;
    lower ??= value.toLowerCase();
    const addr = a.address.toLowerCase();
    const bracket = `<${addr}>`;
    for (let at = lower.indexOf(bracket); at > 0; at = lower.indexOf(bracket, at + 1)) {
      let before = lower.slice(Math.max(0, at - addr.length - 8), at).trimEnd();
      if (before.endsWith('"')) before = before.slice(0, -1);
      if (before.endsWith(addr)) {
        a.name = a.address;
        break;
      }
    }
  }
}

/** Parse a header address list (`"Name" <a@b>, c@d, group: e@f;`). Never throws. */
export function parseAddressList(value: string): EmailAddress[] {
  const out: EmailAddress[] = [];
  if (!value.trim()) return out;
  try {
    flatten(addressParser(value) as ParsedMailbox[], out);
  } catch {
    // postal-mime does not throw on bad input today; a future version might.
    out.push({ name: '', address: value.trim(), local: '', domain: '', invalid: true });
  }
  if (value.includes('<')) restoreEchoedNames(value, out);
  return out;
}

const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.\-\u0080-\uffff]+$/;
const DOMAIN = /^(?:[A-Za-z0-9_\-\u0080-\uffff]+(?:\.[A-Za-z0-9_\-\u0080-\uffff]+)*|\[[^\[\]\s]+\])$/;

/**
 * Parse an SMTP envelope path: `<a@b>`, `a@b`, `<@r1,@r2:a@b>`, `"quoted x"@b`, `a@[192.0.2.1]`,
 * one trailing dot on the domain. `<>` and an empty value are the null sender (address '').
 * Returns undefined when the value is not an address.
 */
export function parseEnvelopeAddress(value: string): EmailAddress | undefined {
  let s = value.trim();
  if (s.startsWith('<')) {
    if (!s.endsWith('>')) return undefined;
    s = s.slice(1, -1).trim();
  } else if (s.endsWith('>')) return undefined;
  if (s === '') return { name: '', address: '', local: '', domain: '' };
  // Source route (`@a,@b:`) is obsolete routing information; the mailbox follows the colon.
  if (s.startsWith('@')) {
    const colon = s.indexOf(':');
    if (colon < 0) return undefined;
    s = s.slice(colon + 1);
  }
  let local: string;
  let rest: string;
  if (s.startsWith('"')) {
    let i = 1;
    let text = '';
    for (; i < s.length && s[i] !== '"'; i++) {
      if (s[i] === '\\' && i + 1 < s.length) i++;
      text += s[i];
    }
    if (i >= s.length || s[i + 1] !== '@') return undefined;
    local = text;
    rest = s.slice(i + 2);
  } else {
    const at = s.lastIndexOf('@');
    if (at <= 0) return undefined;
    local = s.slice(0, at);
    rest = s.slice(at + 1);
    if (!DOT_ATOM.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return undefined;
  }
  if (rest.endsWith('.') && !rest.endsWith('..')) rest = rest.slice(0, -1);
  if (!rest || !DOMAIN.test(rest)) return undefined;
  const domain = rest.toLowerCase();
  return { name: '', address: `${local}@${domain}`, local, domain };
}
