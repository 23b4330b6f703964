// Message bodies for the mime surface: text with URLs of every odd shape, HTML (deep nesting,
// many links, unterminated comments, raw-text elements, entities, data URIs), ZIP archives
// built by hand (lying sizes and counts, huge names, nesting, encryption flag) and RAR/7z
// look-alikes, transfer encodings (valid and broken base64, quoted-printable, uuencode), and
// multipart trees (depth, part count, boundary collisions, missing closing delimiters).
import { AWKWARD_STRINGS, byteMutate, mutateString } from '../mutate.js';
import { bin, contentTypeParams, encodedWord } from './mime-headers.js';
import { hostname, ipv4, ipv6 } from '../values.js';
import type { Rng } from '../rng.js';

/** Deepest multipart or HTML nesting built (parsers that recurse meet their stack here). */
const MAX_NESTING = 20_000;
/** Most parts, links, archive entries in one generated body. */
const MAX_ITEMS = 20_000;

export function url(rng: Rng): string {
  const scheme = rng.pick(['http://', 'https://', 'http://', 'hxxp://', 'ftp://', 'mailto:', 'data:text/html;base64,', 'javascript:', 'file:///', '//', 'www.', 'http:/\\', 'HTTPS://', 'http:///']);
  let host: string;
  switch (rng.int(9)) {
    case 0: host = ipv4(rng); break;
    case 1: host = `[${ipv6(rng)}]`; break;
    case 2: host = String(rng.u32()); break; // 2130706433
    case 3: host = `0x${rng.u32().toString(16)}`; break;
    case 4: host = `${rng.int(256)}.${rng.int(0x1000000)}`; break;
    case 5: host = rng.pick(['пример.рф', 'xn--e1afmkfd.xn--p1ai', 'раураl.com', 'ex%61mple.com', 'a.b.c.d.e.f.g.h.i.j.k.l.m', `${'a.'.repeat(rng.count(300))}com`, `${'a'.repeat(rng.count(300))}.com`]); break;
    default: host = hostname(rng);
  }
  const user = rng.chance(0.1) ? `${rng.pick(['user', 'paypal.com', 'a:b', '@@'])}@` : '';
  const port = rng.chance(0.1) ? `:${rng.pick([80, 65536, -1, 0, 99999999])}` : '';
  const path = rng.chance(0.7) ? `/${rng.str(rng.count(rng.chance(0.05) ? 50_000 : 40), 'abc/.%20?=&#_-~')}` : '';
  return `${scheme}${user}${host}${port}${path}`;
}

export function textWithUrls(rng: Rng): string {
  const n = rng.count(MAX_ITEMS);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = rng.chance(0.5) ? url(rng) : rng.chance(0.5) ? `${rng.str(5)}@${hostname(rng)}` : rng.str(rng.range(1, 10));
    if (!rng.spend(t.length)) break;
    out.push(t);
  }
  return out.join(rng.chance(0.8) ? ' ' : rng.pick(['', '\n', '<', '>', '"', ',']));
}

const TAGS = ['a', 'img', 'div', 'table', 'tr', 'td', 'font', 'p', 'br', 'span', 'center', 'b', 'i', 'u', 'form', 'input', 'iframe', 'object', 'embed', 'base', 'link', 'meta', 'title', 'body', 'html', 'head', 'area', 'map', 'svg', 'math', 'noscript', 'textarea', 'xmp', 'plaintext'];

function attr(rng: Rng): string {
  switch (rng.int(8)) {
    case 0: return ` href="${url(rng)}"`;
    case 1: return ` src="${rng.chance(0.5) ? `data:image/png;base64,${rng.bytes(rng.count(3000)).toString('base64')}` : url(rng)}"`;
    case 2: return ` style="${rng.pick(['display:none', 'color:#fff;background:#fff', 'font-size:0', 'visibility:hidden', 'opacity:0', rng.pick(AWKWARD_STRINGS)])}"`;
    case 3: return ` width=${rng.pick(['1', '0', '-1', '99999999', '1e309'])} height=${rng.pick(['1', '0'])}`;
    case 4: return ` ${rng.str(4)}=${rng.pick(['"unclosed', "'x'", 'bare', '""', '"a""b"'])}`;
    case 5: return ` alt="${rng.pick(AWKWARD_STRINGS)}"`;
    case 6: return ` color="${rng.pick(['#ffffff', 'white', 'rgb(255,255,255)', '#f', 'transparent'])}"`;
    default: return ` class=x`;
  }
}

