// Entry points: raw message bytes → Message. Orchestrates the header block, the part tree,
// text decoding and URL/address extraction; each of those lives in its own file.
import { isUtf8 } from 'node:buffer';
import { parseAddressList } from './addresses.js';
import { parseContentType } from './content-type.js';
import { parseMailDate } from './mail-date.js';
import { encodedWordBudget } from './encoded-words.js';
import { EMPTY_HEADERS, parseHeaderBlock } from './header-list.js';
import { MAX_ADDRESS_LIST_CHARS, MAX_HEADER_ADDRESSES, MAX_HTML_BYTES_PER_MESSAGE, MAX_RECEIVED_HOPS } from './limits.js';
import { buildPart, type TreeState } from './mime-tree.js';
import { isTextBodyPart, makeTextPart, type TextBudget } from './text-part.js';
import type { Attachment, EmailAddress, HeaderList, Message, MimeAnomaly, MimePart, TextPart } from './types.js';
import { UrlCollector } from './urls.js';

const LF = 0x0a;
/** Bytes of raw input sniffed to guess whether it is text. */
const RAW_SNIFF_BYTES = 4096;

/** Offset of the first byte after leading whitespace and an mbox `From ` line. */
function skipPreamble(raw: Buffer): number {
  let i = 0;
  while (i < raw.length && (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0d || raw[i] === LF)) i++;
  if (raw.length - i >= 5 && raw.toString('latin1', i, i + 5) === 'From ') {
    const lf = raw.indexOf(LF, i);
    i = lf < 0 ? raw.length : lf + 1;
  }
  return i;
}

/** What is left of MAX_ADDRESS_LIST_CHARS for the message's address headers. */
interface AddressBudget {
  chars: number;
}

/**
 * The addresses of every `name` header, at most MAX_HEADER_ADDRESSES of them, from what the
 * message's budget of characters has left (`too_many_addresses` when either cut the list short).
 */
function addressHeader(headers: HeaderList, name: string, budget: AddressBudget, anomalies: Set<MimeAnomaly>): EmailAddress[] {
  const out: EmailAddress[] = [];
  for (const h of headers.get(name)) {
    // Encoded words must be decoded per display name, after the list is split: a decoded
    // name may contain commas or angle brackets.
    let src = h.raw.includes('=?') ? h.raw.replace(/\r?\n(?=[ \t])/g, '') : h.value;
    if (out.length >= MAX_HEADER_ADDRESSES || budget.chars <= 0) {
      anomalies.add('too_many_addresses');
      break;
    }
    if (src.length > budget.chars) {
      // Cut at the last comma that fits, so no address is read half.
      const comma = src.lastIndexOf(',', budget.chars);
      src = src.slice(0, comma > 0 ? comma : budget.chars);
      anomalies.add('too_many_addresses');
    }
    budget.chars -= src.length;
    for (const a of parseAddressList(src)) {
      if (out.length >= MAX_HEADER_ADDRESSES) {
        anomalies.add('too_many_addresses');
        break;
      }
      out.push(a);
    }
  }
  return out;
}

function messageIdOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const lt = value.indexOf('<');
  const gt = lt >= 0 ? value.indexOf('>', lt) : -1;
  const id = (lt >= 0 && gt > lt ? value.slice(lt + 1, gt) : value).trim();
  return id || undefined;
}

function dateOf(value: string | undefined): Date | undefined {
  return value ? parseMailDate(value) : undefined;
}

/**
 * Whether Rspamd reads this part's text for links with a scheme or `www.` only: an HTML part's
 * text, and a plain part with exactly one sibling (its HTML alternative carries the links).
 */
function readStrictly(tp: TextPart): boolean {
  if (tp.kind === 'html') return true;
  const parent = tp.part.parent;
  return parent !== undefined && parent.isMultipart && parent.children.length === 2;
}

