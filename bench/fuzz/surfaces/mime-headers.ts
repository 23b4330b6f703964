// Generators of the header kinds the modules parse, well-formed enough to reach the parser
// and then bent: Received, DKIM-Signature, ARC sets, Authentication-Results, address lists
// (groups, comments, quoted and encoded display names, route addresses), encoded words,
// Content-Type parameters (RFC 2231 continuations, boundaries), Message-ID, Date, References.
// Every generator returns a JS string; callers encode it as UTF-8 bytes (bin()).
import { AWKWARD_STRINGS, mutateString, pct } from '../mutate.js';
import { address, hostname, ipv4, ipv6 } from '../values.js';
import type { Rng } from '../rng.js';

/** A JS string (any code points) as the latin1 "binary string" of its UTF-8 bytes. */
export function bin(s: string): string {
  // ASCII is its own UTF-8: most generated text, and the round trip through a Buffer is not free.
  return NON_ASCII.test(s) ? Buffer.from(s, 'utf8').toString('latin1') : s;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Whitespace of every kind a header parser may meet: folding, tabs, and Unicode spaces. */
const ODD_SPACE = [' ', '  ', '\t', '\r\n ', '\r\n\t', '\n ', ' \r\n  ', '\u00a0', '\x0b', '\x0c', '\u2028', '\u3000', '\ufeff', '\u1680', '\u2009', '\u0085', '\u200b'];

function sp(rng: Rng): string {
  return rng.chance(0.9) ? ' ' : rng.pick(ODD_SPACE);
}

function comment(rng: Rng): string {
  const depth = rng.chance(0.95) ? 1 : rng.count(5000);
  return '('.repeat(depth) + rng.pick([hostname(rng), `[${ipv4(rng)}]`, 'helo=x', '', rng.pick(AWKWARD_STRINGS)]) + ')'.repeat(rng.chance(0.9) ? depth : rng.int(depth));
}

const CHARSETS = ['utf-8', 'UTF-8', 'iso-8859-1', 'windows-1251', 'koi8-r', 'gb2312', 'big5', 'shift_jis', 'iso-2022-jp', 'utf-7', 'utf-16', 'x-unknown', 'utf-8*en', '', 'us-ascii', 'euc-kr', 'iso-8859-8-i', 'cp1252', 'x-mac-roman'];

export function encodedWord(rng: Rng): string {
  const cs = rng.pick(CHARSETS);
  const text = rng.pick(['Hello', 'Привет', '日本語のテキスト', 'é', rng.str(rng.count(200)), rng.pick(AWKWARD_STRINGS)]);
  if (rng.chance(0.5)) {
    const b64 = Buffer.from(text, 'utf8').toString('base64');
    return `=?${cs}?${rng.pick(['B', 'b'])}?${rng.chance(0.9) ? b64 : mutateString(rng, b64)}?=`;
  }
  const q = [...Buffer.from(text, 'utf8')].map((c) => (c > 0x20 && c < 0x7f && c !== 0x3d && c !== 0x3f && c !== 0x5f ? String.fromCharCode(c) : `=${c.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
  return `=?${cs}?${rng.pick(['Q', 'q'])}?${rng.chance(0.9) ? q : mutateString(rng, q)}?=`;
}

export function encodedWords(rng: Rng): string {
  const n = rng.count(5000);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const w = rng.chance(0.8) ? encodedWord(rng) : rng.str(rng.range(1, 8));
    if (!rng.spend(w.length)) break;
    out.push(w);
  }
  return out.join(rng.chance(0.8) ? ' ' : rng.pick(['', '\r\n ', '  ']));
}

export function mailbox(rng: Rng): string {
  const addr = rng.chance(0.9) ? address(rng) : rng.pick(AWKWARD_STRINGS);
  switch (rng.int(8)) {
    case 0: return addr;
    case 1: return `<${addr}>`;
    case 2: return `"${rng.pick(['John Doe', 'Doe, John', 'a"b', 'x\\"y', '', 'é'])}" <${addr}>`;
    case 3: return `${encodedWord(rng)} <${addr}>`;
    case 4: return `${rng.str(6)} ${comment(rng)} <${addr}>`;
    case 5: return `<@${hostname(rng)},@${hostname(rng)}:${addr}>`;
    case 6: return `${addr} ${comment(rng)}`;
    default: return `${rng.str(5)} <${addr}`;
  }
}

export function addressList(rng: Rng): string {
  const n = rng.count(5000);
  const items: string[] = [];
  for (let i = 0; i < n; i++) {
    const item = rng.chance(0.05) ? `${rng.pick(['undisclosed-recipients', 'group', ''])}:${rng.chance(0.5) ? '' : `${mailbox(rng)}, ${mailbox(rng)}`};` : mailbox(rng);
    if (!rng.spend(item.length)) break;
    items.push(item);
  }
  return items.join(rng.chance(0.9) ? ', ' : rng.pick([',', ';', ',\r\n ', ' ', ',,']));
}

export function received(rng: Rng): string {
  const from = rng.chance(0.9) ? `from ${hostname(rng)}${sp(rng)}(${rng.pick([hostname(rng), 'unknown', `HELO ${hostname(rng)}`])} [${rng.chance(0.7) ? ipv4(rng) : `IPv6:${ipv6(rng)}`}])` : '';
  const by = `by ${hostname(rng)}${rng.chance(0.5) ? ` (${rng.pick(['Postfix', 'Exim 4.96', '8.15.2/8.15.2'])})` : ''}`;
  const w = rng.chance(0.7) ? `with ${rng.pick(['ESMTP', 'ESMTPS', 'ESMTPSA', 'SMTP', 'LMTP', 'HTTP', 'local', 'UTF8SMTPS', rng.str(4)])}` : '';
  const id = rng.chance(0.7) ? `id ${rng.str(12, 'ABCDEF0123456789')}` : '';
  const forr = rng.chance(0.5) ? `for <${address(rng)}>` : '';
  const date = rng.chance(0.9) ? `; ${date822(rng)}` : '';
  const tokens = [from, by, w, id, forr].filter(Boolean);
  if (rng.chance(0.3)) tokens.splice(rng.int(tokens.length + 1), 0, comment(rng));
  if (rng.chance(0.2)) tokens.splice(rng.int(tokens.length + 1), 0, rng.pick(['(using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384 (256/256 bits))', '(envelope-from <a@b>)', `[${ipv4(rng)}]`, `helo=${hostname(rng)}`]));
  let v = tokens.map((t) => t + sp(rng)).join('') + date;
  if (rng.chance(0.2)) v = mutateString(rng, v);
  return v;
}

export function date822(rng: Rng): string {
  const d = new Date(Date.UTC(rng.range(1900, 2100), rng.int(12), rng.range(1, 31), rng.int(24), rng.int(60), rng.int(60)));
  const s = d.toUTCString().replace('GMT', rng.pick(['+0000', '-0800', '+1400', 'GMT', 'UT', 'EST', '(UTC)', '+9999', 'Z', '']));
  return rng.chance(0.85) ? s : rng.pick(['', 'yesterday', '32 Feb 2026 25:61:61 +0000', 'Thu, 1 Jan 1970 00:00:00 +0000', '0', '99999999999999', mutateString(rng, s)]);
}

function b64(rng: Rng, n: number): string {
  return rng.bytes(n).toString('base64');
}

export function dkimSignature(rng: Rng): string {
  const tags: Array<[string, string]> = [
    ['v', '1'],
    ['a', rng.pick(['rsa-sha256', 'rsa-sha1', 'ed25519-sha256', 'rsa-sha512', ''])],
    ['c', rng.pick(['relaxed/relaxed', 'simple/simple', 'relaxed', 'simple/relaxed', 'nope/x'])],
    ['d', rng.chance(0.9) ? hostname(rng) : rng.pick(AWKWARD_STRINGS)],
    ['s', rng.pick(['default', 'selector1', 'google', rng.str(rng.count(300))])],
    ['t', String(rng.pick([1700000000, 0, -1, 2 ** 53, 9999999999]))],
    ['h', Array.from({ length: rng.count(3000) }, () => rng.pick(['from', 'to', 'subject', 'date', 'message-id', 'From', 'received', 'x-nope', ''])).join(rng.chance(0.9) ? ':' : ' : ')],
    ['bh', b64(rng, 32)],
    ['b', b64(rng, rng.pick([128, 256, 64, 0, 4096]))],
  ];
  if (rng.chance(0.2)) tags.push(['l', String(rng.pick([0, 1, 100, -1, 2 ** 53, 1e309]))]);
  if (rng.chance(0.2)) tags.push(['i', `@${hostname(rng)}`]);
  if (rng.chance(0.1)) tags.push(['x', String(rng.pick([1, 2 ** 40]))]);
  if (rng.chance(0.1)) tags.push(['q', rng.pick(['dns/txt', 'dns', 'http'])]);
  if (rng.chance(0.1)) tags.push(['z', Array.from({ length: rng.count(1000) }, () => `From:${rng.str(5)}`).join('|')]);
  if (rng.chance(0.1)) tags.push([rng.pick(['v', 'd', 'b', 'h']), rng.str(5)]); // duplicate tag
  if (rng.chance(0.2)) tags.splice(rng.int(tags.length), 1);
  if (rng.chance(0.2)) { const i = rng.int(tags.length); tags[i] = [tags[i]![0], mutateString(rng, tags[i]![1])]; }
  return tags.map(([k, v]) => `${k}=${v}`).join(rng.chance(0.9) ? '; ' : rng.pick([';', ';\r\n\t', ' ; ', ';;']));
}

export function arcSet(rng: Rng, i: number): Array<[string, string]> {
  const inst = rng.chance(0.9) ? String(i) : rng.pick(['0', '-1', '51', '1000000', 'x', '']);
  const d = hostname(rng);
  return [
    ['ARC-Seal', `i=${inst}; a=rsa-sha256; t=1700000000; cv=${rng.pick(['none', 'pass', 'fail', 'x', ''])}; d=${d}; s=arc; b=${b64(rng, 128)}`],
    ['ARC-Message-Signature', `i=${inst}; a=rsa-sha256; c=relaxed/relaxed; d=${d}; s=arc; h=from:to:subject; bh=${b64(rng, 32)}; b=${b64(rng, 128)}`],
    ['ARC-Authentication-Results', `i=${inst}; ${authResults(rng)}`],
  ];
}

export function authResults(rng: Rng): string {
  const n = rng.count(500);
  const items = [hostname(rng)];
  for (let k = 0; k < n && rng.spend(60); k++) {
    items.push(`${rng.pick(['spf', 'dkim', 'dmarc', 'arc', 'auth', 'iprev', 'x'])}=${rng.pick(['pass', 'fail', 'none', 'softfail', 'neutral', 'temperror', 'permerror'])} ${rng.pick([`smtp.mailfrom=${address(rng)}`, `header.d=${hostname(rng)}`, `header.from=${hostname(rng)}`, comment(rng), ''])}`);
  }
  return items.join('; ');
}

/** Longest Content-Type value built (parameters are added until it is this long). */
const MAX_PARAMS_TEXT = 1024 * 1024;

export function contentTypeParams(rng: Rng, base: string): string {
  let v = base;
  for (let n = rng.count(3000); n > 0 && v.length < MAX_PARAMS_TEXT; n--) {
    switch (rng.int(7)) {
      case 0: v += `; charset=${rng.pick(CHARSETS)}`; break;
      case 1: v += `; boundary=${rng.pick(['"b1"', 'b1', '""', `"${'-'.repeat(rng.count(5000))}"`, '"=_x"', 'x y'])}`; break;
      case 2: v += `; name="${rng.pick(['a.exe', 'doc.pdf.exe', 'x'.repeat(rng.count(5000)), encodedWord(rng)])}"`; break;
      case 3: { const k = rng.count(200); for (let i = 0; i < k; i++) v += `; name*${i}*=${rng.pick(["utf-8''", '', "x'y'"])}${pct(rng.str(5))}`; break; }
      case 4: v += `; name*=${rng.pick(["utf-8''%E6%97%A5.zip", "''a.exe", "%%", "utf-8'en'%ZZ"])}`; break;
      case 5: v += `; ${rng.str(4)}=${rng.pick(AWKWARD_STRINGS)}`; break;
      default: v += rng.pick([';', ';;', '; =', '; x', '; "']);
    }
  }
  return v;
}

export function messageId(rng: Rng): string {
  return rng.pick([`<${rng.str(16)}@${hostname(rng)}>`, `${rng.str(10)}`, '<>', `<${rng.str(16)}@[${ipv4(rng)}]>`, `<${'a'.repeat(rng.count(20_000))}@x>`, `<${rng.str(5)}@${rng.str(5)}`]);
}

/** A header of a kind the modules read: [name, value]. */
export function generatedHeader(rng: Rng): Array<[string, string]> {
  const kind = rng.weighted<string>([[4, 'received'], [3, 'dkim'], [2, 'arc'], [3, 'address'], [3, 'subject'], [2, 'ctype'], [1, 'mid'], [1, 'date'], [1, 'refs'], [1, 'ar'], [1, 'list'], [2, 'misc']]);
  switch (kind) {
    case 'received': return [['Received', received(rng)]];
    case 'dkim': return [['DKIM-Signature', dkimSignature(rng)]];
    case 'arc': return arcSet(rng, rng.range(1, 3));
    case 'address': return [[rng.pick(['From', 'To', 'Cc', 'Bcc', 'Reply-To', 'Sender', 'Return-Path', 'Delivered-To', 'Disposition-Notification-To', 'Resent-From', 'X-Original-To', 'Envelope-To']), addressList(rng)]];
    case 'subject': return [[rng.pick(['Subject', 'Subject', 'Thread-Topic', 'Comments', 'Keywords']), encodedWords(rng)]];
    case 'ctype': return [['Content-Type', contentTypeParams(rng, rng.pick(['text/plain', 'text/html', 'multipart/mixed', 'application/octet-stream', 'message/rfc822', 'x/y', '', 'text']))]];
    case 'mid': return [[rng.pick(['Message-ID', 'Message-Id', 'Resent-Message-ID']), messageId(rng)]];
    case 'date': return [['Date', date822(rng)]];
    case 'refs': return [[rng.pick(['References', 'In-Reply-To']), Array.from({ length: rng.count(5000) }, () => messageId(rng)).join(' ')]];
    case 'ar': return [['Authentication-Results', authResults(rng)]];
    case 'list': return [[rng.pick(['List-Unsubscribe', 'List-Id', 'List-Post', 'Precedence']), Array.from({ length: rng.count(1000) }, () => `<${rng.pick(['mailto:', 'https://', 'http://'])}${hostname(rng)}/${rng.str(8)}>`).join(', ')]];
    default: return [[rng.pick(['X-Mailer', 'User-Agent', 'MIME-Version', 'Content-Transfer-Encoding', 'Content-Disposition', 'X-Originating-IP', 'X-Spam-Flag', 'Organization', 'X-Priority', 'Importance']), rng.pick(['1.0', 'base64', 'quoted-printable', `attachment; filename="${rng.pick(['a.exe', 'b.zip', encodedWord(rng)])}"`, `[${ipv4(rng)}]`, 'YES', rng.pick(AWKWARD_STRINGS), mutateString(rng, 'Microsoft Outlook 16.0')])]];
  }
}
