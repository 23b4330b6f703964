// MIME structure checks: multipart/alternative completeness, HTML-only mail, broken content
// types and parser anomalies, bogus multipart/mixed, binary parts not marked as attachments.
import { isAscii } from 'node:buffer';
import type { MimeAnomaly, MimePart, Task } from '../../plugin-api/index.js';

export function checkAlternative(task: Task): void {
  let alt = false;
  let plain = false;
  let html = false;
  for (const p of task.message.parts) {
    const ct = p.contentType.type;
    if (ct === 'multipart/alternative') alt = true;
    else if (ct === 'text/plain') plain = true;
    else if (ct === 'text/html') html = true;
  }
  if (!alt) return;
  if (!plain) task.insert('MIME_MA_MISSING_TEXT');
  if (!html) task.insert('MIME_MA_MISSING_HTML');
}

export function checkHtmlOnly(task: Task): void {
  // Rspamd's has_only_html_part(): a single text part, and it is HTML.
  const tps = task.message.textParts;
  if (tps.length === 1 && tps[0]!.kind === 'html') task.insert('MIME_HTML_ONLY');
}

/** Anomalies that make a part's Content-Type unusable (Rspamd marks such parts broken). */
const BROKEN_TYPE: ReadonlySet<MimeAnomaly> = new Set(['invalid_content_type', 'missing_boundary', 'boundary_not_found']);
const BAD_ENCODING: ReadonlySet<MimeAnomaly> = new Set(['bad_base64', 'bad_qp', 'bad_transfer_encoding']);
/**
 * Weight of MIME_LIMITS_EXCEEDED when only caps that honest mail reaches (SIZE_LIMITS) were hit:
 * a mark that part of the message went unread, not a sign of spam (on the development split one
 * weblog digest and no spam reach only these caps; conf/groups.yaml, round 5).
 */
const SIZE_CAP_WEIGHT = 0.1;
const LIMITS: ReadonlySet<MimeAnomaly> = new Set([
  'too_deep', 'too_many_parts', 'header_too_long', 'too_many_headers', 'too_many_urls', 'too_many_received',
  'received_too_long', 'too_many_addresses', 'too_many_encoded_words', 'too_many_params', 'html_too_long', 'url_scan_truncated',
]);
/**
 * Caps a link digest, a long mailing-list archive or a big newsletter reaches honestly: the URL
 * caps and the text-size caps of the URL scan and the HTML renderer. Nesting, part, header,
 * address and encoded-word caps are what evasive mail hits.
 */
const SIZE_LIMITS: ReadonlySet<MimeAnomaly> = new Set(['too_many_urls', 'url_scan_truncated', 'html_too_long']);

export function checkAnomalies(task: Task): void {
  const found = task.message.anomalies;
  // A Received header longer than the parser reads is only known once the chain is parsed.
  const longHop = !task.meta.raw && task.received.some((h) => h.truncated === true);
  if (found.size === 0 && !longHop && !task.message.parts.some((p) => p.contentType.invalid)) return;
  const pick = (set: ReadonlySet<MimeAnomaly>): MimeAnomaly[] => [...found].filter((a) => set.has(a));
  const broken = pick(BROKEN_TYPE);
  if (broken.length || task.message.parts.some((p) => p.contentType.invalid)) {
    task.insert('BROKEN_CONTENT_TYPE', 1, broken.length ? broken : ['invalid_content_type']);
  }
  const enc = pick(BAD_ENCODING);
  if (enc.length) task.insert('MIME_BAD_ENCODING', 1, enc);
  const lim = pick(LIMITS);
  if (longHop && !lim.includes('received_too_long')) lim.push('received_too_long');
  if (lim.length) task.insert('MIME_LIMITS_EXCEEDED', lim.every((a) => SIZE_LIMITS.has(a)) ? SIZE_CAP_WEIGHT : 1, lim);
}

/** A `filename` parameter in a Content-Disposition value (RFC 2231 `filename*` included). */
const CD_FILENAME = /(?:^|;)\s*filename\*?\s*=/i;

