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

/**
 * How a URL was seen, for Rspamd's occurrence count (FoundUrl.count and firstFlags): in a text,
 * in the Subject, as a link (`showsUrl`: its text is a URL too; `special`: an <area>, which
 * Rspamd sets apart from <a> links), as the URL a link's text shows, as an image.
 */
export type Sighting =
  | { kind: 'text' | 'subject' | 'link_text' | 'image' }
  | { kind: 'link'; showsUrl: boolean; special: boolean };

/** A stored entry and the flags its candidate text gives it (schemaless, numeric, a port, …). */
interface Known {
  found: FoundUrl;
  own: readonly string[];
}

/** A URL candidate a text token held, and whether Rspamd's strict scan would find it too. */
interface TokenUrl {
  candidate: string;
  strictOk: boolean;
}

const NO_TOKEN_URLS: readonly TokenUrl[] = [];
/** Written forms Rspamd's strict scan looks for (besides an explicit scheme). */
const STRICT_PREFIX = /^(?:www|ftp)\./i;

/** Collects URLs and addresses for one message, de-duplicated, capped. */
export class UrlCollector {
  readonly urls = new Map<string, FoundUrl>();
  /** Candidate text as given (trimmed) → its stored entry: a link repeated in a message is parsed once. */
  readonly #byCandidate = new Map<string, Known>();
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
  /** Text tokens looked at → the URL candidates they held: a token repeated a thousand times is read once. */
  readonly #tokens = new Map<string, readonly TokenUrl[]>();

  /**
   * Add one URL candidate; returns the stored entry (new or merged) or undefined when rejected.
   * `seen`: how it was seen, when Rspamd counts the sighting (FoundUrl.count).
   */
  add(candidate: string, flags: readonly string[], displayed?: string, seen?: Sighting): FoundUrl | undefined {
    let text = candidate.trim();
    if (!text) return undefined;
    const known = this.#byCandidate.get(text);
    if (known) {
      // Its own flags (schemaless, numeric, …) were taken when it was first stored.
      this.#merge(known.found, flags, displayed);
      sight(known.found, known.own, seen);
      return known.found;
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
      return this.#remember(given, this.#store(`mailto:${addr.address}`, 'mailto', addr.domain, addr.domain, flags, [], displayed, true), [], seen);
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
    // Flags Rspamd's parser gives a URL that mailsift's `flags` do not carry: they only make a
    // plain link count (firstFlags).
    const own = [...extra];
    // As written: the URL parser drops a default port (`:80` on http), Rspamd keeps the flag.
    if (u.port || EXPLICIT_PORT.test(WRITTEN_AUTHORITY.exec(text)?.[1] ?? '')) own.push('has_port');
    if (u.username) own.push('has_user');
    if (ascii.includes('xn--')) own.push('idn');
    return this.#remember(given, this.#store(href, u.protocol.slice(0, -1), host, ascii, flags, extra, displayed, false, numeric ? bare : undefined), own, seen);
  }

  #remember(candidate: string, found: FoundUrl | undefined, own: readonly string[], seen: Sighting | undefined): FoundUrl | undefined {
    if (found) {
      this.#byCandidate.set(candidate, { found, own });
      sight(found, own, seen);
    }
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
    const found: FoundUrl = { url, scheme, host, hostAscii, flags: new Set([...flags, ...extra]), isEmail, count: 0, firstFlags: new Set() };
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
   * MAX_URL_SCAN_CHARS_PER_MESSAGE (the subject, a single header line, does not). `strict`: Rspamd
   * reads this text for links with a scheme or `www.` only, so only those count (FoundUrl.count).
   */
  scanText(text: string, flags: readonly string[], collectEmails = true, budgeted = true, strict = false): void {
    const seen: Sighting = { kind: flags.includes('subject') ? 'subject' : 'text' };
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
      // A token repeated a thousand times costs one look; its URLs are counted again each time
      // (their flags are those of the first time, as before).
      const known = this.#tokens.get(token);
      if (known) {
        for (const k of known) {
          const entry = this.#byCandidate.get(k.candidate);
          if (entry && (!strict || k.strictOk)) sight(entry.found, entry.own, seen);
        }
        continue;
      }
      this.#candidates++;
      const held: TokenUrl[] = [];
      const direct = directUrl(token);
      if (direct !== undefined) {
        if (this.add(direct, flags, undefined, seen)) held.push({ candidate: direct, strictOk: true });
      } else if (MAY_LINK.test(token)) {
        const matches = linkify.match(token);
        if (matches) this.#takeMatches(matches, flags, collectEmails, strict, seen, held);
      }
      this.#tokens.set(token, held.length > 0 ? held : NO_TOKEN_URLS);
    }
  }

