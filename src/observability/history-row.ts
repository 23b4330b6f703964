// One /history row in the version-2 layout the web UI reads: the scan
// result's metric fields plus envelope and MIME facts. The MIME facts (From, To/Cc, Subject)
// come from a bounded look at the header block, so a history row never re-parses the message.

import type { ScanMeta, ScanResult } from '../core/scan-types.js';
import type { HistoryRow } from '../storage/types.js';
import { dataRecord } from '../core/records.js';

/** Bytes of the message searched for its header block; headers beyond are not history material. */
const HEADER_SCAN_BYTES = 64 * 1024;
/** Longest subject kept in a row. */
const MAX_SUBJECT = 512;
/** MIME recipients kept per row. */
const MAX_MIME_RCPT = 50;
/** Composites listed in a row's explanation, and symbols listed per composite: rows stay small. */
const MAX_EXPLAIN_COMPOSITES = 64;
const MAX_EXPLAIN_CONSUMED = 32;
/** Capped groups and settings-replaced scores listed in a row's explanation. */
const MAX_EXPLAIN_NAMES = 64;

function headerBlock(msg: Buffer): string {
  const slice = msg.subarray(0, Math.min(msg.length, HEADER_SCAN_BYTES));
  let end = slice.indexOf('\r\n\r\n');
  if (end < 0) end = slice.indexOf('\n\n');
  return slice.toString('latin1', 0, end < 0 ? slice.length : end);
}

/**
 * Unfolded header values by lower-case name. Only wanted headers are unfolded: the long folded
 * Received chains are skipped line by line without building their values.
 */
function headerValues(block: string, wanted: ReadonlySet<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let keep = false;
  let name = '';
  let value = '';
  const flush = (): void => {
    if (!keep) return;
    const list = out.get(name);
    if (list) list.push(value.trim());
    else out.set(name, [value.trim()]);
  };
  let start = 0;
  while (start <= block.length) {
    let end = block.indexOf('\n', start);
    if (end < 0) end = block.length;
    const line = block.slice(start, end > start && block.charCodeAt(end - 1) === 13 && end < block.length ? end - 1 : end);
    start = end + 1;
    const first = line.charCodeAt(0);
    if ((first === 32 || first === 9) && name) {
      if (keep) value += ' ' + line.trim();
      continue;
    }
    flush();
    const colon = line.indexOf(':');
    name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
    keep = name !== '' && wanted.has(name);
    value = keep ? line.slice(colon + 1) : '';
  }
  flush();
  return out;
}

/** Characters of a bare address token: anything but blanks and the address-list punctuation. */
function isBareAddressChar(c: number): boolean {
  return !(c <= 32 || c === 0x3c || c === 0x3e || c === 0x2c || c === 0x3b || c === 0x3a || c === 0x22 || c === 0x28 || c === 0x29);
}

/** An `@` with at least one character on each side. */
function hasInnerAt(s: string, from: number, to: number): boolean {
  // Searched within the token only: an indexOf to the end of the value for every token of a
  // value without any `@` would make the whole scan quadratic again.
  for (let k = from + 1; k < to - 1; k++) if (s.charCodeAt(k) === 0x40) return true;
  return false;
}

/**
 * Addresses inside an address-list header value: the `<...>` part, or bare addr-specs. One pass
 * that never backtracks: the regexp this replaces retried every start inside a long token without
 * an `@`, so a 48 KB `To:` header cost seconds of CPU on every scan (history rows are built for
 * every scan).
 */
export function addresses(value: string, max = MAX_MIME_RCPT): string[] {
  const out: string[] = [];
  const n = value.length;
  let i = 0;
  while (i < n && out.length < max) {
    const c = value.charCodeAt(i);
    if (c === 0x3c) {
      // `<local@domain>`: the bracketed run stops at the next bracket or blank.
      let j = i + 1;
      while (j < n) {
        const d = value.charCodeAt(j);
        if (d === 0x3c || d === 0x3e || d <= 32) break;
        j++;
      }
      if (j < n && value.charCodeAt(j) === 0x3e && hasInnerAt(value, i + 1, j)) {
        out.push(value.slice(i + 1, j));
        i = j + 1;
      } else i++;
    } else if (isBareAddressChar(c)) {
      let k = i + 1;
      while (k < n && isBareAddressChar(value.charCodeAt(k))) k++;
      if (hasInnerAt(value, i, k)) out.push(value.slice(i, k));
      i = k;
    } else i++;
  }
  return out;
}