/**
 * Rspamd's `part:is_attachment()`, which CTYPE_MIXED_BOGUS asks: a part whose disposition is
 * `attachment`, or that is named (a Content-Disposition filename, or with no Content-Disposition
 * header a Content-Type name) and is neither an image nor referenced by a Content-ID. Narrower
 * than the parser's isAttachment in one way and wider in another: an inline text part with a
 * filename (a patch pasted as an inline attachment) is an attachment here, not body text.
 */
function luaIsAttachment(p: MimePart): boolean {
  if (p.disposition === 'attachment') return true;
  const cd = p.headers.first('content-disposition')?.value;
  // Without the header, Rspamd makes a Content-Type name an attachment disposition.
  if (cd === undefined) return p.filename !== undefined;
  if (!CD_FILENAME.test(cd)) return false;
  return !p.contentType.type.startsWith('image/') && !p.headers.has('content-id');
}

export function checkMixedBogus(task: Task): void {
  const root = task.message.root;
  if (!task.message.headers.has('content-type') || root.contentType.type !== 'multipart/mixed') return;
  let textParts = 0;
  for (const p of task.message.parts) {
    const major = p.contentType.type.split('/')[0];
    if (major === 'text' && !luaIsAttachment(p)) {
      if (++textParts > 2) return;
    } else if (major !== 'multipart') {
      return;
    }
  }
  task.insert('CTYPE_MIXED_BOGUS');
}

/**
 * /filename=.+\.asc/ written out (`.` stops at line ends): a line with `filename=`, then at least
 * one character, then `.asc`. The regexp retried `.+` from every `filename=` to the end.
 */
export function ascFilename(value: string): boolean {
  return value.split(/[\n\r\u2028\u2029]/).some((line) => {
    const at = line.indexOf('filename=');
    return at >= 0 && line.indexOf('.asc', at + 10) >= 0;
  });
}

export function checkMissingDisposition(task: Task): void {
  const parts = task.message.parts;
  for (const p of parts) {
    if (p.contentType.type !== 'application/octet-stream') continue;
    const cd = p.headers.first('content-disposition')?.value;
    if (cd !== undefined && /^attachment/i.test(cd)) continue;
    if (p.headers.has('content-id')) return;
    if (parts.length > 1 && cd !== undefined && ascFilename(cd)) return;
    if (p.parent?.contentType.type === 'multipart/encrypted') return;
    task.insert('CTYPE_MISSING_DISPOSITION');
    return;
  }
}

/** Rspamd reads the headers as written: a part without a Content-Type header is not text here. */
function base64Text(headers: MimePart['headers']): boolean {
  const ct = headers.first('content-type')?.value;
  if (ct === undefined || !/^text/i.test(ct)) return false;
  const cte = headers.first('content-transfer-encoding')?.value;
  return cte !== undefined && /^base64/i.test(cte);
}

/** A text part sent as base64. */
export function checkBase64Text(task: Task): void {
  const m = task.message;
  if (base64Text(m.headers) || m.parts.some((p) => base64Text(p.headers))) task.insert('MIME_BASE64_TEXT');
}

/**
 * A base64 text part whose decoded bytes are all ASCII (Rspamd: no 8-bit byte in the decoded
 * content): nothing needed the encoding but hiding the words.
 */
export function checkBase64TextBogus(task: Task): void {
  for (const tp of task.message.textParts) {
    if (base64Text(tp.part.headers) && isAscii(tp.part.content)) {
      task.insert('MIME_BASE64_TEXT_BOGUS');
      return;
    }
  }
}

/** A part marked `Content-Disposition: attachment` in a message of more than one part. */
export function checkHasAttachment(task: Task): void {
  const parts = task.message.parts;
  if (parts.length < 2) return;
  for (const p of parts) {
    const cd = p.headers.first('content-disposition')?.value;
    if (cd !== undefined && /^attachment/i.test(cd)) {
      task.insert('HAS_ATTACHMENT');
      return;
    }
  }
}
