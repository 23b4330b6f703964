// The one log line each scan writes, carrying what Rspamd's task log line carries (message id,
// queue id, client, sender, verdict, score, symbols with their scores and options, size, time,
// DNS lookups, digest, recipients), so an operator can follow the mail flow, and tools that read
// Rspamd's line (rspamd_stats and the like) find their fields. In the text format the line is
// the whole record; in JSON the same facts are fields, for log pipelines to query.
//
// Everything on the line comes from the client or the message, so every value is bounded and
// control characters are escaped: a recipient with a newline must not forge a second line.

import { createHash } from 'node:crypto';
import type { Logger } from '../core/logger.js';
import type { ScanMeta, ScanResult } from '../core/scan-types.js';
import type { LogFormat, LogLevel } from './log.js';
import { mimeRecipients } from './history-row.js';

/** Characters kept of one value (an address, an option, the message id). */
const MAX_VALUE_CHARS = 256;
/** Options shown per symbol; Rspamd's line is as long as a rule makes it, ours is not. */
const MAX_OPTIONS = 10;
/** Symbols shown; the rest are counted. */
const MAX_SYMBOLS = 200;
/** Envelope and MIME recipients shown each; the rest are counted. */
const MAX_RCPTS = 50;

/** Actions that leave the message with the recipient: `F` on the line, as Rspamd's is_spam. */
const HAM_ACTIONS: ReadonlySet<string> = new Set(['no action', 'greylist', 'soft reject']);

export interface ScanLogInput {
  result: ScanResult;
  meta: ScanMeta;
  message: Buffer;
  /** Seconds from the request to the result. */
  seconds: number;
  /**
   * The message's To and Cc addresses, when the caller has already read them (the scan observer
   * builds the history row first); otherwise the line reads the header block itself.
   */
  mimeRcpts?: string[];
}

export interface ScanLogSymbol {
  name: string;
  score: number;
  options?: string[];
}

/** The JSON form of the line. */
export interface ScanLogFields {
  logTag?: string;
  messageId?: string;
  queueId?: string;
  ip?: string;
  user?: string;
  from?: string;
  /** `T` spam, `F` not, `S` skipped (Rspamd's letters). */
  isSpam: 'T' | 'F' | 'S';
  action: string;
  score: number;
  requiredScore: number;
  symbols: ScanLogSymbol[];
  /** Symbols past MAX_SYMBOLS, not listed. */
  symbolsLeftOut?: number;
  size: number;
  timeMs: number;
  dnsRequests: number;
  dnsFailures?: { count: number; names: string[]; capReached: boolean };
  digest: string;
  rcpts: string[];
  mimeRcpts: string[];
}

const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;
const CONTROLS = /[\u0000-\u001f\u007f\u2028\u2029]/g;