export function html(rng: Rng): string {
  const parts: string[] = ['<html><head><title>t</title></head><body>'];
  switch (rng.weighted<string>([[3, 'mixed'], [1, 'deep'], [1, 'links'], [1, 'raw'], [1, 'entities'], [1, 'comments']])) {
    case 'deep': { const d = rng.count(MAX_NESTING); const t = rng.pick(TAGS); parts.push(`<${t}>`.repeat(d), 'x', rng.chance(0.5) ? `</${t}>`.repeat(d) : ''); break; }
    case 'links': for (let n = rng.count(MAX_ITEMS); n > 0 && rng.spend(100); n--) parts.push(`<a href="${url(rng)}">${rng.chance(0.5) ? url(rng) : rng.str(5)}</a>`); break;
    case 'raw': parts.push(`<${rng.pick(['script', 'style', 'textarea', 'title', 'xmp', 'noscript'])}>`, rng.str(rng.count(10_000), 'a<>/ '), rng.chance(0.5) ? '</script>' : ''); break;
    case 'entities': for (let n = rng.count(MAX_ITEMS); n > 0 && rng.spend(10); n--) parts.push(rng.pick(['&amp;', '&#x10FFFF;', '&#99999999999;', '&#0;', '&nbsp', '&', '&#x;', '&lt', '&zwnj;', '&#xD800;', '&notanentity;'])); break;
    case 'comments': parts.push(rng.pick(['<!--', '<!-- -- -->', '<!--->', '<![CDATA[', '<!DOCTYPE', '<?xml', '</', '<a', '<a href="']).repeat(rng.count(5000))); break;
    default:
      for (let n = rng.count(2000); n > 0 && rng.spend(80); n--) {
        const t = rng.pick(TAGS);
        let a = '';
        for (let k = rng.int(4); k > 0; k--) a += attr(rng);
        parts.push(`<${t}${a}>`, rng.chance(0.5) ? rng.str(rng.range(1, 30), 'abc de&;') : url(rng), rng.chance(0.7) ? `</${t}>` : '');
      }
  }
  parts.push('</body></html>');
  return parts.join(rng.chance(0.95) ? '' : '\n');
}

// --- ZIP archives, by hand: local headers, central directory, end record.

function u16(n: number): Buffer { const b = Buffer.alloc(2); b.writeUInt16LE(n & 0xffff); return b; }
function u32(n: number): Buffer { const b = Buffer.alloc(4); b.writeUInt32LE(n >>> 0); return b; }

export function zip(rng: Rng, depth = 0): Buffer {
  const n = rng.count(rng.chance(0.05) ? MAX_ITEMS : 20);
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (let i = 0; i < n && rng.spend(200); i++) {
    const nameText = rng.pick(['doc.pdf', 'invoice.exe', 'a.js', 'x.scr', 'readme.txt.exe', 'inner.zip', '../../evil.sh', 'é.doc', 'x'.repeat(rng.count(60_000)), `${i}.vbs`, '', 'dir/']);
    const name = Buffer.from(nameText, 'utf8');
    const data = depth < 3 && nameText.endsWith('.zip') && rng.chance(0.5) ? zip(rng, depth + 1) : rng.bytes(rng.count(100));
    const flags = rng.chance(0.1) ? 0x0001 : rng.chance(0.1) ? 0x0800 : 0; // encrypted, UTF-8 names
    const lieSize = rng.chance(0.1) ? rng.pick([0xffffffff, 0, data.length * 1000]) : data.length;
    const nameLen = rng.chance(0.05) ? 0xffff : name.length;
    const local = Buffer.concat([u32(0x04034b50), u16(20), u16(flags), u16(0), u16(0), u16(0), u32(0), u32(lieSize), u32(lieSize), u16(nameLen), u16(0), name, data]);
    central.push(Buffer.concat([u32(0x02014b50), u16(20), u16(20), u16(flags), u16(0), u16(0), u16(0), u32(0), u32(lieSize), u32(lieSize), u16(nameLen), u16(0), u16(0), u16(0), u16(0), u32(0), u32(rng.chance(0.05) ? 0xfffffff0 : offset), name]));
    locals.push(local);
    offset += local.length;
  }
  const cd = Buffer.concat(central);
  const count = rng.chance(0.1) ? rng.pick([0xffff, 0, n + 1000]) : n;
  const eocd = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(count), u16(count), u32(cd.length), u32(rng.chance(0.05) ? 0xffffffff : offset), u16(rng.chance(0.05) ? 0xffff : 0)]);
  let out: Buffer = Buffer.concat([...locals, cd, eocd]);
  if (rng.chance(0.2)) out = byteMutate(rng, out);
  return out;
}

