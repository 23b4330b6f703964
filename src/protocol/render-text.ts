// Legacy text replies: the RSPAMC dialect Exim
// parses with sscanf, and SpamAssassin's SPAMC dialect that spamc reads. Every reply is a pure
// function of the scan result object of a /checkv2 reply (what JSON.parse gives for the v2 body),
// so the normal worker renders its own scans and the proxy renders an upstream's reply the same
// way. No HTTP framing: the server closes after writing.

import { MailsiftError } from '../http/errors.js';
import type { ScanResult } from '../core/scan-types.js';
import { DEFAULT_LEGACY_COMPAT, renderLegacyPong, type LegacyCommand, type LegacyCompat, type LegacyDialect } from './legacy-command.js';
import { legacyHeaders, legacyMessage } from './legacy-message.js';
import { renderReport } from './legacy-report.js';
import { renderV2 } from './render-v2.js';
import { isSpamResult, jsonObject, num, oneLine, own, symbolEntries, type JsonObject } from './result-json.js';

export interface LegacyRenderOptions {
  /** `spamd` (default): the spam flag follows the action; `rspamd`: always False, as 3.4. */
  compat?: LegacyCompat;
  /** The message as the client sent it (PROCESS and HEADERS return it with headers added). */
  message?: Buffer;
  /** The scanner's rewritten message (its body block), used by PROCESS instead of `message`. */
  rewritten?: Buffer;
  /**
   * Appended after a CHECK/SYMBOLS reply when the client sent `Flags: body_block` and the
   * message was rewritten, as Rspamd does; a SPAMC Content-length counts it.
   */
  bodyBlock?: Buffer;
}

const two = (n: number): string => n.toFixed(2);

/**
 * The flag of `Spam:` and `Metric:`. Rspamd's renderers read an `is_spam` key the v2 result does
 * not have, so 3.4 always says False (and spamc -c exits 0 on GTUBE); `rspamd` mode keeps that.
 */
function spamFlag(r: JsonObject, compat: LegacyCompat): 'True' | 'False' {
  const spam = compat === 'rspamd' ? own(r, 'is_spam') === true : isSpamResult(r);
  return spam ? 'True' : 'False';
}

/** `RSPAMD/1.3 0 EX_OK`, then lines until the connection closes (no length, no blank line). */
function rspamcText(r: JsonObject, compat: LegacyCompat): string {
  let s = `RSPAMD/1.3 0 EX_OK\r\nMetric: default; ${spamFlag(r, compat)}; ${two(num(own(r, 'score')))} / ${two(num(own(r, 'required_score')))} / 0.0\r\n`;
  const action = own(r, 'action');
  if (typeof action === 'string') s += `Action: ${oneLine(action)}\r\n`;
  const subject = own(r, 'subject');
  if (typeof subject === 'string') s += `Subject: ${oneLine(subject)}\r\n`;
  for (const [name, sym] of symbolEntries(r)) s += `Symbol: ${oneLine(name)}(${two(num(own(sym, 'score')))})\r\n`;
  const messages = jsonObject(own(r, 'messages'));
  if (messages) for (const text of Object.values(messages)) if (typeof text === 'string') s += `Message: ${oneLine(text)}\r\n`;
  const mid = own(r, 'message-id');
  if (typeof mid === 'string') s += `Message-ID: ${oneLine(mid)}\r\n`;
  return s;
}

/** Comma-separated names of the result's symbols (in the result's order) and CRLF; empty when none. */
function symbolList(r: JsonObject): string {
  const names = symbolEntries(r).map(([name]) => oneLine(name));
  return names.length > 0 ? `${names.join(',')}\r\n` : '';
}

/**
 * `SPAMD/1.1 0 EX_OK`, `Content-length` (of what follows the blank line), `Spam: <flag> ; score /
 * required`, a blank line, then the command's part: spamc checks that part's length exactly.
 */
