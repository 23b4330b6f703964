// The MIME part tree. Boundaries are found with Buffer.indexOf over each multipart's own byte
// range, so a level costs one pass over its bytes; depth and part count are capped.
import { parseParams, parseContentType } from './content-type.js';
import type { EncodedWordBudget } from './encoded-words.js';
import { parseHeaderBlock, makeHeaderList, type HeaderBlock } from './header-list.js';
import { MAX_MIME_DEPTH, MAX_MIME_PARTS } from './limits.js';
import { decodeTransfer, isKnownTransferEncoding } from './transfer-decode.js';
import type { MimeAnomaly, MimePart } from './types.js';

const LF = 0x0a;
const CR = 0x0d;
const DASH = 0x2d;
const EMPTY = Buffer.alloc(0);

export interface TreeState {
  parts: MimePart[];
  anomalies: Set<MimeAnomaly>;
  /** The message's encoded-word budget, shared by every header block. */
  words: EncodedWordBudget;
}

function childId(parent: MimePart | undefined, n: number): string {
  return parent && parent.id ? `${parent.id}.${n}` : String(n);
}

function flag(part: MimePart, state: TreeState, a: MimeAnomaly): void {
  if (!part.anomalies.includes(a)) part.anomalies.push(a);
  state.anomalies.add(a);
}

function isBlank(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09;
}

/**
 * Build the part whose header block starts at `start` and which ends at `end` in `buf`.
 * Returns undefined only when the part limit is already reached.
 */
