// Just enough multipart to read /checkv3 replies and write /checkv3 requests: parts addressed
// by the `name` of their Content-Disposition, with their Content-Type and Content-Encoding.
import { randomBytes } from 'node:crypto';

export interface MultipartPart {
  name?: string;
  filename?: string;
  contentType?: string;
  contentEncoding?: string;
  body: Buffer;
}

/** More parts than this in a reply means we are not reading a scan reply (v3 has at most two). */
const MAX_REPLY_PARTS = 16;

export function newBoundary(): string {
  return `mailsift-v3-${randomBytes(8).toString('hex')}-${randomBytes(8).toString('hex')}`;
}

/** The boundary parameter of a multipart Content-Type, quoted or not; undefined when absent. */
export function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

export interface OutgoingPart {
  name: string;
  filename?: string;
  contentType: string;
  contentEncoding?: string;
  body: Buffer;
}

export function buildMultipart(boundary: string, parts: OutgoingPart[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename.replace(/["\r\n\\]/g, '_')}"`;
    head += `\r\nContent-Type: ${part.contentType}\r\n`;
    if (part.contentEncoding) head += `Content-Encoding: ${part.contentEncoding}\r\n`;
    chunks.push(Buffer.from(head + '\r\n', 'latin1'), part.body, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

function parsePartHeaders(text: string): Omit<MultipartPart, 'body'> {
  const out: Omit<MultipartPart, 'body'> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') {
      const n = /;\s*name\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(value);
      if (n) out.name = n[1] ?? n[2];
      const f = /;\s*filename\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(value);
      if (f) out.filename = f[1] ?? f[2];
    } else if (name === 'content-type') {
      out.contentType = value;
    } else if (name === 'content-encoding' || name === 'content-transfer-encoding') {
      out.contentEncoding = out.contentEncoding ? `${out.contentEncoding}, ${value}` : value;
    }
  }
  return out;
}

/**
 * Split a multipart body into parts. Throws an Error naming what is wrong when the body does not
 * contain the boundary or a part has no header/body separator.
 */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delim = Buffer.from(`--${boundary}`);
  let pos = body.indexOf(delim);
  if (pos < 0) throw new Error(`multipart body does not contain its boundary "${boundary}"`);
  const parts: MultipartPart[] = [];
  for (;;) {
    pos += delim.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break; // closing delimiter `--b--`
    const lineEnd = body.indexOf('\n', pos);
    if (lineEnd < 0) throw new Error('multipart part has no header section');
    const start = lineEnd + 1;
    let next = body.indexOf(delim, start);
    if (next < 0) throw new Error('multipart body is not closed by its final boundary');
    // The line break before a delimiter belongs to the delimiter.
    let end = next;
    if (body[end - 1] === 0x0a) end--;
    if (body[end - 1] === 0x0d) end--;
    const chunk = body.subarray(start, Math.max(start, end));
    let sep: number;
    let sepLen: number;
    if (chunk[0] === 0x0d && chunk[1] === 0x0a) { sep = 0; sepLen = 2; } // part without headers
    else if (chunk[0] === 0x0a) { sep = 0; sepLen = 1; }
    else {
      sep = chunk.indexOf('\r\n\r\n');
      sepLen = 4;
      const lf = chunk.indexOf('\n\n');
      if (sep < 0 || (lf >= 0 && lf < sep)) { sep = lf; sepLen = 2; }
      if (sep < 0) throw new Error('multipart part has no header/body separator');
    }
    parts.push({ ...parsePartHeaders(chunk.subarray(0, sep).toString('latin1')), body: chunk.subarray(Math.min(chunk.length, sep + sepLen)) });
    if (parts.length > MAX_REPLY_PARTS) throw new Error(`multipart body has more than ${MAX_REPLY_PARTS} parts`);
    pos = next;
  }
  return parts;
}