function spamcReply(r: JsonObject, compat: LegacyCompat, tail: Buffer): Buffer {
  const head = `SPAMD/1.1 0 EX_OK\r\nContent-length: ${tail.length}\r\nSpam: ${spamFlag(r, compat)} ; ${two(num(own(r, 'score')))} / ${two(num(own(r, 'required_score')))}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), tail]);
}

/**
 * The whole legacy reply to `command` for the scan result `result` (the v2 reply object; a
 * `/check` v1 object works too). PING needs no result. SKIP and TELL have no scan reply (see
 * planLegacyCommand), nor do PROCESS and HEADERS in the RSPAMC dialect: asking for one of
 * those throws ERR_LEGACY_COMMAND.
 */
export function renderLegacyReply(dialect: LegacyDialect, command: LegacyCommand, result: unknown, opts: LegacyRenderOptions = {}): Buffer {
  if (command === 'PING') return renderLegacyPong(dialect);
  if (command === 'SKIP' || command === 'TELL' || (dialect === 'rspamc' && (command === 'PROCESS' || command === 'HEADERS'))) {
    throw new MailsiftError('ERR_LEGACY_COMMAND', `${command} has no ${dialect} scan reply`);
  }
  const r = jsonObject(result) ?? {};
  const compat = opts.compat ?? DEFAULT_LEGACY_COMPAT;
  const block = opts.bodyBlock ?? Buffer.alloc(0);
  if (dialect === 'rspamc') {
    // Old rspamd answered REPORT and REPORT_IFSPAM with the same lines as CHECK.
    const text = Buffer.from(rspamcText(r, compat), 'utf8');
    return command === 'CHECK' || command === 'SYMBOLS' ? Buffer.concat([text, block]) : text;
  }
  switch (command) {
    case 'CHECK':
    case 'SYMBOLS':
      return spamcReply(r, compat, Buffer.concat([Buffer.from(symbolList(r), 'utf8'), block]));
    case 'REPORT':
      return spamcReply(r, compat, Buffer.from(renderReport(r), 'utf8'));
    case 'REPORT_IFSPAM':
      return spamcReply(r, compat, Buffer.from(spamFlag(r, compat) === 'True' ? renderReport(r) : '', 'utf8'));
    case 'PROCESS':
      return spamcReply(r, compat, legacyMessage(opts.rewritten ?? opts.message ?? Buffer.alloc(0), r));
    case 'HEADERS':
      return spamcReply(r, compat, legacyHeaders(opts.rewritten ?? opts.message ?? Buffer.alloc(0), r));
  }
}

/**
 * An upstream's reply body rendered for a legacy client: its scan result,
 * or, when the body is not a JSON object, the body as is under the dialect's status line.
 */
export function renderLegacyFromBody(dialect: LegacyDialect, command: LegacyCommand, body: Buffer, opts: LegacyRenderOptions = {}): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (jsonObject(parsed)) return renderLegacyReply(dialect, command, parsed, opts);
  return Buffer.concat([Buffer.from(dialect === 'spamc' ? 'SPAMD/1.1 0 EX_OK\r\n' : 'RSPAMD/1.3 0 EX_OK\r\n', 'latin1'), body]);
}

/** The v2 object of a ScanResult, the input of the renderers above. */
function resultObject(r: ScanResult): JsonObject {
  return renderV2(r, { flags: new Set(), extendedUrls: false }) as JsonObject;
}

/** The RSPAMC reply to CHECK/SYMBOLS for a ScanResult. */
export function renderRspamcText(r: ScanResult, compat: LegacyCompat = DEFAULT_LEGACY_COMPAT): Buffer {
  return renderLegacyReply('rspamc', 'SYMBOLS', resultObject(r), { compat });
}

/** The SPAMC reply to CHECK/SYMBOLS for a ScanResult. */
export function renderSpamcText(r: ScanResult, compat: LegacyCompat = DEFAULT_LEGACY_COMPAT): Buffer {
  return renderLegacyReply('spamc', 'SYMBOLS', resultObject(r), { compat });
}