export function buildPart(
  buf: Buffer,
  start: number,
  end: number,
  depth: number,
  id: string,
  parent: MimePart | undefined,
  defaultType: string,
  state: TreeState,
  preParsed?: HeaderBlock,
): MimePart | undefined {
  if (state.parts.length >= MAX_MIME_PARTS) {
    state.anomalies.add('too_many_parts');
    return undefined;
  }
  const block = preParsed ?? parseHeaderBlock(buf, start, end, state.words);
  const headers = makeHeaderList(block.headers);
  const ctHeader = headers.first('content-type');
  const contentType = parseContentType(ctHeader?.value, defaultType, state.words);
  const cteHeader = headers.first('content-transfer-encoding');
  const transferEncoding = cteHeader ? cteHeader.value.toLowerCase().replace(/[\s"']/g, '') || '7bit' : '7bit';
  const cd = headers.first('content-disposition');
  const disp = cd ? parseParams(cd.value, state.words) : undefined;
  const disposition = disp ? disp.value : '';
  const filename = disp?.params['filename'] || contentType.params['name'] || undefined;
  const type = contentType.type;
  const part: MimePart = {
    id,
    headers,
    contentType,
    transferEncoding,
    disposition,
    content: EMPTY,
    rawSize: end - block.bodyOffset,
    children: [],
    depth,
    isMultipart: false,
    isMessage: false,
    isAttachment: false,
    anomalies: [],
  };
  if (filename !== undefined) part.filename = filename;
  if (parent) part.parent = parent;
  state.parts.push(part);
  for (const a of block.anomalies) if (a !== 'no_headers' || depth === 0) flag(part, state, a);
  if (contentType.invalid) flag(part, state, 'invalid_content_type');
  if (contentType.tooManyParams || disp?.tooManyParams) flag(part, state, 'too_many_params');

  const bodyStart = block.bodyOffset;
  if (type.startsWith('multipart/')) {
    const boundary = contentType.params['boundary'];
    if (!boundary) {
      flag(part, state, 'missing_boundary');
    } else if (depth >= MAX_MIME_DEPTH) {
      flag(part, state, 'too_deep');
      part.isMultipart = true;
      return part;
    } else {
      part.isMultipart = true;
      splitMultipart(buf, bodyStart, end, boundary, part, state, type === 'multipart/digest' ? 'message/rfc822' : 'text/plain');
      return part;
    }
  }

  if (!isKnownTransferEncoding(transferEncoding)) flag(part, state, 'bad_transfer_encoding');
  const decoded = decodeTransfer(buf.subarray(bodyStart, end), transferEncoding);
  if (decoded.anomaly && decoded.anomaly !== 'bad_transfer_encoding') flag(part, state, decoded.anomaly);
  part.content = decoded.content;

  if (type === 'message/rfc822' || type === 'message/global') {
    part.isMessage = true;
    if (depth >= MAX_MIME_DEPTH) flag(part, state, 'too_deep');
    else {
      const inner = part.content;
      const child = buildPart(inner, 0, inner.length, depth + 1, childId(part, 1), part, 'text/plain', state);
      if (child) part.children.push(child);
    }
  }
  part.isAttachment = isAttachmentPart(part);
  return part;
}

function isAttachmentPart(part: MimePart): boolean {
  // A multipart without a usable boundary is scanned as text, not as an attachment.
  if (part.isMultipart || part.contentType.type.startsWith('multipart/')) return false;
  if (part.disposition === 'attachment') return true;
  if (part.filename && part.disposition !== 'inline') return true;
  return !part.contentType.type.startsWith('text/');
}

/** Split a multipart body on `--boundary` lines and build each child part. */
function splitMultipart(
  buf: Buffer,
  bodyStart: number,
  end: number,
  boundary: string,
  part: MimePart,
  state: TreeState,
  childType: string,
): void {
  // Searching for LF + `--boundary` finds only line starts, so text that merely contains the
  // boundary costs nothing; the body's first line is checked on its own.
  const delim = Buffer.from(`\n--${boundary}`, 'latin1');
  let pos = bodyStart;
  let partStart = -1;
  let found = false;
  let closed = false;
  const addChild = (from: number, to: number): boolean => {
    const child = buildPart(buf, from, to, part.depth + 1, childId(part, part.children.length + 1), part, childType, state);
    if (!child) return false;
    part.children.push(child);
    return true;
  };
  let first = true;
  while (pos < end) {
    let idx: number;
    if (first && end - bodyStart >= delim.length - 1 && buf.compare(delim, 1, delim.length, bodyStart, bodyStart + delim.length - 1) === 0) {
      idx = bodyStart;
    } else {
      const lf = buf.indexOf(delim, first ? bodyStart : pos - 1);
      if (lf < 0 || lf + delim.length > end) break;
      idx = lf + 1;
    }
    first = false;
    const after = idx + delim.length - 1;
    // A delimiter is followed by `--`, blanks or the line end; anything else
    // (`--boundary2`) is content.
    const isClose = after + 1 < end && buf[after] === DASH && buf[after + 1] === DASH;
    const c = buf[after];
    if (!isClose && after < end && c !== LF && c !== CR && !isBlank(c)) {
      pos = after + 1;
      continue;
    }
    found = true;
    if (partStart >= 0) {
      let pe = idx;
      if (pe > partStart && buf[pe - 1] === LF) pe--;
      if (pe > partStart && buf[pe - 1] === CR) pe--;
      if (!addChild(partStart, pe)) return;
    }
    if (isClose) {
      closed = true;
      break;
    }
    const lf = buf.indexOf(LF, after);
    partStart = lf < 0 || lf >= end ? end : lf + 1;
    // The next delimiter's LF may be this part's very first byte (an empty part).
    pos = partStart;
  }
  if (!found) {
    flag(part, state, 'boundary_not_found');
    // Scan the body anyway: hiding text behind a wrong boundary is a known evasion.
    const child = buildPart(buf, bodyStart, end, part.depth + 1, childId(part, 1), part, 'text/plain', state, {
      headers: [],
      bodyOffset: bodyStart,
      newline: '\n',
      anomalies: [],
    });
    if (child) part.children.push(child);
    return;
  }
  if (!closed) {
    flag(part, state, 'no_closing_boundary');
    if (partStart >= 0 && partStart < end) addChild(partStart, end);
  }
}
