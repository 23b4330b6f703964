// Which HTML links show a URL of another site than the one they lead to. Follows Rspamd's HTML
// parser (html_url_is_phished): the visible text, trimmed, must start with a URL; both must be
// transfer URLs (http, https, ftp) or both not; hosts, then registrable domains must differ and
// neither be a subdomain of the other; a redirector whose query carries exactly one URL of the
// shown site is not phishing.
import { domainToUnicode } from 'node:url';
import { getDomain } from 'tldts';

/** Visible texts of at most this many characters are never URLs worth comparing (Rspamd: > 4). */
const MIN_TEXT = 5;
/** Redirector query levels followed (a wrapper around a wrapper around the target). */
const MAX_QUERY_NESTING = 4;

const URL_AT_START = /^(?:(?:https?|ftp):\/\/[^\s<>"']+|(?:www\.)?[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]*[a-z0-9\u00a1-\uffff])?(?:\.[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]*[a-z0-9\u00a1-\uffff])?)+(?:[/?#:][^\s<>"']*)?)/iu;
const TRANSFER = /^(?:https?|ftp):/i;
const EMBEDDED_URL = /(?:https?|ftp):\/\/[^\s&"'<>]+/gi;

export interface PhishedLink {
  /** The link's target and its registrable domain. */
  href: string;
  real: string;
  /** The URL shown as the link text and its registrable domain. */
  shown: string;
  shownDomain: string;
  /** The shown URL is the whole visible text (not a site name followed by a headline). */
  whole: boolean;
}

interface Parsed {
  host: string;
  domain: string;
  query: string;
}

function parse(url: string): Parsed | undefined {
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:/i.test(url) ? url : `http://${url}`);
  } catch {
    return undefined;
  }
  const host = u.hostname.replace(/\.$/, '');
  const d = host ? getDomain(host) : null;
  if (!d) return undefined;
  const unicode = (s: string): string => (s.includes('xn--') ? domainToUnicode(s) || s : s);
  return { host: unicode(host), domain: unicode(d), query: u.search };
}

/** `a` equals `b` or is a subdomain of it. */
function within(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The redirector's single embedded target (followed through nested wrappers) leads to `shown`. */
function queryTargets(query: string, shown: string): boolean {
  let q = query;
  let leaf: Parsed | undefined;
  for (let depth = 0; depth < MAX_QUERY_NESTING && q; depth++) {
    const found = [...safeDecode(q).matchAll(EMBEDDED_URL)].map((m) => parse(m[0])).filter((p) => p !== undefined);
    if (found.length === 0) break;
    if (found.length > 1) return false;
    leaf = found[0]!;
    q = leaf.query;
  }
  return leaf !== undefined && (within(leaf.domain, shown) || within(shown, leaf.domain));
}

export function phishedLink(href: string, text: string): PhishedLink | undefined {
  const t = text.trim();
  if (t.length < MIN_TEXT) return undefined;
  const m = URL_AT_START.exec(t);
  if (!m) return undefined;
  // From the start of the trailing run only: from inside a run that does not end the text it fails (quadratic).
  const shownUrl = m[0].replace(/(?<![.,;:!?)\]])[.,;:!?)\]]+$/, '');
  if (TRANSFER.test(href) !== (TRANSFER.test(shownUrl) || !/^[a-z][a-z0-9+.-]*:/i.test(shownUrl))) return undefined;
  const real = parse(href);
  const shown = parse(shownUrl);
  if (!real || !shown || real.host === shown.host || real.domain === shown.domain) return undefined;
  if (within(real.domain, shown.domain) || within(shown.domain, real.domain)) return undefined;
  if (queryTargets(real.query, shown.domain)) return undefined;
  const whole = t.slice(m[0].length).replace(/^[\s.,;:!?)\]]*/, '') === '';
  return { href, real: real.domain, shown: shownUrl, shownDomain: shown.domain, whole };
}
