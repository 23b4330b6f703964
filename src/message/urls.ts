// URL and e-mail extraction from text, HTML links and the subject. Hosts are normalised by
// the WHATWG URL parser (lower case, IDN → punycode in hostAscii), registrable domains by tldts.
import { domainToUnicode } from 'node:url';
import { LinkifyIt, type Match } from 'linkify-it';
import { getDomain } from 'tldts';
import { makeAddress } from './addresses.js';
import { MAX_BODY_EMAILS, MAX_URL_CANDIDATES, MAX_URLS, MAX_URL_SCAN_CHARS, MAX_URL_SCAN_CHARS_PER_MESSAGE } from './limits.js';
import { memoize } from './memo.js';
import type { EmailAddress, FoundUrl, HtmlFacts } from './types.js';

// Built once per process: linkify compiles its regexps at construction.
// urlAuth: `http://user@host/` is kept whole; the user part is what phishing rules look at.
const linkify = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true, urlAuth: true });

// A dot, colon or @ between word characters: where a URL or address token may be.
const TRIGGER = /[A-Za-z0-9\u00a1-\uffff][.:@][A-Za-z0-9\u00a1-\uffff/]/g;
/** TRIGGER for a plain test: text without it holds no URL or address linkify would find. */
const HAS_TRIGGER = new RegExp(TRIGGER.source);
/**
 * What a token needs for linkify to find anything in it: an address (`@`), a scheme (`//`,
 * `mailto:`), a host with a top-level domain (a dot and two letters) or a dotted IPv4 address.
 * Times, version numbers and prices (`10:54:46`, `1.0.4`, `7.99`) have none and skip its
 * search regexps, which cost more than the rest of the URL scan.
 */
const MAY_LINK = /@|\/\/|mailto:|\.[A-Za-z\u00a1-\uffff]{2}|\d\.\d+\.\d+\.\d/i;
/** Registrable domain of a host; hosts recur from message to message. */
const registrableDomain = memoize((host: string): string | null => getDomain(host));

