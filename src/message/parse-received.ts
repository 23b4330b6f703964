// One `Received:` header value → ReceivedHop. The grammar in RFC 5321 §4.4 is followed by few
// MTAs, so this reads clauses by keyword (from / by / via / with / id / for) at the top level,
// keeps comments attached to their clause, and looks for the sending IP in the usual places:
// `[192.0.2.1]`, `[IPv6:2001:db8::1]`, `(192.0.2.1)`.
import ipaddr from 'ipaddr.js';
import type { ReceivedHop } from './types.js';
import { mayBeIp } from './ip.js';
import { memoize } from './memo.js';

/** Characters of a Received value read; real ones are far shorter, this bounds the tokeniser. */
const MAX_RECEIVED_CHARS = 4096;

interface Token {
  kind: 'word' | 'comment';
  text: string;
}

const KEYWORDS = new Set(['from', 'by', 'via', 'with', 'id', 'for']);
// Postfix and sendmail write `unknown` when the sender has no reverse DNS name.
const UNKNOWN_HOSTS = new Set(['unknown', '']);

/** `(` or a code point of the regexp class `\s` (the test this replaces ran once per character). */
function endsWord(c: number): boolean {
  if (c === 0x28 || c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true;
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

function tokenise(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
    } else if (c === '(') {
      let depth = 0;
      let j = i;
      for (; j < s.length; j++) {
        if (s[j] === '(') depth++;
        else if (s[j] === ')' && --depth === 0) break;
      }
      out.push({ kind: 'comment', text: s.slice(i + 1, j) });
      i = j + 1;
    } else {
      let j = i;
      // A word runs to the next blank or comment; brackets keep IPv6 literals whole.
      while (j < s.length && !endsWord(s.charCodeAt(j))) {
        if (s[j] === '[') {
          const close = s.indexOf(']', j);
          j = close < 0 ? s.length : close + 1;
        } else j++;
      }
      out.push({ kind: 'word', text: s.slice(i, j) });
      i = j;
    }
  }
  return out;
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
    // Postfix / sendmail: `(rdns [ip])`: the word before the bracket is the reverse name.
    const m = /^\s*([^\s[\]()]+)\s+\[/.exec(c);
    if (m && hop.fromHostname === undefined && !UNKNOWN_HOSTS.has(m[1]!.toLowerCase()) && !normaliseIp(m[1]!)) {
      hop.fromHostname = m[1]!.toLowerCase();
    }
    if (!ip) {
      const bare = BARE_IP.exec(c);
      if (bare) ip = normaliseIp(bare[1]!);
    }
  }
  if (ip) hop.fromIp = ip;
}

const TLS_PROTO = /(?:SMTP|LMTP)SA?$|^HTTPS$/;
const AUTH_PROTO = /(?:SMTP|LMTP)S?A$/;
const TLS_COMMENT = /\b(?:using\s+TLS|using\s+SSL|version=TLS|TLS1(?:\.\d)?|with\s+cipher)\b/i;

/** Parse one Received header value (unfolded). Never throws. */
export function parseReceived(value: string): ReceivedHop {
  const raw = value;
  const text = value.length > MAX_RECEIVED_CHARS ? value.slice(0, MAX_RECEIVED_CHARS) : value;
  const hop: ReceivedHop = { raw, tls: false, authenticated: false, unparsed: false };
  const semi = text.lastIndexOf(';');
  const clauses = semi >= 0 ? text.slice(0, semi) : text;
  if (semi >= 0) {
    const when = text.slice(semi + 1).trim().replace(/\s*\([^)]*\)\s*$/, '');
    const ms = Date.parse(when);
    if (!Number.isNaN(ms)) hop.timestamp = new Date(ms);
  }
  const sections = new Map<string, Token[]>();
  let current: Token[] | undefined;
  for (const tok of tokenise(clauses)) {
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