/** RFC 2047 encoded words in a subject, decoded when they are UTF-8 or latin1. */
function decodeWords(s: string): string {
  return s.replace(/=\?([^?]+)\?([bqBQ])\?([^?]*)\?=\s*/g, (all, cs: string, enc: string, text: string) => {
    const charset = cs.toLowerCase();
    const enc8 = charset === 'utf-8' || charset === 'utf8' ? 'utf8' : charset === 'iso-8859-1' || charset === 'us-ascii' ? 'latin1' : undefined;
    if (!enc8) return all;
    const bytes = enc.toLowerCase() === 'b'
      ? Buffer.from(text, 'base64')
      : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1');
    return bytes.toString(enc8);
  });
}

const WANTED = new Set(['from', 'to', 'cc', 'subject']);
const RCPT_HEADERS = new Set(['to', 'cc']);

function mimeRcptOf(hv: Map<string, string[]>, max: number): string[] {
  return [...(hv.get('to') ?? []), ...(hv.get('cc') ?? [])].flatMap((v) => addresses(v, max)).slice(0, max);
}

/** The To and Cc addresses of a message (at most `max`), from the same bounded look at its header block. */
export function mimeRecipients(message: Buffer, max = MAX_MIME_RCPT): string[] {
  return mimeRcptOf(headerValues(headerBlock(message), RCPT_HEADERS), max);
}

export function buildHistoryRow(result: ScanResult, meta: ScanMeta, message: Buffer, startedAt: number, legacyLayout = false): HistoryRow {
  const hv = headerValues(headerBlock(message), WANTED);
  const mimeFrom = addresses(hv.get('from')?.[0] ?? '', 1)[0];
  const mimeRcpt = mimeRcptOf(hv, MAX_MIME_RCPT);
  const rawSubject = hv.get('subject')?.[0];
  // Keyed by symbol name, which a request can choose (Settings `symbols`): no prototype (records.ts).
  const symbols = dataRecord<Record<string, unknown>>();
  for (const s of result.symbols) {
    const entry: Record<string, unknown> = legacyLayout ? {} : { name: s.name };
    entry.score = s.score;
    entry.metric_score = s.metricScore;
    if (s.description) entry.description = s.description;
    if (s.groups[0] !== undefined) entry.group = s.groups[0];
    if (s.options?.length) entry.options = s.options;
    symbols[s.name] = entry;
  }
  const row: HistoryRow = {
    unix_time: Math.floor(startedAt / 1000),
    ...(legacyLayout ? { is_spam: !['no action', 'greylist', 'soft reject'].includes(result.action) } : {}),
    is_skipped: result.isSkipped,
    score: result.score,
    required_score: result.requiredScore,
    action: result.action,
    symbols,
    ...(result.messageId && result.messageId !== 'undef' ? { 'message-id': result.messageId } : {}),
    time_real: result.timeReal,
    sender_smtp: meta.from || 'unknown',
    sender_mime: mimeFrom ?? 'unknown',
    rcpt_smtp: meta.rcpt,
    rcpt_mime: mimeRcpt,
    user: meta.user ?? 'unknown',
    subject: rawSubject === undefined ? 'unknown' : decodeWords(rawSubject).slice(0, MAX_SUBJECT),
    size: message.length,
    ip: meta.ip ?? result.clientIp ?? 'unknown',
    explain: explainOf(result),
  };
  return row;
}

/**
 * mailsift's addition to the row (Rspamd's web UI ignores it): what the verdict explanation of
 * the web UI needs beyond the symbols, and what the controller's /whatif recomputes verdicts
 * from. Bounded whatever the scan produced.
 */
function explainOf(result: ScanResult): Record<string, unknown> {
  const out: Record<string, unknown> = { thresholds: Object.fromEntries(result.thresholds) };
  if (result.passthroughModule !== undefined) out.forced = result.passthroughModule;
  const e = result.explain;
  if (e?.cappedGroups) out.capped_groups = e.cappedGroups.slice(0, MAX_EXPLAIN_NAMES);
  if (e?.composites) {
    const composites = dataRecord<string[]>();
    for (const [name, consumed] of Object.entries(e.composites).slice(0, MAX_EXPLAIN_COMPOSITES)) composites[name] = consumed.slice(0, MAX_EXPLAIN_CONSUMED);
    out.composites = composites;
  }
  if (e?.settings) {
    const st = e.settings;
    out.settings = {
      ...(st.id !== undefined ? { id: st.id } : {}),
      ...(st.actions ? { actions: st.actions } : {}),
      ...(st.scores ? { scores: st.scores.slice(0, MAX_EXPLAIN_NAMES) } : {}),
      ...(st.whitelist ? { whitelist: true } : {}),
      ...(st.symbolsLimited ? { symbols_limited: true } : {}),
    };
  }
  return out;
}
