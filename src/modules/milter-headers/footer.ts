// The body footer: appends configured text to text/plain parts and inserts HTML before </body>
// in text/html parts, re-encoding as each part's transfer encoding and charset require.
import iconv from 'iconv-lite';
import type { Message } from '../../plugin-api/index.js';
import type { BodyRegion, Edit } from './body-edit.js';
import { locateBodies } from './body-edit.js';

/** Line length of generated base64 and quoted-printable (RFC 2045 limit is 76). */
const ENCODED_LINE = 76;

function encodeText(text: string, charset: string | undefined): Buffer {
  const cs = charset?.toLowerCase();
  if (!cs || cs === 'utf-8' || cs === 'utf8' || cs === 'us-ascii' || !iconv.encodingExists(cs)) return Buffer.from(text, 'utf8');
  return iconv.encode(text, cs);
}

function base64Lines(buf: Buffer, nl: string): string {
  const b64 = buf.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += ENCODED_LINE) lines.push(b64.slice(i, i + ENCODED_LINE));
  return lines.join(nl);
}

function qpEncode(buf: Buffer, nl: string): string {
  const out: string[] = [];
  let line = '';
  const push = (tok: string): void => {
    if (line.length + tok.length > ENCODED_LINE - 1) {
      out.push(line + '=');
      line = '';
    }
    line += tok;
  };
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (b === 0x0a) {
      out.push(line);
      line = '';
      continue;
    }
    if (b === 0x0d && buf[i + 1] === 0x0a) continue;
    const atEol = i + 1 >= buf.length || buf[i + 1] === 0x0a || buf[i + 1] === 0x0d;
    const literal = (b >= 33 && b <= 126 && b !== 0x3d) || ((b === 0x20 || b === 0x09) && !atEol);
    push(literal ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, '0')}`);
  }
  out.push(line);
  return out.join(nl);
}

const lines = (text: string, nl: string): string => text.replace(/\r?\n/g, nl);

/** Where in `content` (latin1 view) HTML should go: before the last </body>, else the end. */
function htmlInsertAt(content: string): number {
  const at = content.toLowerCase().lastIndexOf('</body>');
  return at >= 0 ? at : content.length;
}

function stripTrailingNewline(buf: Buffer): [Buffer, string] {
  if (buf.length && buf[buf.length - 1] === 0x0a) {
    const crlf = buf.length > 1 && buf[buf.length - 2] === 0x0d;
    return [buf.subarray(0, buf.length - (crlf ? 2 : 1)), crlf ? '\r\n' : '\n'];
  }
  return [buf, ''];
}

function editPart(msg: Message, region: BodyRegion, text: string, html: boolean): Edit {
  const { part } = region;
  const nl = msg.newline;
  const footer = encodeText(lines(text, nl), part.contentType.params['charset']);
  const rawBody = msg.raw.subarray(region.start, region.end);
  const cte = part.transferEncoding;
  if (cte === 'base64') {
    const content = part.content;
    const [body, trailing] = stripTrailingNewline(content);
    let next: Buffer;
    if (html) {
      const at = htmlInsertAt(content.toString('latin1'));
      next = Buffer.concat([content.subarray(0, at), footer, Buffer.from(nl), content.subarray(at)]);
    } else {
      next = Buffer.concat([body, Buffer.from(nl), footer, Buffer.from(trailing || nl)]);
    }
    const [, rawTrailing] = stripTrailingNewline(rawBody);
    return { start: region.start, end: region.end, data: Buffer.from(base64Lines(next, nl) + (rawTrailing ? nl : '')) };
  }
  const encoded = cte === 'quoted-printable' ? Buffer.from(qpEncode(footer, nl), 'latin1') : footer;
  if (html) {
    const at = region.start + htmlInsertAt(rawBody.toString('latin1'));
    return { start: at, end: at, data: Buffer.concat([encoded, Buffer.from(nl)]) };
  }
  const [body, trailing] = stripTrailingNewline(rawBody);
  const end = region.start + body.length;
  return { start: end, end, data: Buffer.concat([Buffer.from(nl), encoded, Buffer.from(trailing)]) };
}

/** Edits adding the footer to every inline text part; empty when nothing applies. */
export function footerEdits(msg: Message, footer: { text?: string; html?: string }): Edit[] {
  const edits: Edit[] = [];
  for (const region of locateBodies(msg)) {
    const p = region.part;
    if (p.isAttachment || p.disposition === 'attachment') continue;
    const type = p.contentType.type;
    if (type === 'text/plain' && footer.text) edits.push(editPart(msg, region, footer.text, false));
    else if (type === 'text/html' && footer.html) edits.push(editPart(msg, region, footer.html, true));
  }
  return edits;
}