/** Text parts, attachments, URLs and addresses: the facts derived from a finished part tree. */
function derive(parts: MimePart[], subject: string | undefined, anomalies: Set<MimeAnomaly>) {
  const textParts: TextPart[] = [];
  const attachments: Attachment[] = [];
  const collector = new UrlCollector();
  const budget: TextBudget = { htmlChars: MAX_HTML_BYTES_PER_MESSAGE };
  for (const part of parts) {
    if (isTextBodyPart(part)) {
      const tp = makeTextPart(part, budget);
      textParts.push(tp);
      if (tp.html?.truncated) anomalies.add('html_too_long');
      if (tp.html?.linksTruncated) anomalies.add('too_many_urls');
      if (tp.badCharset) {
        anomalies.add('bad_charset');
        if (!part.anomalies.includes('bad_charset')) part.anomalies.push('bad_charset');
      }
      if (tp.html) collector.scanHtml(tp.html);
      if (!tp.empty) collector.scanText(tp.text, ['text'], true, true, readStrictly(tp));
    } else if (part.isAttachment) {
      const a: Attachment = { part, contentType: part.contentType.type, size: part.content.length };
      if (part.filename !== undefined) a.filename = part.filename;
      attachments.push(a);
    }
  }
  if (subject) collector.scanText(subject, ['subject'], false, false);
  if (collector.truncated || collector.emailsTruncated) anomalies.add('too_many_urls');
  if (collector.scanTruncated) anomalies.add('url_scan_truncated');
  return { textParts, attachments, urls: [...collector.urls.values()], emails: [...collector.emails.values()] };
}

/** Parse raw message bytes. Never throws; broken structure is reported in `anomalies`. */
export function parseMessage(input: Buffer): Message {
  const raw = input.subarray(skipPreamble(input));
  const words = encodedWordBudget();
  const block = parseHeaderBlock(raw, 0, raw.length, words);
  const state: TreeState = { parts: [], anomalies: new Set(), words };
  // The first part can never hit the part limit, so buildPart returns a part here.
  const root = buildPart(raw, 0, raw.length, 0, '', undefined, 'text/plain', state, block)!;
  const headers = root.headers;
  const subject = headers.first('subject')?.value;
  const facts = derive(state.parts, subject, state.anomalies);
  if (headers.get('received').length > MAX_RECEIVED_HOPS) state.anomalies.add('too_many_received');
  const addressBudget: AddressBudget = { chars: MAX_ADDRESS_LIST_CHARS };
  const msg: Message = {
    raw,
    newline: block.newline,
    headers,
    bodyOffset: block.bodyOffset,
    root,
    parts: state.parts,
    ...facts,
    from: addressHeader(headers, 'from', addressBudget, state.anomalies),
    to: addressHeader(headers, 'to', addressBudget, state.anomalies),
    cc: addressHeader(headers, 'cc', addressBudget, state.anomalies),
    replyTo: addressHeader(headers, 'reply-to', addressBudget, state.anomalies),
    anomalies: state.anomalies,
  };
  if (words.exhausted) state.anomalies.add('too_many_encoded_words');
  if (subject !== undefined) msg.subject = subject;
  const mid = messageIdOf(headers.first('message-id')?.value);
  if (mid !== undefined) msg.messageId = mid;
  const date = dateOf(headers.first('date')?.value);
  if (date) msg.date = date;
  return msg;
}

function looksLikeText(raw: Buffer): boolean {
  const head = raw.subarray(0, RAW_SNIFF_BYTES);
  if (head.indexOf(0) >= 0) return false;
  return isUtf8(head) || isUtf8(head.subarray(0, Math.max(0, head.length - 3)));
}

/**
 * Input sent with `Raw: yes`: not MIME. One part of `contentType` (guessed from the bytes when
 * absent), inline, named `filename`.
 */
export function makeRawMessage(raw: Buffer, contentType?: string, filename?: string): Message {
  const fallback = looksLikeText(raw) ? 'text/plain' : 'application/octet-stream';
  const ct = contentType ? parseContentType(contentType, fallback) : { type: fallback, params: {} };
  const root: MimePart = {
    id: '',
    headers: EMPTY_HEADERS,
    contentType: ct,
    transferEncoding: 'binary',
    disposition: 'inline',
    content: raw,
    rawSize: raw.length,
    children: [],
    depth: 0,
    isMultipart: false,
    isMessage: false,
    isAttachment: !ct.type.startsWith('text/'),
    anomalies: [],
  };
  if (filename) root.filename = filename;
  const anomalies = new Set<MimeAnomaly>();
  const facts = derive([root], undefined, anomalies);
  const firstLf = raw.indexOf(LF);
  return {
    raw,
    newline: firstLf > 0 && raw[firstLf - 1] === 0x0d ? '\r\n' : '\n',
    headers: EMPTY_HEADERS,
    bodyOffset: 0,
    root,
    parts: [root],
    ...facts,
    from: [],
    to: [],
    cc: [],
    replyTo: [],
    anomalies,
  };
}
