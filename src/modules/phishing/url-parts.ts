// The URLs the phishing feeds look at, and the parts of a URL they compare, in the form Rspamd
// 3.4's URL object gives them (url:get_host/get_path/get_query): the host lower-cased, the path
// without its leading slash, the query without its `?`, both percent-decoded; an empty path or
// query is absent. Decoded parts are byte strings (one char per byte, latin1) so that a `%ff`
// compares and hashes as the byte Rspamd sees.
import { domainToUnicode } from 'node:url';
import type { FoundUrl } from '../../message/types.js';

/**
 * URLs one message has checked at most: Rspamd's `max_lua_urls` (task:get_urls() returns no
 * more; past it Rspamd samples at random, mailsift takes the first ones).
 */
export const MAX_FEED_URLS = 1024;

/** Schemes task:get_urls() returns by default (no mailto, tel and the like). */
const WEB_SCHEMES = new Set(['http', 'https', 'ftp', 'file']);

export interface UrlParts {
  host: string;
  path?: string;
  query?: string;
}

const HEX_PAIR = /^[0-9a-f]{2}$/i;

/** `%XX` escapes to their bytes, everything else as its UTF-8 bytes; a malformed escape stays as written. */
function percentDecodeBytes(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  const out = Buffer.alloc(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const pair = bytes[i] === 0x25 && i + 2 < bytes.length ? String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!) : '';
    if (HEX_PAIR.test(pair)) {
      out[n++] = Number.parseInt(pair, 16);
      i += 2;
    } else {
      out[n++] = bytes[i]!;
    }
  }
  return out.subarray(0, n).toString('latin1');
}

/** Host, path and query of a URL text, or undefined when it does not parse or has no host. */
export function urlParts(text: string, knownHost?: string): UrlParts | undefined {
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `http://${text}`);
  } catch {
    return undefined;
  }
  let host = knownHost ?? u.hostname.toLowerCase();
  if (knownHost === undefined && host.includes('xn--')) host = domainToUnicode(host) || host;
  if (!host) return undefined;
  const parts: UrlParts = { host };
  // WHATWG already resolved `.` and `..` segments, as Rspamd normalises its paths.
  const path = percentDecodeBytes(u.pathname.replace(/^\//, ''));
  if (path) parts.path = path;
  const query = percentDecodeBytes(u.search.replace(/^\?/, ''));
  if (query) parts.query = query;
  return parts;
}

/** The message's URLs as Rspamd's task:get_urls() lists them: web schemes, no images, no URLs found in attached content. */
export function feedUrls(urls: readonly FoundUrl[]): FoundUrl[] {
  const out: FoundUrl[] = [];
  for (const u of urls) {
    if (out.length >= MAX_FEED_URLS) break;
    if (u.isEmail || u.count === 0 || !WEB_SCHEMES.has(u.scheme)) continue;
    if (u.firstFlags.has('image') || u.firstFlags.has('content')) continue;
    out.push(u);
  }
  return out;
}
