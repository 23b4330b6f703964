// /checkv2 request headers → ScanMeta. Headers interpreted while
// walking take the last occurrence; Settings, maxscore/softscore take the first, as in
// Rspamd. Bad envelope values are logged, dropped and flag the task; nothing here throws.

import { emptyMeta, SCAN_FLAGS, type ScanFlag, type ScanMeta } from '../core/scan-types.js';
import type { RequestHeaders } from '../http/types.js';
import { parseClientIp, parseEnvelopePath, splitAddressList } from './envelope.js';
import { parseSettingsValue } from './settings-parse.js';
import { MAX_ENVELOPE_RCPT } from '../message/limits.js';

export interface ProtocolLog {
  warn(msg: string, extra?: Record<string, unknown>): void;
}

const KNOWN_FLAGS: ReadonlySet<string> = new Set<string>(SCAN_FLAGS);

/** Adds the items of a `Flags` value: case-sensitive, leading space skipped, trailing kept. */
export function addFlags(meta: ScanMeta, value: string, log?: ProtocolLog): void {
  for (const raw of value.split(',')) {
    let i = 0;
    while (i < raw.length && (raw[i] === ' ' || raw[i] === '\t')) i++;
    const item = i === 0 ? raw : raw.slice(i);
    if (item.length === 0) continue;
    if (KNOWN_FLAGS.has(item)) meta.flags.add(item as ScanFlag);
    else log?.warn('unknown protocol flag', { flag: item });
  }
}

export function applyFrom(meta: ScanMeta, value: string, log?: ProtocolLog): void {
  const addr = parseEnvelopePath(value);
  if (addr === undefined) {
    log?.warn('bad From header', { value });
    meta.brokenEnvelope = true;
    return;
  }
  meta.from = addr;
}

/** Requests already told that their recipients past MAX_ENVELOPE_RCPT were dropped (one log line each). */
const rcptCapLogged = new WeakSet<ScanMeta>();

/**
 * Adds the recipients of one `Rcpt` value (split on commas for v2). At most MAX_ENVELOPE_RCPT
 * are kept; the rest are dropped with one log line. Returns false once the list is full.
 */
export function applyRcpt(meta: ScanMeta, value: string, split: boolean, log?: ProtocolLog): boolean {
  for (const item of split ? splitAddressList(value) : [value]) {
    if (meta.rcpt.length >= MAX_ENVELOPE_RCPT) {
      if (!rcptCapLogged.has(meta)) {
        rcptCapLogged.add(meta);
        log?.warn('recipients past the cap dropped', { kept: MAX_ENVELOPE_RCPT });
      }
      return false;
    }
    const addr = parseEnvelopePath(item);
    if (addr === undefined || addr === '') {
      log?.warn('bad Rcpt header', { value: item });
      meta.brokenEnvelope = true;
      continue;
    }
    meta.rcpt.push(addr);
  }
  return true;
}

export function applyIp(meta: ScanMeta, value: string, log?: ProtocolLog): void {
  const ip = parseClientIp(value);
  if (ip === undefined) {
    log?.warn('bad IP header', { value });
    meta.brokenEnvelope = true;
    return;
  }
  meta.ip = ip;
}

function stripBrackets(v: string): string {
  let t = v.trim();
  if (t.startsWith('<') && t.endsWith('>')) t = t.slice(1, -1);
  return t;
}

function parseNumber(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  return v.trim().length > 0 && Number.isFinite(n) ? n : undefined;
}

export function parseV2Headers(headers: RequestHeaders, log?: ProtocolLog): ScanMeta {
  const meta = emptyMeta();
  meta.requestHeaders = headers.map;
  for (const [name, value] of headers.raw) {
    // One switch on the lower-cased name; no per-line regexps.
    switch (name.toLowerCase()) {
      case 'ip':
        applyIp(meta, value, log);
        break;
      case 'from':
        applyFrom(meta, value, log);
        break;
      case 'rcpt':
        applyRcpt(meta, value, true, log);
        break;
      case 'helo':
        meta.helo = value;
        break;
      case 'hostname':
        meta.hostname = value;
        break;
      case 'user':
        meta.user = value;
        break;
      case 'deliver-to':
        meta.deliverTo = stripBrackets(value);
        break;
      case 'queue-id':
        meta.queueId = value;
        break;
      case 'mta-tag':
        meta.mtaTag = value;
        break;
      case 'mta-name':
        meta.mtaName = value;
        break;
      case 'settings-id':
        meta.settingsId = value.trim();
        break;
      case 'raw':
        meta.raw = value.trim().toLowerCase() === 'yes';
        break;
      case 'pass':
        if (value.trim().toLowerCase() === 'all') meta.pass = 'all';
        break;
      case 'url-format':
        if (value.trim().toLowerCase() === 'extended') meta.urlFormat = 'extended';
        break;
      case 'log': {
        const v = value.trim().toLowerCase();
        if (v === 'no' || v === 'false') meta.log = false;
        break;
      }
      case 'log-tag':
        meta.logTag = truncateUtf8(value, LOG_TAG_MAX_BYTES);
        break;
      case 'flags':
        addFlags(meta, value, log);
        break;
      case 'profile':
        meta.flags.add('profile');
        break;
      case 'milter':
        meta.flags.add('milter');
        break;
      case 'tls-cipher':
        (meta.tls ??= {}).cipher = value;
        break;
      case 'tls-version':
        (meta.tls ??= {}).version = value;
        break;
      case 'tls-cert-issuer':
        (meta.tls ??= {}).certIssuer = value;
        break;
      case 'filename':
        meta.filename = value;
        break;
      case 'mailer':
        meta.mailer = value;
        break;
      case 'user-agent':
        meta.userAgent = value;
        break;
      case 'subject':
        meta.subject = value;
        break;
    }
  }
  // Headers looked up by name after the walk take their first occurrence.
  const settings = headers.first('settings');
  if (settings !== undefined) {
    const parsed = parseSettingsValue(settings);
    if (parsed) meta.settings = parsed;
    else log?.warn('cannot parse Settings header, ignored', { value: settings.slice(0, 200) });
  }
  meta.maxScore = parseNumber(headers.first('maxscore'));
  meta.softScore = parseNumber(headers.first('softscore'));
  if (meta.maxScore === undefined) delete meta.maxScore;
  if (meta.softScore === undefined) delete meta.softScore;
  const ct = headers.first('content-type');
  if (ct !== undefined && meta.raw) meta.contentType = ct.trim();
  if (meta.flags.has('pass_all')) meta.pass = 'all';
  else if (meta.pass === 'all') meta.flags.add('pass_all');
  if (meta.flags.has('no_log')) meta.log = false;
  else if (!meta.log) meta.flags.add('no_log');
  if (meta.flags.has('ext_urls')) meta.urlFormat = 'extended';
  else if (meta.urlFormat === 'extended') meta.flags.add('ext_urls');
  if (meta.tls?.cipher !== undefined) meta.flags.add('ssl');
  return meta;
}

/** Log tags are cut to this many bytes (Rspamd's tag buffer), only when valid UTF-8. */
const LOG_TAG_MAX_BYTES = 31;

function truncateUtf8(s: string, max: number): string {
  const b = Buffer.from(s);
  if (b.length <= max) return s;
  let end = max;
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString();
}
