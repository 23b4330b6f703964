// A lenient multipart/form-data reader for /checkv3 bodies: part
// headers end at the first blank line, delimiters may follow CRLF or LF, the preamble is
// skipped and the closing delimiter ends parsing. The body is already complete in memory.

import { MailsiftError } from '../http/errors.js';

export interface FormPart {
  name?: string;
  filename?: string;
  /** Media type without parameters, lower-case. */
  contentType?: string;
  /** Content-Encoding or Content-Transfer-Encoding, lower-case. */
  encoding?: string;
  body: Buffer;
}

/** Parts read before giving up; a scan request has two (metadata + message). */
export const MAX_FORM_PARTS = 8;
/** Bytes of one part's header block; metadata needs a few hundred. */
const MAX_PART_HEADER_BYTES = 16 * 1024;

export function boundaryFromContentType(ct: string): string | undefined {
  const m = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(ct);
  const b = m ? (m[1] ?? m[2]) : undefined;
  return b && b.length <= 200 ? b : undefined;
}

function badBody(why: string): MailsiftError {
  return new MailsiftError('ERR_V3_BAD_MULTIPART', `cannot parse multipart/form-data body: ${why}`);
}

function param(value: string, name: string): string | undefined {
  const re = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i');
  const m = re.exec(value);
  return m ? (m[1] ?? m[2]) : undefined;
}

function parsePartHeaders(text: string, part: FormPart): void {
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    switch (name) {
      case 'content-disposition': {
        const n = param(value, 'name');
        if (n !== undefined) part.name = n;
        const f = param(value, 'filename');
        if (f !== undefined) part.filename = f;
        break;
      }
      case 'content-type':
        part.contentType = value.split(';')[0]!.trim().toLowerCase();
        break;
      case 'content-encoding':
      case 'content-transfer-encoding':
        part.encoding = value.toLowerCase();
        break;
    }
  }
}

export function parseFormData(body: Buffer, boundary: string): FormPart[] {
  const delim = Buffer.from(`--${boundary}`, 'latin1');
  // First delimiter: at the very start or at the start of a line (after a preamble).
  let pos = body.indexOf(delim);
  while (pos > 0 && body[pos - 1] !== 10) pos = body.indexOf(delim, pos + 1);
  if (pos < 0) throw badBody('no delimiter matching the boundary');
  const parts: FormPart[] = [];
  for (;;) {
    let p = pos + delim.length;
    if (body[p] === 0x2d && body[p + 1] === 0x2d) break; // closing delimiter
    const eol = body.indexOf(10, p);
    if (eol < 0) throw badBody('truncated after a delimiter');
    p = eol + 1;
    const crlf = body.indexOf('\r\n\r\n', p, 'latin1');
    const lf = body.indexOf('\n\n', p, 'latin1');
    let headEnd: number;
    let contentStart: number;
    if (crlf >= 0 && (lf < 0 || crlf < lf)) {
      headEnd = crlf;
      contentStart = crlf + 4;
    } else if (lf >= 0) {
      headEnd = lf;
      contentStart = lf + 2;
    } else if (body[p] === 13 && body[p + 1] === 10) {
      headEnd = p;
      contentStart = p + 2;
    } else if (body[p] === 10) {
      headEnd = p;
      contentStart = p + 1;
    } else {
      throw badBody('part headers not terminated');
    }
    if (headEnd - p > MAX_PART_HEADER_BYTES) throw badBody('part headers too large');
    const part: FormPart = { body: Buffer.alloc(0) };
    parsePartHeaders(body.subarray(p, headEnd).toString('latin1'), part);
    // The line break before the next delimiter belongs to the delimiter.
    let next = body.indexOf(delim, contentStart);
    while (next >= 0 && next > contentStart && body[next - 1] !== 10) next = body.indexOf(delim, next + 1);
    if (next < 0) throw badBody('truncated part (no closing delimiter)');
    let contentEnd = next;
    if (contentEnd > contentStart && body[contentEnd - 1] === 10) contentEnd--;
    if (contentEnd > contentStart && body[contentEnd - 1] === 13) contentEnd--;
    part.body = body.subarray(contentStart, Math.max(contentStart, contentEnd));
    parts.push(part);
    if (parts.length > MAX_FORM_PARTS) break;
    pos = next;
  }
  if (parts.length === 0) throw badBody('no parts');
  return parts;
}
