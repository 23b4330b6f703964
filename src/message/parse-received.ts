// One `Received:` header value → ReceivedHop. The grammar in RFC 5321 §4.4 is followed by few
// MTAs, so this reads clauses by keyword (from / by / via / with / id / for) at the top level,
// keeps comments attached to their clause, and looks for the sending IP in the usual places:
// `[192.0.2.1]`, `[IPv6:2001:db8::1]`, `(192.0.2.1)`.
import ipaddr from 'ipaddr.js';
import type { MessageHeader, ReceivedHop } from './types.js';
import { mayBeIp } from './ip.js';
import { isBlank } from './blank.js';
import { parseMailDate } from './mail-date.js';
import { memoize } from './memo.js';
import { MAX_RECEIVED_CHARS, MAX_RECEIVED_HOPS, MAX_RECEIVED_TOKENS } from './limits.js';

interface Token {
  kind: 'word' | 'comment';
  text: string;
}

const KEYWORDS = new Set(['from', 'by', 'via', 'with', 'id', 'for']);
// Postfix and sendmail write `unknown` when the sender has no reverse DNS name.
const UNKNOWN_HOSTS = new Set(['unknown', '']);
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const OPEN_BRACKET = 0x5b;

/**
 * Words and comments of `s`, at most MAX_RECEIVED_TOKENS (`truncated` says the rest was not
 * read). Every branch consumes at least one character: blanks and word ends are one predicate,
 * so a character that ends a word is always skipped or starts a comment, and a word is never empty.
 */
function tokenise(s: string): { tokens: Token[]; truncated: boolean } {
  const tokens: Token[] = [];
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (isBlank(c)) {
      i++;
      continue;
    }
    if (tokens.length >= MAX_RECEIVED_TOKENS) return { tokens, truncated: true };
    if (c === OPEN_PAREN) {
      let depth = 0;
      let j = i;
      for (; j < n; j++) {
        const d = s.charCodeAt(j);
        if (d === OPEN_PAREN) depth++;
        else if (d === CLOSE_PAREN && --depth === 0) break;
      }
      tokens.push({ kind: 'comment', text: s.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    // A word runs to the next blank or comment; brackets keep IPv6 literals whole. Its first
    // character is neither, so the loop body runs at least once and the word is not empty.
    let j = i;
    do {
      if (s.charCodeAt(j) === OPEN_BRACKET) {
        const close = s.indexOf(']', j + 1);
        j = close < 0 ? n : close + 1;
      } else j++;
    } while (j < n && s.charCodeAt(j) !== OPEN_PAREN && !isBlank(s.charCodeAt(j)));
    tokens.push({ kind: 'word', text: s.slice(i, j) });
    i = j;
  }
  return { tokens, truncated: false };
}

/**
 * Normalised IP from `text` (brackets, `IPv6:` prefix, port suffix tolerated), or undefined.
 * Memoized: the same relays' addresses fill the Received headers of message after message.
 */
export const normaliseIp = memoize(normaliseIpUncached);

function normaliseIpUncached(text: string): string | undefined {
  let t = text.trim();
  if (t.startsWith('[')) t = t.slice(1, t.indexOf(']') < 0 ? t.length : t.indexOf(']'));
  if (/^ipv6:/i.test(t)) t = t.slice(5);
  // `1.2.3.4:25` and `1.2.3.4.25` style port suffixes are common in comments.
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3})[:.]\d+$/.exec(t);
  if (v4port) t = v4port[1]!;
  if (!mayBeIp(t)) return undefined;
  if (!ipaddr.isValid(t)) return undefined;
  try {
    if (ipaddr.IPv4.isValid(t) && !ipaddr.IPv4.isValidFourPartDecimal(t)) return undefined;
    return ipaddr.process(t).toString();
  } catch {
    return undefined;
  }
}

function ipIn(text: string): string | undefined {
  for (const m of text.matchAll(/\[([^\]]{2,64})\]/g)) {
    const ip = normaliseIp(m[1]!);
    if (ip) return ip;
  }
  return undefined;
}

