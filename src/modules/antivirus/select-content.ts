// What a rule sends to its scanner: the whole message, or each part worth scanning (Rspamd's
// scan_mime_parts): attachments, and text or image parts when the rule asks for them. Identical
// parts go once. Pure: no I/O.
import { createHash } from 'node:crypto';
import type { Message, MimePart } from '../../plugin-api/index.js';
import type { AntivirusRule } from './config.js';

/** Pieces of one message sent to one scanner; a message with more attachments has the rest unscanned (and logged). */
export const MAX_SCANNED_PARTS = 32;

export interface ScanContent {
  content: Buffer;
  /** sha256 of the content, hex: the cache key and the duplicate check. */
  digest: string;
  /** The part's file name, for the log and the HTTP hook. */
  filename?: string;
  contentType?: string;
}

export interface Selection {
  items: ScanContent[];
  /** Pieces left out by max_size: their sizes. */
  tooLarge: number[];
  /** Parts left out by MAX_SCANNED_PARTS. */
  overCap: number;
}

type Opts = Pick<AntivirusRule, 'scan_mime_parts' | 'scan_text_mime' | 'scan_image_mime' | 'max_size'>;

function digestOf(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

function partWanted(part: MimePart, opts: Opts): boolean {
  // A multipart has no content of its own, and an attached message's parts are parts themselves.
  if (part.isMultipart || part.isMessage || part.content.length === 0) return false;
  const type = part.contentType.type;
  if (type.startsWith('image/')) return opts.scan_image_mime;
  if (part.isAttachment) return true;
  return opts.scan_text_mime && type.startsWith('text/');
}

export function selectContent(message: Message, raw: Buffer, opts: Opts): Selection {
  const sel: Selection = { items: [], tooLarge: [], overCap: 0 };
  const fits = (n: number): boolean => opts.max_size === 0 || n <= opts.max_size;
  if (!opts.scan_mime_parts) {
    if (fits(raw.length)) sel.items.push({ content: raw, digest: digestOf(raw) });
    else sel.tooLarge.push(raw.length);
    return sel;
  }
  const seen = new Set<string>();
  for (const part of message.parts) {
    if (!partWanted(part, opts)) continue;
    if (!fits(part.content.length)) {
      sel.tooLarge.push(part.content.length);
      continue;
    }
    if (sel.items.length >= MAX_SCANNED_PARTS) {
      sel.overCap++;
      continue;
    }
    const digest = digestOf(part.content);
    if (seen.has(digest)) continue;
    seen.add(digest);
    const item: ScanContent = { content: part.content, digest, contentType: part.contentType.type };
    if (part.filename !== undefined) item.filename = part.filename;
    sel.items.push(item);
  }
  return sel;
}
