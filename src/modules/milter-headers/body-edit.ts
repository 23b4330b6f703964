// Byte-level editing of a message: locate each MIME part's body inside the raw bytes (the parsed
// tree carries no offsets) and splice replacements in, leaving every other byte untouched.
import type { Message, MimePart } from '../../plugin-api/index.js';

export interface Edit {
  start: number;
  end: number;
  data: Buffer;
}

/** Region of one leaf part's body in the raw message. */
export interface BodyRegion {
  part: MimePart;
  start: number;
  end: number;
}

/** Nesting walked when locating parts: the parser bounds depth too; this guards our own recursion. */
const MAX_WALK_DEPTH = 32;

/** Offset just after the blank line ending a header block that starts at `from`, or -1. */
function headerEnd(raw: Buffer, from: number, to: number): number {
  if (raw[from] === 0x0a) return from + 1;
  if (raw[from] === 0x0d && raw[from + 1] === 0x0a) return from + 2;
  const lf = raw.indexOf('\n\n', from, 'latin1');
  const crlf = raw.indexOf('\r\n\r\n', from, 'latin1');
  const candidates = [lf >= 0 && lf < to ? lf + 2 : -1, crlf >= 0 && crlf < to ? crlf + 4 : -1].filter((x) => x >= 0);
  return candidates.length ? Math.min(...candidates) : -1;
}

/** Splits a multipart body region into its children's regions (headers included). */
function splitMultipart(raw: Buffer, start: number, end: number, boundary: string): Array<[number, number]> {
  const delim = Buffer.from(`--${boundary}`, 'latin1');
  const out: Array<[number, number]> = [];
  let partStart = -1;
  let pos = start;
  while (pos < end) {
    let at: number;
    if (pos === start && raw.subarray(start, start + delim.length).equals(delim)) at = start;
    else {
      const nl = raw.indexOf(Buffer.concat([Buffer.from('\n'), delim]), pos);
      if (nl < 0 || nl >= end) break;
      at = nl + 1;
    }
    if (partStart >= 0) {
      let bodyEnd = at - 1;
      if (bodyEnd > partStart && raw[bodyEnd - 1] === 0x0d) bodyEnd--;
      out.push([partStart, Math.max(partStart, bodyEnd)]);
    }
    const closing = raw[at + delim.length] === 0x2d && raw[at + delim.length + 1] === 0x2d;
    if (closing) return out;
    const eol = raw.indexOf(0x0a, at);
    if (eol < 0 || eol >= end) return out;
    partStart = eol + 1;
    pos = eol;
  }
  return out;
}

/** Every leaf part that is not inside a message/rfc822, with its raw body region. */
export function locateBodies(msg: Message): BodyRegion[] {
  const out: BodyRegion[] = [];
  const walk = (part: MimePart, start: number, end: number, depth: number): void => {
    if (depth > MAX_WALK_DEPTH || part.isMessage) return;
    if (!part.isMultipart) {
      out.push({ part, start, end });
      return;
    }
    const boundary = part.contentType.params['boundary'];
    if (!boundary) return;
    const children = splitMultipart(msg.raw, start, end, boundary);
    for (let i = 0; i < children.length && i < part.children.length; i++) {
      const [cs, ce] = children[i]!;
      const bodyStart = headerEnd(msg.raw, cs, ce);
      if (bodyStart < 0) continue;
      walk(part.children[i]!, bodyStart, ce, depth + 1);
    }
  };
  walk(msg.root, msg.bodyOffset, msg.raw.length, 0);
  return out;
}

export function applyEdits(raw: Buffer, edits: Edit[]): Buffer {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  const chunks: Buffer[] = [];
  let pos = 0;
  for (const e of sorted) {
    if (e.start < pos) continue; // overlapping edits: keep the first
    chunks.push(raw.subarray(pos, e.start), e.data);
    pos = e.end;
  }
  chunks.push(raw.subarray(pos));
  return Buffer.concat(chunks);
}