const BARE_IP = /(?:^|[\s=(:])((?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7})(?=$|[\s)\],;:])/i;

function parseFromClause(tokens: Token[], hop: ReceivedHop): void {
  const first = tokens.find((t) => t.kind === 'word');
  const comments = tokens.filter((t) => t.kind === 'comment').map((t) => t.text);
  let helo: string | undefined;
  for (const c of comments) {
    const m = /\bhelo[= ]\s*([^\s)\]]+)/i.exec(c);
    if (m) {
      helo = m[1]!.replace(/^[[]|[\]]$/g, '');
      break;
    }
  }
  const firstIp = first ? normaliseIp(first.text) : undefined;
  if (helo !== undefined) {
    // Exim / qmail: `from rdns ([ip] helo=x)` — the leading word is what the receiver looked up.
    hop.fromHelo = helo;
    if (first && !firstIp && !UNKNOWN_HOSTS.has(first.text.toLowerCase())) hop.fromHostname = first.text.toLowerCase();
  } else if (first) {
    hop.fromHelo = first.text.replace(/^\[|\]$/g, '');
  }
  let ip = firstIp;
  for (const c of comments) {
    const bracketed = ipIn(c);
    if (bracketed) ip ??= bracketed;
    // Postfix / sendmail: `(rdns [ip])`: the word before the bracket is the reverse name;
    // sendmail writes `(ident@rdns [ip])` when the sender's ident service answered.
    const m = /^\s*(?:[^\s[\]()@]*@)?([^\s[\]()@]+)\s+\[/.exec(c);
    if (m && hop.fromHostname === undefined && !UNKNOWN_HOSTS.has(m[1]!.toLowerCase()) && !normaliseIp(m[1]!)) {
      hop.fromHostname = m[1]!.toLowerCase();
    }
    if (!ip) {
      const bare = BARE_IP.exec(c);
      if (bare) ip = normaliseIp(bare[1]!);
    }
  }
  if (ip) hop.fromIp = ip;
  readAsRspamd(tokens, hop);
}