/** A value with control characters escaped and its length bounded. */
export function safeValue(s: string, max = MAX_VALUE_CHARS): string {
  const cut = s.length > max ? `${s.slice(0, max)}…` : s;
  // Nearly every value has none: a test is cheaper than a replace that finds nothing.
  if (!CONTROL.test(cut)) return cut;
  return cut.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The message's digest: 32 hex digits, like Rspamd's, so the same message gives the same digest on every line. */
export function messageDigest(message: Buffer): string {
  return createHash('blake2b512').update(message).digest('hex').slice(0, 32);
}

/** Scores as the reply writes them (six decimals), so the line and the reply agree to the digit. */
function score6(n: number): number {
  return Number.isFinite(n) ? Number(n.toFixed(6)) : 0;
}

function byWeight(a: ScanLogSymbol, b: ScanLogSymbol): number {
  return Math.abs(b.score) - Math.abs(a.score) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

export function scanLogFields(input: ScanLogInput): ScanLogFields {
  const { result, meta, message } = input;
  const symbols = result.symbols
    .map((s): ScanLogSymbol => ({
      name: safeValue(s.name),
      score: score6(s.score),
      ...(s.options?.length ? { options: s.options.slice(0, MAX_OPTIONS).map((o) => safeValue(o)) } : {}),
    }))
    .sort(byWeight);
  const f: ScanLogFields = {
    isSpam: result.isSkipped ? 'S' : HAM_ACTIONS.has(result.action) ? 'F' : 'T',
    action: safeValue(result.action),
    score: score6(result.score),
    requiredScore: score6(result.requiredScore),
    symbols: symbols.slice(0, MAX_SYMBOLS),
    size: message.length,
    timeMs: Math.round(input.seconds * 1e5) / 100,
    dnsRequests: result.dnsRequests ?? 0,
    digest: messageDigest(message),
    rcpts: meta.rcpt.slice(0, MAX_RCPTS).map((r) => safeValue(r)),
    mimeRcpts: meta.raw ? [] : (input.mimeRcpts ?? mimeRecipients(message, MAX_RCPTS)).slice(0, MAX_RCPTS).map((r) => safeValue(r)),
  };
  if (symbols.length > MAX_SYMBOLS) f.symbolsLeftOut = symbols.length - MAX_SYMBOLS;
  if (meta.logTag !== undefined) f.logTag = safeValue(meta.logTag);
  if (result.messageId !== undefined) f.messageId = safeValue(result.messageId);
  if (meta.queueId !== undefined) f.queueId = safeValue(meta.queueId);
  const ip = meta.ip ?? result.clientIp;
  if (ip !== undefined) f.ip = safeValue(ip);
  if (meta.user !== undefined) f.user = safeValue(meta.user);
  if (meta.from !== undefined) f.from = safeValue(meta.from);
  if (result.dnsFailures) f.dnsFailures = { ...result.dnsFailures, names: result.dnsFailures.names.map((n) => safeValue(n)) };
  return f;
}

function list(values: string[], total: number): string {
  return values.join(',') + (total > values.length ? `,…+${total - values.length}` : '');
}

/**
 * The text line: `<log-tag> id: <…>, qid: <…>, ip: …, user: …, from: <…>, (default: F (no action):
 * [score/required] [SYM(score){opt;…},…]), len: …, time: …ms, dns req: …, digest: <…>, rcpts: <…>,
 * mime_rcpts: <…>`. Parts Rspamd leaves out when empty are left out here too.
 */
export function scanLogText(f: ScanLogFields, meta: Pick<ScanMeta, 'rcpt'>): string {
  const parts: string[] = [];
  parts.push(`id: <${f.messageId ?? 'undef'}>`);
  if (f.queueId !== undefined) parts.push(`qid: <${f.queueId}>`);
  if (f.ip !== undefined) parts.push(`ip: ${f.ip}`);
  if (f.user !== undefined) parts.push(`user: ${f.user}`);
  if (f.from !== undefined) parts.push(`from: <${f.from}>`);
  const syms = f.symbols.map((s) => `${s.name}(${s.score.toFixed(2)}){${(s.options ?? []).map((o) => `${o};`).join('')}}`);
  if (f.symbolsLeftOut) syms.push(`…+${f.symbolsLeftOut}`);
  parts.push(`(default: ${f.isSpam} (${f.action}): [${f.score.toFixed(2)}/${f.requiredScore.toFixed(2)}] [${syms.join(',')}])`);
  parts.push(`len: ${f.size}`, `time: ${f.timeMs.toFixed(2)}ms`, `dns req: ${f.dnsRequests}`);
  if (f.dnsFailures) parts.push(`dns failed: ${f.dnsFailures.count} <${list(f.dnsFailures.names, f.dnsFailures.count)}>`);
  parts.push(`digest: <${f.digest}>`);
  if (f.rcpts.length) parts.push(`rcpts: <${list(f.rcpts, meta.rcpt.length)}>`);
  if (f.mimeRcpts.length) parts.push(`mime_rcpts: <${f.mimeRcpts.join(',')}>`);
  return (f.logTag !== undefined ? `<${f.logTag}> ` : '') + parts.join(', ');
}

/** Whether the scan asked not to be logged: `Log: no`, the `no_log` flag, or Settings/a rule setting `no_log`. */
export function isUnlogged(result: ScanResult, meta: ScanMeta): boolean {
  return !meta.log || result.noLog === true;
}

/**
 * Writes the scan's line at info level (nothing for a scan asking not to be logged). `level` is
 * the configured one: above info the line is never built, so its digest costs nothing.
 */
export function createScanLogger(log: Logger, format: LogFormat, level: LogLevel): (input: ScanLogInput) => void {
  if (level !== 'info' && level !== 'debug') return () => undefined;
  return (input) => {
    if (isUnlogged(input.result, input.meta)) return;
    const fields = scanLogFields(input);
    // The text format appends fields as key=value: the line already is every field, said once.
    if (format === 'text') log.info(scanLogText(fields, input.meta));
    else log.info('scan', { ...fields });
  };
}
