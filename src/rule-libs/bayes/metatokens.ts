// Metatokens: strings describing the message's shape rather than its words
// — part sizes, file names, the multipart structure, mailer headers, link domains, send time,
// authentication results. Each is hashed like a word and flagged META.
import { getDomain } from 'tldts';
import type { Message } from '../../message/types.js';
import { headerTokens } from './header-tokens.js';
import { htmlTokens } from './html-tokens.js';

/** Headers whose values become `#h:` metatokens (Rspamd's classify_headers plus Organization). */
export const CLASSIFY_HEADERS = ['User-Agent', 'X-Mailer', 'Content-Type', 'X-MimeOLE', 'Organization', 'Organisation'] as const;
/** Link domains turned into `#u:` metatokens at most: a link farm should not outvote the text. */
const MAX_URL_METATOKENS = 5;

export interface MetatokenOptions {
  images: boolean;
  mimeInfo: boolean;
  headers: boolean;
  urls: boolean;
  meta: boolean;
  /** Sender and relay facts from the header block (header-tokens.ts); a mailsift extension. */
  headerTokens?: boolean;
  /** The HTML tags and attributes a message is built from (html-tokens.ts); a mailsift extension. */
  htmlTokens?: boolean;
}

function headerShort(name: string): string {
  if (name.includes('-')) return name.split('-').map((p) => p.charAt(0).toUpperCase()).join('-');
  return name.slice(0, 3).toLowerCase();
}

function fileTokens(filename: string, out: string[]): void {
  out.push(`#f:${filename}`);
  const pieces = filename.split('.');
  if (pieces.length >= 2) {
    const ext = pieces[pieces.length - 1]!.toLowerCase();
    if (ext.length >= 2) out.push(`#fe:${ext}`);
    if (pieces.length >= 3) out.push(`#fe:${pieces[pieces.length - 2]!.toLowerCase()}.${ext}`);
  }
  const base = pieces.length >= 2 ? pieces.slice(0, -1).join('.') : filename;
  const spaced = base.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/([A-Za-z])(\d)/g, '$1 $2');
  for (const p of spaced.split(/[-_ .#]+/)) {
    if (p.length >= 2 && !/^\d+$/.test(p)) out.push(`#fp:${p.toLowerCase()}`);
  }
}

function authTokens(msg: Message): string | undefined {
  const ar = msg.headers.first('Authentication-Results');
  if (!ar) return undefined;
  const parts: string[] = [];
  const spf = /\bspf=(\w+)/i.exec(ar.value);
  if (spf) parts.push(`s=${spf[1]!.toLowerCase()}`);
  for (const [result, domain] of dkimResults(ar.value)) parts.push(`d=${result.toLowerCase()}:${domain.toLowerCase()}`);
  return parts.length > 0 ? parts.join(',') : undefined;
}

const DKIM_RESULT = /\bdkim=(\w+)/gi;
const HEADER_D = /header\.d=([\w.-]+)/gi;

/**
 * The matches of /\bdkim=(\w+)[^;]*?header\.d=([\w.-]+)/gi, found in one pass: after each
 * `dkim=result`, the first `header.d=domain` before the next `;` (or, as the regexp's
 * backtracking does, one that starts inside the result word: `dkim=passheader.d=x`). The regexp
 * retried its lazy run from every `dkim=` to the `;`, quadratic on a header of `dkim=adkim=a…`.
 * Once a `dkim=` finds none before its `;`, no later one in that stretch can, so the search moves
 * past the `;`.
 */
export function dkimResults(value: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  DKIM_RESULT.lastIndex = 0;
  for (let m = DKIM_RESULT.exec(value); m; m = DKIM_RESULT.exec(value)) {
    const wordStart = m.index + 5;
    const wordEnd = m.index + m[0].length;
    let semi = value.indexOf(';', wordEnd);
    if (semi < 0) semi = value.length;
    HEADER_D.lastIndex = wordEnd;
    let d = HEADER_D.exec(value);
    let result = m[1]!;
    if (!d || d.index >= semi) {
      // A shorter result word: `header` at its end may begin the `header.d=`.
      HEADER_D.lastIndex = wordEnd - 6;
      d = wordEnd - 6 > wordStart ? HEADER_D.exec(value) : null;
      if (d && d.index === wordEnd - 6) result = value.slice(wordStart, d.index);
      else d = null;
    }
    if (d) {
      out.push([result, d[1]!]);
      DKIM_RESULT.lastIndex = d.index + d[0].length;
    } else DKIM_RESULT.lastIndex = semi;
  }
  return out;
}

/** The metatoken strings of a message, in Rspamd's order. */
export function metatokens(msg: Message, opts: MetatokenOptions): string[] {
  const out: string[] = [];
  if (opts.images) {
    for (const a of msg.attachments) {
      if (!a.contentType.startsWith('image/')) continue;
      out.push('image', a.contentType.slice(6));
      if (a.filename) out.push(a.filename);
    }
  }
  if (opts.mimeInfo) {
    for (const p of msg.parts) {
      if (p.isMultipart) continue;
      if (p.rawSize > 0) out.push(`#ps:${Math.floor(Math.log(p.rawSize))}`);
      if (p.filename) fileTokens(p.filename, out);
    }
    let plain = 0;
    let html = 0;
    let flags = '';
    for (const tp of msg.textParts) {
      out.push(`#cs:${tp.charset ?? 'unk'}`);
      if (tp.kind === 'html') html++;
      else plain++;
      if (tp.lines < 2 && !flags.includes('#ot')) flags += '#ot';
      if (tp.empty && tp.kind === 'plain' && !flags.includes('#ep')) flags += '#ep';
      if (tp.empty && tp.kind === 'html' && !flags.includes('#eh')) flags += '#eh';
    }
    const kind = html > 0 && plain > 0 ? '#mpth' : html > 0 ? '#ho' : plain > 0 ? '#to' : '#unk';
    out.push(`#m:${kind}${flags}`);
  }
  if (opts.headers) {
    for (const name of CLASSIFY_HEADERS) {
      const h = msg.headers.first(name);
      if (!h) continue;
      // Content-Type parameters carry per-message boundaries: only the type itself recurs.
      const v = name === 'Content-Type' ? (h.value.split(';', 1)[0] ?? '').trim().toLowerCase() : h.value;
      out.push(`#h:${headerShort(name)}:${v}`);
    }
    const fromName = msg.from[0]?.name;
    if (fromName) out.push(`#F:${fromName}`);
  }
  if (opts.urls) {
    const seen = new Set<string>();
    for (const u of msg.urls) {
      if (u.isEmail) continue;
      const d = u.tld ?? getDomain(u.hostAscii) ?? u.hostAscii;
      if (!d || seen.has(d)) continue;
      seen.add(d);
      out.push(`#u:${d}`);
      if (seen.size >= MAX_URL_METATOKENS) break;
    }
  }
  if (opts.meta) {
    const d = msg.date;
    if (d && !Number.isNaN(d.getTime())) {
      const wd = d.getUTCDay() === 0 ? 7 : d.getUTCDay();
      out.push(`#dt:${wd}:${String(d.getUTCHours()).padStart(2, '0')}`);
    }
    const aur = authTokens(msg);
    if (aur) out.push(`#aur:${aur}`);
  }
  if (opts.headerTokens) headerTokens(msg, out);
  if (opts.htmlTokens) htmlTokens(msg, out);
  return out;
}