  #takeMatches(matches: Match[], flags: readonly string[], collectEmails: boolean, strict: boolean, seen: Sighting, held: TokenUrl[]): void {
    for (const m of matches) {
      let candidate: string;
      if (m.schema === 'mailto:') {
        if (!m.raw.toLowerCase().startsWith('mailto:')) {
          if (collectEmails) this.addEmail(m.raw);
          continue;
        }
        candidate = m.url;
      } else candidate = m.schema === '' ? m.raw : m.url;
      // A bare host name is found by Rspamd's full scan only (its list of top-level domains).
      const strictOk = m.schema !== '' || STRICT_PREFIX.test(m.raw);
      if (this.add(candidate, flags, undefined, !strict || strictOk ? seen : undefined)) held.push({ candidate, strictOk });
    }
  }

  /**
   * Links and images collected while rendering an HTML part. The link is taken before the URL its
   * text shows, as Rspamd reads them (the tag opens before its text ends), which decides how the
   * sightings count.
   */
  scanHtml(facts: HtmlFacts): void {
    for (const link of facts.links) {
      if (!link.href || link.href.startsWith('#')) continue;
      const text = link.text;
      const shown = text && text.length < 2048 && HAS_TRIGGER.test(text) ? shownUrl(text) : undefined;
      // Rspamd takes a link's text as a URL only when one starts it (and it is over 4 characters).
      const showsUrl = shown !== undefined && shown.atStart && text.length > 4;
      this.add(link.href, [], shown?.url, { kind: 'link', showsUrl, special: link.tag === 'area' });
      if (shown !== undefined) this.add(shown.url, ['html_displayed'], undefined, showsUrl ? { kind: 'link_text' } : undefined);
    }
    for (const src of facts.images) {
      if (src && !src.toLowerCase().startsWith('cid:')) this.add(src, ['image'], undefined, { kind: 'image' });
    }
  }
}

/** Records one counted sighting of `found` (see Sighting and FoundUrl.count / firstFlags). */
function sight(found: FoundUrl, own: readonly string[], seen: Sighting | undefined): void {
  if (seen === undefined) return;
  const f = found.firstFlags;
  const first = found.count === 0;
  if (first) for (const o of own) f.add(o);
  switch (seen.kind) {
    case 'text':
      if (first) f.add('text');
      break;
    case 'subject':
      // Rspamd marks a URL first found in the Subject as a displayed one too.
      if (first) {
        f.add('subject');
        f.add('html_displayed');
      }
      break;
    case 'image':
      f.add('image');
      break;
    case 'link':
      if (first && seen.special) f.add('special');
      if (seen.showsUrl) f.add('url_displayed');
      break;
    case 'link_text':
      if (first) {
        f.add('html_displayed');
        // Rspamd stores it, then counts the showing once more.
        found.count = 1;
      } else if (f.has('text')) {
        // A URL of the text shown by a link: a hint, unless the link goes there itself.
        if (!f.has('url_displayed')) f.add('html_displayed');
        f.delete('text');
      }
      break;
  }
  found.count++;
}

// Rspamd's `obscured` and `zw_spaces` URL flags, judged on the authority as written (the URL
// parser normalises these tricks away): a numeric host written other than as a dotted quad
// (decimal, hex, octal, short forms), an empty user part or a doubled @, undecodable bytes in the
// host; zero-width characters. A %-escaped host is only unusual, not obscured (Rspamd decodes it
// silently).
const WRITTEN_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\\]*)/i;
const WRITTEN_PORT = /:\d*$/;
const EXPLICIT_PORT = /:\d+$/;
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
 * The URL a link's text shows: the one it starts with, else the first one in it (`atStart`
 * tells which). Text that starts with `http://`, `https://` or `ftp://` is read by directUrl (as
 * the body scan does) without linkify's search regexps.
 */
function shownUrl(shown: string): { url: string; atStart: boolean } | undefined {
  if (SCHEME_AT_START.test(shown)) {
    let end = 0;
    while (end < shown.length && !isTokenEnd(shown.charCodeAt(end))) end++;
    const direct = directUrl(shown.slice(0, end));
    if (direct !== undefined) return { url: direct, atStart: true };
  }
  if (!linkify.test(shown)) return undefined;
  const m = linkify.matchAtStart(shown) ?? linkify.match(shown)?.[0];
  if (!m || m.schema === 'mailto:') return undefined;
  return { url: m.schema === '' ? m.raw : m.url, atStart: m.index === 0 };
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
