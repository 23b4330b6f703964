// Legacy text replies (scan-protocol.md §7): the RSPAMC dialect Exim parses with sscanf, and
// the SpamAssassin SPAMC dialect. Both are renderings of the same ScanResult; there is no
// HTTP framing, the server closes after writing.

import type { ScanResult } from '../plugin-api/scan-types.js';

/**
 * Rspamd's text renderers look up an `is_spam` field the v2 result lacks, so every real
 * server prints `False` (even for GTUBE). Clients cope (Exim compares score to threshold),
 * and a client written against Rspamd may rely on it, so we print the same.
 */
const SPAM_INDICATOR = 'False';

const two = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '0.00');

/**
 * Text copied into a reply line stays on that line: the subject comes from the message (an
 * encoded word decodes to any bytes, CR LF included), and a line break in it would let a sender
 * add `Action:` or `Symbol:` lines to the reply an MTA reads.
 */
const oneLine = (s: string): string => s.replace(/[\r\n]+/g, ' ');

export function renderRspamcText(r: ScanResult): Buffer {
  let s = `RSPAMD/1.3 0 EX_OK\r\nMetric: default; ${SPAM_INDICATOR}; ${two(r.score)} / ${two(r.requiredScore)} / 0.0\r\nAction: ${oneLine(r.action)}\r\n`;
  if (r.action === 'rewrite subject' && r.subject !== undefined) s += `Subject: ${oneLine(r.subject)}\r\n`;
  for (const sym of r.symbols) s += `Symbol: ${oneLine(sym.name)}(${two(sym.score)})\r\n`;
  for (const text of Object.values(r.messages)) s += `Message: ${oneLine(text)}\r\n`;
  s += `Message-ID: ${oneLine(r.messageId ?? 'undef')}\r\n`;
  return Buffer.from(s);
}

export function renderSpamcText(r: ScanResult): Buffer {
  const tail = r.symbols.length > 0 ? `${r.symbols.map((x) => oneLine(x.name)).join(',')}\r\n` : '';
  const tailBytes = Buffer.byteLength(tail);
  return Buffer.from(`SPAMD/1.1 0 EX_OK\r\nContent-length: ${tailBytes}\r\nSpam: ${SPAM_INDICATOR} ; ${two(r.score)} / ${two(r.requiredScore)}\r\n\r\n${tail}`);
}

/** A text-dialect error line (EX_PROTOCOL), for requests that cannot be scanned. */
export function renderTextError(dialect: 'spamc' | 'rspamc', message: string): Buffer {
  const proto = dialect === 'spamc' ? 'SPAMD/1.1' : 'RSPAMD/1.3';
  return Buffer.from(`${proto} 76 ${oneLine(message)}\r\n`);
}