function archive(rng: Rng): { name: string; bytes: Buffer } {
  switch (rng.int(6)) {
    case 0: return { name: 'a.rar', bytes: Buffer.concat([Buffer.from('Rar!\x1a\x07\x00', 'latin1'), rng.bytes(rng.count(2000))]) };
    case 1: return { name: 'a.rar', bytes: Buffer.concat([Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1'), rng.bytes(rng.count(2000))]) };
    case 2: return { name: 'a.7z', bytes: Buffer.concat([Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0x00, 0x04]), rng.bytes(rng.count(2000))]) };
    default: return { name: rng.pick(['a.zip', 'invoice.zip', 'x.jar', 'doc.docx']), bytes: zip(rng) };
  }
}

// --- Transfer encodings.

function qp(bytes: Buffer): string {
  let out = '';
  let line = 0;
  for (const c of bytes) {
    const t = (c >= 33 && c <= 126 && c !== 61) || c === 32 ? String.fromCharCode(c) : `=${c.toString(16).toUpperCase().padStart(2, '0')}`;
    if (line + t.length > 75) { out += '=\r\n'; line = 0; }
    out += t;
    line += t.length;
  }
  return out;
}

function uuencode(bytes: Buffer): string {
  let out = 'begin 644 file.bin\r\n';
  for (let i = 0; i < bytes.length; i += 45) {
    const chunk = bytes.subarray(i, i + 45);
    let line = String.fromCharCode(32 + chunk.length);
    for (let j = 0; j < chunk.length; j += 3) {
      const a = chunk[j]!, b = chunk[j + 1] ?? 0, c = chunk[j + 2] ?? 0;
      for (const v of [a >> 2, ((a & 3) << 4) | (b >> 4), ((b & 15) << 2) | (c >> 6), c & 63]) line += String.fromCharCode(v === 0 ? 96 : 32 + v);
    }
    out += `${line}\r\n`;
  }
  return `${out}\`\r\nend\r\n`;
}

/** Encodes `bytes` for a part; returns the Content-Transfer-Encoding and the encoded text (binary string). */
export function encodePart(rng: Rng, bytes: Buffer): { cte: string; text: string } {
  switch (rng.weighted<string>([[4, 'base64'], [2, 'qp'], [2, '8bit'], [1, 'bad-base64'], [1, 'bad-qp'], [1, 'uuencode'], [1, 'unknown']])) {
    case 'base64': return { cte: 'base64', text: bytes.toString('base64').replace(/.{76}/g, '$&\r\n') };
    case 'qp': return { cte: 'quoted-printable', text: qp(bytes) };
    case 'bad-base64': return { cte: rng.pick(['base64', 'BASE64', ' base64 ']), text: mutateString(rng, bytes.toString('base64')).replace(/.{76}/g, '$&\r\n') };
    case 'bad-qp': return { cte: 'quoted-printable', text: rng.pick(['=', '=\r\n'.repeat(rng.count(20_000)), '=ZZ', '=0', mutateString(rng, qp(bytes))]) };
    case 'uuencode': return { cte: rng.pick(['x-uuencode', 'uuencode', '7bit']), text: uuencode(bytes) };
    case 'unknown': return { cte: rng.pick(['x-foo', 'binary', '7bit', '', 'base64; x']), text: bytes.toString('latin1') };
    default: return { cte: '8bit', text: bytes.toString('latin1') };
  }
}

export interface Part {
  contentType: string;
  /** Extra header lines (without the trailing line end). */
  headers: string[];
  body: string;
}

function leaf(rng: Rng, messages: readonly Buffer[], depth: number): Part {
  switch (rng.weighted<string>([[3, 'text'], [3, 'html'], [2, 'archive'], [1, 'binary'], [1, 'rfc822'], [1, 'calendar']])) {
    case 'html': { const e = encodePart(rng, Buffer.from(html(rng), 'utf8')); return { contentType: `text/html; charset=${rng.pick(['utf-8', 'windows-1251', 'x-unknown'])}`, headers: [`Content-Transfer-Encoding: ${e.cte}`], body: e.text }; }
    case 'archive': {
      const a = archive(rng);
      const e = encodePart(rng, a.bytes);
      const name = rng.chance(0.8) ? a.name : rng.pick(['x.pdf', encodedWord(rng), 'a.zip.exe']);
      return { contentType: `${rng.pick(['application/zip', 'application/octet-stream', 'application/x-rar-compressed', 'application/x-7z-compressed'])}; name="${bin(name)}"`, headers: [`Content-Transfer-Encoding: ${e.cte}`, `Content-Disposition: attachment; filename="${bin(name)}"`], body: e.text };
    }
    case 'binary': { const e = encodePart(rng, rng.bytes(rng.count(20_000))); return { contentType: bin(contentTypeParams(rng, rng.pick(['image/png', 'application/pdf', 'application/x-msdownload', 'image/gif']))), headers: [`Content-Transfer-Encoding: ${e.cte}`], body: e.text }; }
    case 'rfc822': return { contentType: 'message/rfc822', headers: [], body: depth < 10 && rng.chance(0.3) ? mutateMessageText(rng, messages, depth + 1) : rng.pick(messages).toString('latin1') };
    case 'calendar': return { contentType: 'text/calendar', headers: [], body: `BEGIN:VCALENDAR\r\n${'BEGIN:VEVENT\r\n'.repeat(rng.count(1000))}` };
    default: { const e = encodePart(rng, Buffer.from(textWithUrls(rng), 'utf8')); return { contentType: `text/plain; charset=${rng.pick(['utf-8', 'iso-8859-1', 'koi8-r', 'utf-16', 'x-unknown', 'utf-7'])}`, headers: [`Content-Transfer-Encoding: ${e.cte}`], body: e.text }; }
  }
}

/** A multipart tree (or a single leaf) as a Content-Type value and a body. */
export function mimeTree(rng: Rng, messages: readonly Buffer[], depth = 0): Part {
  if (depth > 0 && rng.chance(0.5)) return leaf(rng, messages, depth);
  if (depth === 0 && rng.chance(0.05)) {
    // A single deep chain: multipart inside multipart inside … (parsers that recurse).
    const d = rng.count(MAX_NESTING);
    const open: string[] = [];
    for (let i = 0; i < d; i++) open.push(`--b${i}\r\nContent-Type: multipart/mixed; boundary="b${i + 1}"\r\n\r\n`);
    return { contentType: 'multipart/mixed; boundary="b0"', headers: [], body: open.join('') + 'x\r\n' + (rng.chance(0.5) ? Array.from({ length: d }, (_, i) => `--b${d - 1 - i}--\r\n`).join('') : '') };
  }
  const boundary = rng.chance(0.9) ? `=_b${depth}_${rng.str(8)}` : rng.pick(['', '-', `=_b${depth - 1}`, 'a'.repeat(rng.count(5000)), 'x y', '"']);
  const n = rng.chance(0.03) ? rng.count(MAX_ITEMS) : rng.range(1, 4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = depth < 6 && rng.chance(0.3) ? mimeTree(rng, messages, depth + 1) : leaf(rng, messages, depth);
    if (!rng.spend(p.body.length + 100)) break;
    parts.push(`--${boundary}\r\nContent-Type: ${p.contentType}\r\n${p.headers.map((h) => `${h}\r\n`).join('')}\r\n${p.body}\r\n`);
  }
  const close = rng.chance(0.9) ? `--${boundary}--\r\n` : rng.pick(['', `--${boundary}`, `--${boundary}--`.repeat(rng.count(1000))]);
  const preamble = rng.chance(0.1) ? `--${boundary}x\r\n` : 'This is a multi-part message in MIME format.\r\n';
  return { contentType: `${rng.pick(['multipart/mixed', 'multipart/alternative', 'multipart/related', 'multipart/signed', 'multipart/report', 'multipart/digest', 'multipart/x-mixed'])}; boundary="${boundary}"`, headers: [], body: preamble + parts.join('') + close };
}

/** Placeholder filled in by mime.ts (which owns whole-message mutation) to break the import cycle. */
let messageMutator: (rng: Rng, messages: readonly Buffer[], depth: number) => string = (rng, messages) => rng.pick(messages).toString('latin1');

export function setMessageMutator(f: typeof messageMutator): void {
  messageMutator = f;
}

function mutateMessageText(rng: Rng, messages: readonly Buffer[], depth: number): string {
  return messageMutator(rng, messages, depth);
}
