// A look at the shape of a /checkv3 metadata part before it is decoded. Decoding costs about a
// microsecond per array or map (JSON or msgpack), so a part of a million empty maps, or of
// arrays nested a million deep, holds a worker for seconds before any check could refuse it.
// Real metadata (an envelope, perhaps settings) has a few dozen containers; these walks count
// them in one linear pass over the bytes, allocating nothing, and stop at the first excess.

/** Nesting deeper than this is refused: settings objects nest a handful of levels. */
export const MAX_METADATA_DEPTH = 64;
/** Arrays and maps in one metadata part: a long recipient list is one array of strings. */
export const MAX_METADATA_CONTAINERS = 10_000;

function excess(depth: number, containers: number): string | undefined {
  if (depth > MAX_METADATA_DEPTH) return `nested deeper than ${MAX_METADATA_DEPTH} levels`;
  if (containers > MAX_METADATA_CONTAINERS) return `more than ${MAX_METADATA_CONTAINERS} arrays and maps`;
  return undefined;
}

/** Why a JSON text is refused before parsing, or undefined. Brackets inside strings do not count. */
export function jsonShapeProblem(text: Uint8Array): string | undefined {
  let depth = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next byte (\" included)
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      containers++;
      const p = excess(depth, containers);
      if (p) return p;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** Bytes of a msgpack value's head after its type byte, for the fixed-size kinds (0: none). */
function fixedTail(t: number): number {
  if (t === 0xcc || t === 0xd0 || t === 0xd4) return t === 0xd4 ? 2 : 1;
  if (t === 0xcd || t === 0xd1 || t === 0xd5) return t === 0xd5 ? 3 : 2;
  if (t === 0xca || t === 0xce || t === 0xd2) return 4;
  if (t === 0xd6) return 5;
  if (t === 0xcb || t === 0xcf || t === 0xd3) return 8;
  if (t === 0xd7) return 9;
  if (t === 0xd8) return 17;
  return 0;
}

/**
 * Why a msgpack value is refused before decoding, or undefined. Malformed or truncated input is
 * left to the decoder, which refuses it with its own message; only the shape is judged here.
 */
export function msgpackShapeProblem(buf: Uint8Array): string | undefined {
  // Elements still to read in each open container, innermost last.
  const open: number[] = [];
  let containers = 0;
  let i = 0;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const u8 = (at: number) => (at < buf.length ? buf[at]! : 0);
  const u16 = (at: number) => (at + 2 <= buf.length ? view.getUint16(at) : 0);
  const u32 = (at: number) => (at + 4 <= buf.length ? view.getUint32(at) : 0);
  while (i < buf.length) {
    const t = buf[i]!;
    let elements = -1; // a container's element count, -1 for a scalar
    if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) i += 1;
    else if (t <= 0x8f) (elements = (t & 0x0f) * 2), (i += 1);
    else if (t <= 0x9f) (elements = t & 0x0f), (i += 1);
    else if (t <= 0xbf) i += 1 + (t & 0x1f);
    else if (t === 0xc4 || t === 0xd9) i += 2 + u8(i + 1);
    else if (t === 0xc5 || t === 0xda) i += 3 + u16(i + 1);
    else if (t === 0xc6 || t === 0xdb) i += 5 + u32(i + 1);
    else if (t === 0xc7) i += 3 + u8(i + 1);
    else if (t === 0xc8) i += 4 + u16(i + 1);
    else if (t === 0xc9) i += 6 + u32(i + 1);
    else if (t === 0xdc) (elements = u16(i + 1)), (i += 3);
    else if (t === 0xdd) (elements = u32(i + 1)), (i += 5);
    else if (t === 0xde) (elements = u16(i + 1) * 2), (i += 3);
    else if (t === 0xdf) (elements = u32(i + 1) * 2), (i += 5);
    else if (fixedTail(t) > 0) i += 1 + fixedTail(t);
    else return undefined; // 0xc1, never used: the decoder says so
    if (elements >= 0) {
      containers++;
      if (elements > 0) {
        open.push(elements);
        const p = excess(open.length, containers);
        if (p) return p;
        continue;
      }
      const p = excess(open.length, containers);
      if (p) return p;
    }
    // One value read: it fills a slot of the innermost open container, which may close others.
    while (open.length > 0) {
      const left = open[open.length - 1]! - 1;
      if (left > 0) {
        open[open.length - 1] = left;
        break;
      }
      open.pop();
    }
  }
  return undefined;
}