/** Token delimiters for candidate extraction: whitespace, quotes and angle brackets. */
function isTokenEnd(c: number): boolean {
  return c <= 0x20 || c === 0x22 || c === 0x27 || c === 0x3c || c === 0x3e || c === 0x60 || c === 0xa0;
}
const HAS_PATH = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*[/?#]/i;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const HOSTLESS_SCHEMES = new Set(['javascript:', 'data:', 'cid:', 'about:', 'tel:', 'sms:', 'file:', 'blob:']);

/** Collects URLs and addresses for one message, de-duplicated, capped. */
export class UrlCollector {
  readonly urls = new Map<string, FoundUrl>();
  /** Candidate text as given (trimmed) → its stored entry: a link repeated in a message is parsed once. */
  readonly #byCandidate = new Map<string, FoundUrl>();
  readonly emails = new Map<string, EmailAddress>();
  /** Set when MAX_URLS was reached: later URLs were not kept. */
  truncated = false;
  /** Set when MAX_BODY_EMAILS was reached: later addresses were not kept. */
  emailsTruncated = false;
  /** Set when text was left unsearched (MAX_URL_SCAN_CHARS, its per-message total, or MAX_URL_CANDIDATES). */
  scanTruncated = false;
  #candidates = 0;
  /** Characters the message may still have searched (MAX_URL_SCAN_CHARS_PER_MESSAGE). */
  #scanLeft = MAX_URL_SCAN_CHARS_PER_MESSAGE;
  readonly #seenTokens = new Set<string>();

  /** Add one URL candidate; returns the stored entry (new or merged) or undefined when rejected. */
  add(candidate: string, flags: readonly string[], displayed?: string): FoundUrl | undefined {
    let text = candidate.trim();
    if (!text) return undefined;
    const known = this.#byCandidate.get(text);
    if (known) {
      // Its own flags (schemaless, numeric, …) were taken when it was first stored.
      this.#merge(known, flags, displayed);
      return known;
    }
    const given = text;
    const extra: string[] = [];
    const c0 = text[0];
    // Relative links (`/path`, `./x`, `?q`) have no host of their own.
    if ((c0 === '/' && text[1] !== '/') || c0 === '.' || c0 === '?' || c0 === '\\') return undefined;
    if (text.startsWith('//')) {
      text = `http:${text}`;
      extra.push('schemaless');
    } else if (!HAS_SCHEME.test(text)) {
      text = `http://${text}`;
      extra.push('schemaless');
    }
    const lower = text.slice(0, 12).toLowerCase();
    for (const s of HOSTLESS_SCHEMES) if (lower.startsWith(s)) return undefined;
    if (lower.startsWith('mailto:')) {
      const addr = makeAddress(decodeURIComponentSafe(text.slice(7).split('?')[0]!).trim());
      if (addr.invalid) return undefined;
      this.addEmail(addr.address);
      return this.#remember(given, this.#store(`mailto:${addr.address}`, 'mailto', addr.domain, addr.domain, flags, [], displayed, true));
    }
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      return undefined;
    }
    // Special schemes (http, https, ftp, …) have their host lower-cased by the URL parser; other
    // schemes keep an opaque host as written, and host names are case-insensitive either way.
    const hostAscii = u.hostname.toLowerCase();
    if (!hostAscii) return undefined;
    const bare = hostAscii.startsWith('[') ? hostAscii.slice(1, -1) : hostAscii;
    const numeric = IPV4.test(bare) || bare.includes(':');
    if (numeric) extra.push('numeric');
    markObscured(text, numeric, extra);
    const ascii = numeric ? bare : hostAscii;
    const host = numeric || !hostAscii.includes('xn--') ? ascii : domainToUnicode(hostAscii) || hostAscii;
    // The URL parser adds a `/` path to a bare host; keep the URL as written (as Rspamd does).
    const href = u.pathname === '/' && !u.search && !u.hash && !HAS_PATH.test(text) ? u.href.slice(0, -1) : u.href;
    return this.#remember(given, this.#store(href, u.protocol.slice(0, -1), host, ascii, flags, extra, displayed, false, numeric ? bare : undefined));
  }

  #remember(candidate: string, found: FoundUrl | undefined): FoundUrl | undefined {
    if (found) this.#byCandidate.set(candidate, found);
    return found;
  }

  #merge(seen: FoundUrl, flags: readonly string[], displayed: string | undefined, extra: readonly string[] = []): void {
    for (const f of flags) seen.flags.add(f);
    for (const f of extra) seen.flags.add(f);
    if (displayed !== undefined && seen.displayed === undefined) seen.displayed = displayed;
  }

  #store(
    url: string,
    scheme: string,
    host: string,
    hostAscii: string,
    flags: readonly string[],
    extra: string[],
    displayed: string | undefined,
    isEmail: boolean,
    ip?: string,
  ): FoundUrl | undefined {
    const seen = this.urls.get(url);
    if (seen) {
      this.#merge(seen, flags, displayed, extra);
      return seen;
    }
    if (this.urls.size >= MAX_URLS) {
      this.truncated = true;
      return undefined;
    }
    const found: FoundUrl = { url, scheme, host, hostAscii, flags: new Set([...flags, ...extra]), isEmail };
    let tld = ip ?? (hostAscii ? registrableDomain(hostAscii) : null);
    // Keep `tld` in the same form as `host`, so `host.endsWith(tld)` holds for IDN hosts too.
    if (tld && tld.includes('xn--')) tld = domainToUnicode(tld) || tld;
    if (tld) found.tld = tld;
    if (displayed !== undefined) found.displayed = displayed;
    this.urls.set(url, found);
    return found;
  }

  addEmail(address: string): void {
    const a = makeAddress(address.trim());
    if (a.invalid || this.emails.has(a.address)) return;
    if (this.emails.size >= MAX_BODY_EMAILS) {
      this.emailsTruncated = true;
      return;
    }
    this.emails.set(a.address, a);
  }

  /**
   * URLs and bare addresses in visible text. `budgeted`: the text counts against the message's
   * MAX_URL_SCAN_CHARS_PER_MESSAGE (the subject, a single header line, does not).
   */
  scanText(text: string, flags: readonly string[], collectEmails = true, budgeted = true): void {
    const limit = budgeted ? Math.min(MAX_URL_SCAN_CHARS, this.#scanLeft) : MAX_URL_SCAN_CHARS;
    if (text.length > limit) this.scanTruncated = true;
    const slice = text.length > limit ? text.slice(0, limit) : text;
    if (budgeted) this.#scanLeft -= slice.length;
    // linkify's fuzzy search regexp is slow over long prose; run it only on the few tokens
    // that could hold a URL or an address (a dot, colon or @ between word characters).
    TRIGGER.lastIndex = 0;
    for (let t = TRIGGER.exec(slice); t; t = TRIGGER.exec(slice)) {
      if (this.truncated) return;
      if (this.#candidates >= MAX_URL_CANDIDATES) {
        this.scanTruncated = true;
        return;
      }
      let from = t.index;
      while (from > 0 && !isTokenEnd(slice.charCodeAt(from - 1))) from--;
      let to = t.index + 3;
      while (to < slice.length && !isTokenEnd(slice.charCodeAt(to))) to++;
      TRIGGER.lastIndex = to;
      const token = slice.slice(from, to);
      // A token repeated a thousand times costs one look.
      if (this.#seenTokens.has(token)) continue;
      this.#seenTokens.add(token);
      this.#candidates++;
      const direct = directUrl(token);
      if (direct !== undefined) {
        this.add(direct, flags);
        continue;
      }
      if (!MAY_LINK.test(token)) continue;
      const matches = linkify.match(token);
      if (matches) this.#takeMatches(matches, flags, collectEmails);
    }
  }

  #takeMatches(matches: Match[], flags: readonly string[], collectEmails: boolean): void {
    for (const m of matches) {
      if (m.schema === 'mailto:') {
        if (m.raw.toLowerCase().startsWith('mailto:')) this.add(m.url, flags);
        else if (collectEmails) this.addEmail(m.raw);
      } else this.add(m.schema === '' ? m.raw : m.url, flags);
    }
  }

  /** Links and images collected while rendering an HTML part. */
  scanHtml(facts: HtmlFacts): void {
    for (const link of facts.links) {
      if (!link.href || link.href.startsWith('#')) continue;
      let displayed: string | undefined;
      const shown = link.text;
      if (shown && shown.length < 2048 && HAS_TRIGGER.test(shown)) {
        displayed = shownUrl(shown);
        if (displayed !== undefined) this.add(displayed, ['html_displayed']);
      }
      this.add(link.href, [], displayed);
    }
    for (const src of facts.images) {
      if (src && !src.toLowerCase().startsWith('cid:')) this.add(src, ['image']);
    }
  }
}