/** Characters Rspamd's URL table counts as part of a domain name (bytes ≥ 0x80 too). */
const DOMAIN_CHAR = /[A-Za-z0-9._%\-\u0080-\uffff]/;
const RDNS_END = /[\s[(]/;

/**
 * A reverse name at the start of `s` as Rspamd 3.4 accepts one: domain characters up to a blank,
 * bracket or parenthesis, and then only with a dot in it (`unknown [ip]` names nothing); or the
 * whole of `s` when nothing follows the name.
 */
function leadingName(s: string): string | undefined {
  let n = 0;
  let dot = false;
  while (n < s.length && DOMAIN_CHAR.test(s[n]!)) {
    if (s[n] === '.') dot = true;
    n++;
  }
  if (n === 0) return undefined;
  if (n === s.length || (dot && RDNS_END.test(s[n]!))) return s.slice(0, n);
  return undefined;
}

/**
 * One piece of the `from` clause read for an address and a reverse name, in Rspamd's order:
 * `[ip]…` (Exim) gives the address only; a text that is an address gives it; `name [ip]`
 * (Postfix, sendmail) gives both; a text without a bracket may be a name.
 */
function readTcpInfo(text: string, hop: ReceivedHop): void {
  if (text.length === 0) return;
  if (text[0] === '[') {
    const close = text.indexOf(']');
    const ip = close > 0 ? normaliseIp(text.slice(1, close)) : undefined;
    if (ip) hop.realIp = ip;
    return;
  }
  const whole = /^[0-9a-f]/i.test(text) ? normaliseIp(text) : undefined;
  if (whole) {
    hop.realIp = whole;
    return;
  }
  const open = text.indexOf('[');
  if (open < 0) {
    const name = leadingName(text);
    if (name !== undefined) hop.realHostname = name.toLowerCase();
    return;
  }
  const close = text.lastIndexOf(']');
  if (close <= open) return;
  const ip = normaliseIp(text.slice(open + 1, close));
  if (!ip) return;
  hop.realIp = ip;
  const name = leadingName(text.slice(0, open));
  if (name !== undefined) hop.realHostname = name.toLowerCase();
}

/** Rspamd 3.4's reading of the `from` clause: its first comment, then its words if no address came of it. */
function readAsRspamd(tokens: Token[], hop: ReceivedHop): void {
  const comment = tokens.find((t) => t.kind === 'comment');
  if (comment) readTcpInfo(comment.text.trim(), hop);
  if (hop.realIp === undefined) {
    // Rspamd's `from` data: the first word, and a bracketed address right after it appended
    // without the blank (`host [ip]` reads as `host[ip]`, so a name without a dot counts there).
    const words = tokens.filter((t) => t.kind === 'word');
    const data = words[1]?.text.startsWith('[') ? `${words[0]!.text}${words[1].text}` : words[0]?.text ?? '';
    readTcpInfo(data, hop);
  }
}

const TLS_PROTO = /(?:SMTP|LMTP)SA?$|^HTTPS$/;
const AUTH_PROTO = /(?:SMTP|LMTP)S?A$/;
const TLS_COMMENT = /\b(?:using\s+TLS|using\s+SSL|version=TLS|TLS1(?:\.\d)?|with\s+cipher)\b/i;

/** Parse one Received header value (unfolded). Never throws. */
export function parseReceived(value: string): ReceivedHop {
  const raw = value;
  const text = value.length > MAX_RECEIVED_CHARS ? value.slice(0, MAX_RECEIVED_CHARS) : value;
  const hop: ReceivedHop = { raw, tls: false, authenticated: false, unparsed: false };
  if (text !== value) hop.truncated = true;
  const semi = text.lastIndexOf(';');
  const clauses = semi >= 0 ? text.slice(0, semi) : text;
  if (semi >= 0) {
    const when = parseMailDate(text.slice(semi + 1));
    if (when) hop.timestamp = when;
  }
  const sections = new Map<string, Token[]>();
  let current: Token[] | undefined;
  const { tokens, truncated } = tokenise(clauses);
  if (truncated) hop.truncated = true;
  for (const tok of tokens) {
    const kw = tok.kind === 'word' ? tok.text.toLowerCase() : '';
    if (KEYWORDS.has(kw) && !sections.has(kw)) {
      current = [];
      sections.set(kw, current);
    } else current?.push(tok);
  }
  const from = sections.get('from');
  if (from) parseFromClause(from, hop);
  const word = (k: string): string | undefined => sections.get(k)?.find((t) => t.kind === 'word')?.text;
  const by = word('by');
  if (by) hop.by = by.toLowerCase();
  const proto = word('with');
  if (proto) hop.protocol = proto.toUpperCase();
  const id = word('id');
  if (id) hop.id = id.replace(/[;,]$/, '');
  const rcpt = word('for');
  if (rcpt) hop.for = rcpt.replace(/^<|>;?$/g, '');
  if (hop.protocol) {
    hop.tls = TLS_PROTO.test(hop.protocol);
    hop.authenticated = AUTH_PROTO.test(hop.protocol);
  }
  if (!hop.tls && TLS_COMMENT.test(text)) hop.tls = true;
  if (!from && !by) hop.unparsed = true;
  return hop;
}

/**
 * The hops of a message's Received headers, top-most first, at most MAX_RECEIVED_HOPS (the
 * message's `too_many_received` anomaly says when there were more).
 */
export function parseReceivedChain(headers: readonly MessageHeader[]): ReceivedHop[] {
  const n = Math.min(headers.length, MAX_RECEIVED_HOPS);
  const hops: ReceivedHop[] = new Array(n);
  for (let i = 0; i < n; i++) hops[i] = parseReceived(headers[i]!.value);
  return hops;
}
