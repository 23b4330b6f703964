// The bytes of the three scanner protocols, without I/O: clamd's zINSTREAM, the line protocol
// of the generic TCP hook and the JSON reply of the generic HTTP hook. Each reply becomes a
// ScanVerdict; a reply we cannot read is an error verdict, never an exception.

/** What a scanner said about one piece of content. */
export type ScanVerdict =
  | { kind: 'clean' }
  | { kind: 'found'; names: string[] }
  | { kind: 'error'; text: string };

/** Virus names kept from one reply: a hostile or broken scanner cannot flood the result. */
export const MAX_NAMES_PER_REPLY = 16;
/** Characters kept of one virus name. */
export const MAX_NAME_CHARS = 256;

/** clamd reads a stream in chunks of at most this many bytes each (any size works; this keeps writes moderate). */
export const CLAMD_CHUNK = 1024 * 1024;

/** `zINSTREAM\0`, then 4-byte big-endian length-prefixed chunks, then a zero length. */
export function clamdInstream(content: Buffer): Buffer[] {
  const out: Buffer[] = [Buffer.from('zINSTREAM\0', 'latin1')];
  for (let at = 0; at < content.length; at += CLAMD_CHUNK) {
    const chunk = content.subarray(at, Math.min(content.length, at + CLAMD_CHUNK));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(chunk.length);
    out.push(len, chunk);
  }
  out.push(Buffer.alloc(4));
  return out;
}

function cleanName(name: string): string {
  return name.trim().slice(0, MAX_NAME_CHARS);
}

/** clamd's reply with the `\0` terminator stripped: `stream: OK`, `stream: <name> FOUND`, `… ERROR`. */
export function parseClamdReply(reply: string): ScanVerdict {
  const text = reply.replace(/\0+$/, '').trim();
  if (text === 'stream: OK') return { kind: 'clean' };
  const found = /^stream: (.+) FOUND$/.exec(text);
  if (found) return { kind: 'found', names: [cleanName(found[1]!)] };
  if (text.endsWith('ERROR')) return { kind: 'error', text: text.slice(0, MAX_NAME_CHARS) };
  return { kind: 'error', text: `unhandled response: ${text.slice(0, MAX_NAME_CHARS)}` };
}

/** Line protocol request: `SCAN <length>\n` and the content's bytes. */
export function lineRequest(content: Buffer): Buffer[] {
  return [Buffer.from(`SCAN ${content.length}\n`, 'latin1'), content];
}

/** Line protocol reply (newline stripped): `OK`, `FOUND <name> [<name>…]`, `ERROR <text>`. */
export function parseLineReply(reply: string): ScanVerdict {
  const text = reply.replace(/\r$/, '').trim();
  if (text === 'OK') return { kind: 'clean' };
  const found = /^FOUND\s+(.+)$/.exec(text);
  if (found) return { kind: 'found', names: found[1]!.split(/\s+/).slice(0, MAX_NAMES_PER_REPLY).map(cleanName) };
  if (text.startsWith('ERROR')) return { kind: 'error', text: text.slice(0, MAX_NAME_CHARS) };
  return { kind: 'error', text: `unhandled response: ${text.slice(0, MAX_NAME_CHARS)}` };
}

/** HTTP hook reply: status 200 and a JSON object whose `viruses` lists the names found (`[]`: clean). */
export function parseHttpReply(code: number, body: string): ScanVerdict {
  if (code !== 200) return { kind: 'error', text: `HTTP status ${code}` };
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return { kind: 'error', text: 'reply is not JSON' };
  }
  const viruses = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as { viruses?: unknown }).viruses : undefined;
  // A reply without the list is not read as clean: a broken scanner must not pass mail unseen.
  if (!Array.isArray(viruses) || !viruses.every((v) => typeof v === 'string')) return { kind: 'error', text: '`viruses` is not a list of names' };
  const names = (viruses as string[]).map(cleanName).filter(Boolean).slice(0, MAX_NAMES_PER_REPLY);
  return names.length === 0 ? { kind: 'clean' } : { kind: 'found', names };
}