// Rspamd's `obscured` and `zw_spaces` URL flags, judged on the authority as written (the URL
// parser normalises these tricks away): a numeric host written other than as a dotted quad
// (decimal, hex, octal, short forms), an empty user part or a doubled @, undecodable bytes in the
// host; zero-width characters. A %-escaped host is only unusual, not obscured (Rspamd decodes it
// silently).
const WRITTEN_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\\]*)/i;
const WRITTEN_PORT = /:\d*$/;
const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff]/;
const USER_AT_TRICK = /^@|@@/;

function markObscured(text: string, numeric: boolean, extra: string[]): void {
  const auth = WRITTEN_AUTHORITY.exec(text)?.[1];
  if (auth === undefined) return;
  if (ZERO_WIDTH.test(auth)) extra.push('zw_spaces');
  const at = auth.lastIndexOf('@');
  const host = auth.slice(at + 1).replace(WRITTEN_PORT, '');
  const numericTrick = numeric && !host.startsWith('[') && !IPV4.test(host);
  if (numericTrick || host.includes('\ufffd') || (at >= 0 && USER_AT_TRICK.test(auth.slice(0, at + 1)))) extra.push('obscured');
}

const SCHEME_AT_START = /^[([{]?(?:https?|ftp):\/\/[^/?#\s@]*[A-Za-z0-9\]]/i;
const TRAILING_PUNCT = new Set(['.', ',', ';', ':', '!', '?', '*', "'", '"']);
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

function count(s: string, ch: string): number {
  let n = 0;
  for (let i = s.indexOf(ch); i >= 0; i = s.indexOf(ch, i + 1)) n++;
  return n;
}

/**
 * The common case, a token that starts with `http://`, `https://` or `ftp://`, resolved without
 * linkify's search regexps: trailing punctuation and unbalanced closing brackets are not part
 * of the URL. Tokens with user info or anything unusual go to linkify.
 */
function directUrl(token: string): string | undefined {
  if (!SCHEME_AT_START.test(token)) return undefined;
  let t = token;
  const open = t[0];
  if (open === '(' || open === '[' || open === '{') t = t.slice(1);
  for (;;) {
    const last = t[t.length - 1]!;
    if (TRAILING_PUNCT.has(last)) t = t.slice(0, -1);
    else if (last in CLOSERS && count(t, CLOSERS[last]!) < count(t, last)) t = t.slice(0, -1);
    else break;
  }
  return t;
}

/**
 * The URL a link's text shows: the first one in it, or the one it starts with. Text that starts
 * with `http://`, `https://` or `ftp://` is read by directUrl (as the body scan does) without
 * linkify's search regexps.
 */
function shownUrl(shown: string): string | undefined {
  if (SCHEME_AT_START.test(shown)) {
    let end = 0;
    while (end < shown.length && !isTokenEnd(shown.charCodeAt(end))) end++;
    const direct = directUrl(shown.slice(0, end));
    if (direct !== undefined) return direct;
  }
  if (!linkify.test(shown)) return undefined;
  const m = linkify.matchAtStart(shown) ?? linkify.match(shown)?.[0];
  if (!m || m.schema === 'mailto:') return undefined;
  return m.schema === '' ? m.raw : m.url;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
