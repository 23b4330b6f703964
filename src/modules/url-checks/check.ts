// URL rules: look-alike host names (a Latin name with Cyrillic or Greek letters slipped in) and
// IPFS gateway links, a favourite of phishing kits because the content cannot be taken down.
import type { FoundUrl, Task } from '../../plugin-api/index.js';

const LATIN = /\p{Script=Latin}/u;
/** Scripts with letters that pass for Latin ones (а/a, о/o, р/p, ο/o, ѕ/s …). */
const LOOKALIKE = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;

/** One label mixing Latin with a look-alike script: a homograph, not a genuine IDN name. */
export function isSpoofedHost(host: string): boolean {
  return host.split('.').some((label) => LATIN.test(label) && LOOKALIKE.test(label));
}

/** A gateway path (`/ipfs/<cid>`, `/ipns/<name>`) or a subdomain gateway (`<cid>.ipfs.<gateway>`). */
const IPFS_PATH = /^\/ip[fn]s\/(?:Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{50,}|[a-z0-9.-]+\.[a-z]{2,})/i;
const IPFS_HOST = /(?:^|\.)(?:Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{50,})\.ip[fn]s\./i;

export function isIpfsGateway(u: FoundUrl): boolean {
  if (u.isEmail) return false;
  if (IPFS_HOST.test(u.hostAscii)) return true;
  const slash = u.url.indexOf('/', u.url.indexOf('//') + 2);
  return slash > 0 && IPFS_PATH.test(u.url.slice(slash));
}

export function checkOmograph(task: Task): void {
  const hits: string[] = [];
  let phished = false;
  const seen = new Set<string>();
  for (const u of task.message.urls) {
    if (u.isEmail || seen.has(u.host)) continue;
    seen.add(u.host);
    if (!isSpoofedHost(u.host)) continue;
    hits.push(u.host);
    // A spoofed name shown as a link's text, or behind a phished link, is the full attack.
    if (u.flags.has('html_displayed') || u.flags.has('phished')) phished = true;
  }
  if (hits.length) task.insert('OMOGRAPH_URL', phished ? 1 : 0.5, hits);
}

export function checkIpfs(task: Task): void {
  const hits = task.message.urls.filter(isIpfsGateway).map((u) => u.host);
  if (hits.length) task.insert('HAS_IPFS_GATEWAY_URL', 1, [...new Set(hits)]);
}

/**
 * Links whose host hides what it is (the message layer's `obscured` flag: a numeric host in
 * decimal, hex or short form, an empty user part or a doubled @, undecodable bytes) or carries
 * zero-width characters (`zw_spaces`). Rspamd reports each host once, by its normalised name.
 */
export function checkSuspiciousUrl(task: Task): void {
  const obscured = new Set<string>();
  const zeroWidth = new Set<string>();
  for (const u of task.message.urls) {
    if (u.flags.has('obscured')) obscured.add(u.host);
    if (u.flags.has('zw_spaces')) zeroWidth.add(u.host);
  }
  if (obscured.size) task.insert('R_SUSPICIOUS_URL', 1, [...obscured]);
  if (zeroWidth.size) task.insert('ZERO_WIDTH_SPACE_URL', 1, [...zeroWidth]);
}

/** Flags of a URL found in the body: Rspamd keeps the body's entry, without `subject`, for those. */
const BODY_FLAGS = ['text', 'html_displayed', 'image'] as const;

/**
 * Rspamd searches the Subject strictly: links with a scheme, or starting `www.` / `ftp.`; a bare
 * host name there (`news from salon.com`) is no link.
 */
const STRICT_SCHEMALESS = /^(?:www|ftp)\./;

/**
 * URL_IN_SUBJECT: a link in the Subject line. The whole subject being the URL counts in full, a
 * `www.` link without a scheme a tenth, anything else a quarter; the option is the host.
 */
export function checkUrlInSubject(task: Task): void {
  if (task.meta.raw) return;
  for (const u of task.message.urls) {
    if (u.isEmail || !u.flags.has('subject') || BODY_FLAGS.some((f) => u.flags.has(f))) continue;
    const schemaless = u.flags.has('schemaless');
    if (schemaless && !STRICT_SCHEMALESS.test(u.hostAscii)) continue;
    const weight = schemaless ? 0.1 : u.url === task.message.subject?.trim() ? 1 : 0.25;
    task.insert('URL_IN_SUBJECT', weight, u.host);
    return;
  }
}

/** Schemes Rspamd's URL list returns by default (mailto, tel and the rest left out). */
const LISTED_SCHEMES = new Set(['http', 'https', 'ftp', 'file']);
/** Record flags its URI_COUNT_ODD leaves out: URLs only shown (Subject, link texts) and <area> links. */
const NOT_COUNTED = ['subject', 'html_displayed', 'special'];

/**
 * URI_COUNT_ODD (Rspamd rules/misc.lua): a message whose top Content-Type is
 * multipart/alternative shows its URLs an odd number of times. A generated alternative names
 * each link in the text and again in the HTML, so the total is even. Counted as Rspamd counts
 * (FoundUrl.count): the occurrences of every web URL whose own record carries a flag, leaving
 * out the Subject's, those only a link's text shows, and plain links first met in the HTML (a
 * record with no flag at all). The option is the total.
 */
export function checkUriCountOdd(task: Task): void {
  const ct = task.message.headers.first('content-type')?.value;
  if (ct === undefined || !/^multipart\/alternative/i.test(ct)) return;
  let total = 0;
  for (const u of task.message.urls) {
    if (u.isEmail || u.count === 0 || u.firstFlags.size === 0 || !LISTED_SCHEMES.has(u.scheme)) continue;
    if (NOT_COUNTED.some((f) => u.firstFlags.has(f))) continue;
    total += u.count;
  }
  if (total % 2 === 1) task.insert('URI_COUNT_ODD', 1, String(total));
}
