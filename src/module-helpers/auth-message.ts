// What the DKIM, ARC and signing checks hand to mailauth. mailauth parses the whole header block
// itself and, per DKIM signature, re-reads every header field and hashes the body once per
// distinct canonicalization: 20 000 DKIM-Signature headers blocked a worker for ~50 s, thousands
// of ARC sets for most of a second, a block of 100 000 headers is walked per signature. So
// mailauth gets the message with at most MAX_HEADERS header fields and no ARC headers when the
// chain has more sets than RFC 8617 allows; to verify, only the first signatures (authInput), to
// sign or seal, all that are kept (signingInput). An ordinary message is handed over as it is,
// byte for byte.

import parseDkimHeaders from 'mailauth/lib/parse-dkim-headers.js';
import { MAX_HEADER_BLOCK_BYTES, MAX_HEADERS } from '../message/limits.js';
import type { Task } from '../plugin-api/index.js';

/**
 * DKIM signatures verified per message: Rspamd's dkim `max_sigs` default (DEFAULT_MAX_SIGS,
 * src/plugins/dkim_check.c). Each costs mailauth a walk of the header block, a public-key lookup
 * and a signature check; the rest are not verified (DKIM_SIGS_SKIPPED says so).
 */
export const DEFAULT_MAX_DKIM_SIGNATURES = 5;

/**
 * Distinct body canonicalizations (c= body part, hash of a=, l=) hashed per message. mailauth
 * canonicalizes and hashes the whole body once per distinct one (about 2 s of CPU for a 40 MB
 * body with relaxed canonicalization); five signatures of five kinds would cost five passes.
 * Honest mail has one, a re-signed list message two. Signatures of another kind are skipped.
 */
export const MAX_DKIM_BODY_HASHES = 2;

/**
 * ARC sets read per message: RFC 8617 §5.2 step 1, more than 50 sets make the chain fail. Each
 * set's seal covers every set before it, so verifying n sets canonicalizes n² headers.
 */
export const MAX_ARC_SETS = 50;

/** A DKIM signature not handed to mailauth because a timestamp of it is no usable time. */
export interface UnusableSignature {
  domain: string;
  selector: string;
  /** Why, for the symbol's option: `invalid timestamp t=99999999999999999`. */
  reason: string;
}

/** Largest |ms| a Date holds (ECMA-262 time value range); past it the Date is invalid. */
const MAX_DATE_MS = 8.64e15;

/**
 * Why the t= or x= tag of a DKIM-Signature or ARC field cannot be used, or undefined. mailauth
 * makes a Date of each numeric one and calls toISOString() on it, which throws RangeError for a
 * time outside the Date range (`t=99999999999999999`, `x=1e400`): the whole check would fail
 * instead of this signature. Read with mailauth's own tag parser, so both see the same value.
 */
export function unusableTimestamp(field: string, raw: string): string | undefined {
  // Header text here is the bytes as latin1; mailauth reads them as UTF-8, where EF BB BF is a
  // U+FEFF that Number() trims (fuzz finding mime #17401). Judge the field as both read it.
  const utf8 = /[\x80-\xff]/.test(raw) ? Buffer.from(raw, 'latin1').toString('utf8') : undefined;
  return timestampProblem(field, raw) ?? (utf8 === undefined ? undefined : timestampProblem(field, utf8));
}

function timestampProblem(field: string, raw: string): string | undefined {
  const tags = parseDkimHeaders(`${field}:${raw}`).parsed;
  for (const tag of ['t', 'x'] as const) {
    const v = tags[tag];
    if (typeof v !== 'object' || v === null) continue;
    // As mailauth reads it: any value Number() takes, so a numeric string counts too, blanks
    // around it included (Number trims U+FEFF and the other JavaScript white space).
    const n = Number(v.value);
    if (Number.isNaN(n)) continue;
    const ms = n * 1000;
    if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) return `invalid timestamp ${tag}=${writtenTag(raw, tag) ?? String(v.value)}`;
  }
  return undefined;
}

/** Longest tag text quoted in a reason: the value is the sender's and lands in a symbol option. */
const MAX_QUOTED_TAG = 32;

/** The value of `tag` as written in the field (blanks dropped, cut to MAX_QUOTED_TAG), if found. */
function writtenTag(raw: string, tag: string): string | undefined {
  const m = new RegExp(`(?:^|;)\\s*${tag}\\s*=([^;]*)`).exec(raw);
  if (!m) return undefined;
  const v = m[1]!.replace(/\s+/g, '');
  return v.length > MAX_QUOTED_TAG ? `${v.slice(0, MAX_QUOTED_TAG)}…` : v;
}

/** d= and s= of a signature as mailauth reads them ('' when missing). */
function signer(field: string, raw: string): { domain: string; selector: string } {
  const tags = parseDkimHeaders(`${field}:${raw}`).parsed;
  const text = (t: string): string => {
    const v = tags[t];
    return typeof v === 'object' ? String(v.value) : '';
  };
  return { domain: text('d'), selector: text('s') };
}

export interface AuthInput {
  /** The bytes for mailauth: the scanned message itself, or a copy without what the caps drop. */
  raw: Buffer;
  /** DKIM-Signature fields of the message (as far as its parse read). */
  signatures: number;
  /** Those handed to mailauth. */
  signaturesKept: number;
  /** Of the dropped ones, those dropped for a body canonicalization past MAX_DKIM_BODY_HASHES. */
  signaturesOtherBody: number;
  /** Signatures not verified because a timestamp of theirs is no usable time (counted in max_sigs). */
  signaturesUnusable: UnusableSignature[];
  /** ARC sets: the most ARC-Seal, ARC-Message-Signature or ARC-Authentication-Results fields. */
  arcSets: number;
  /** arcSets > MAX_ARC_SETS, or arcUnusable: no ARC field was handed to mailauth. */
  arcDropped: boolean;
  /** Why an ARC field is unusable (`ARC-Seal i=1: invalid timestamp t=…`): the chain is invalid. */
  arcUnusable?: string;
  /** Header fields dropped past MAX_HEADERS. */
  headersDropped: boolean;
}

const CACHE_KEY = 'auth:input';
const SIGNING_CACHE_KEY = 'auth:signing-input';
const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const TAB = 0x09;
const COLON = 0x3a;

/** `bodyCanon:hash:l` of a DKIM-Signature value, the key mailauth hashes the body under. */
export function bodyHashKey(value: string): string {
  const tags = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  const body = (tags.get('c') ?? '').split('/')[1] || 'simple';
  const hash = (tags.get('a') ?? '').split('-').pop() ?? '';
  return `${body.toLowerCase()}:${hash.toLowerCase()}:${tags.get('l') ?? ''}`;
}

/**
 * Which DKIM-Signature fields (by their order among them) are verified, and those that cannot be
 * (a timestamp that is no time): these count in max_sigs too, so a flood of them costs one parse each at most max_sigs times.
 */
function pickSignatures(values: readonly string[], maxSigs: number): { keep: Set<number>; otherBody: number; unusable: UnusableSignature[] } {
  const keep = new Set<number>();
  const bodies = new Set<string>();
  const unusable: UnusableSignature[] = [];
  let otherBody = 0;
  for (let i = 0; i < values.length && keep.size + unusable.length < maxSigs; i++) {
    const reason = unusableTimestamp('DKIM-Signature', values[i]!);
    if (reason !== undefined) {
      unusable.push({ ...signer('DKIM-Signature', values[i]!), reason });
      continue;
    }
    const key = bodyHashKey(values[i]!);
    if (!bodies.has(key)) {
      if (bodies.size >= MAX_DKIM_BODY_HASHES) {
        otherBody++;
        continue;
      }
      bodies.add(key);
    }
    keep.add(i);
  }
  return { keep, otherBody, unusable };
}

/** The first ARC-Seal or ARC-Message-Signature whose timestamp is no usable time, said as why. */
function unusableArc(task: Task): string | undefined {
  for (const field of ['ARC-Seal', 'ARC-Message-Signature']) {
    for (const h of task.message.headers.get(field.toLowerCase())) {
      const reason = unusableTimestamp(field, h.raw);
      if (reason === undefined) continue;
      const i = /(?:^|;)\s*i\s*=\s*(\d{1,3})\b/.exec(h.raw)?.[1];
      return `${field}${i !== undefined ? ` i=${i}` : ''}: ${reason}`;
    }
  }
  return undefined;
}

/**
 * The message for mailauth under the caps, worked out once per task. `maxSigs`: the dkim
 * module's `max_sigs` (the first caller's value counts; the signing and ARC checks pass the default).
 */
export function authInput(task: Task, maxSigs = DEFAULT_MAX_DKIM_SIGNATURES): AuthInput {
  const cached = task.cache.get(CACHE_KEY) as AuthInput | undefined;
  if (cached) return cached;
  const msg = task.message;
  const h = msg.headers;
  const sigValues = h.get('dkim-signature').map((x) => x.raw);
  const arcSets = Math.max(h.get('arc-seal').length, h.get('arc-message-signature').length, h.get('arc-authentication-results').length);
  const { keep, otherBody, unusable } = pickSignatures(sigValues, maxSigs);
  // Past MAX_ARC_SETS the fields are dropped unread; within it each is read once.
  const arcUnusable = arcSets > 0 && arcSets <= MAX_ARC_SETS ? unusableArc(task) : undefined;
  const input: AuthInput = {
    raw: task.raw,
    signatures: sigValues.length,
    signaturesKept: keep.size,
    signaturesOtherBody: otherBody,
    signaturesUnusable: unusable,
    arcSets,
    arcDropped: arcSets > MAX_ARC_SETS || arcUnusable !== undefined,
    headersDropped: msg.anomalies.has('too_many_headers') || msg.anomalies.has('header_too_long'),
  };
  if (arcUnusable !== undefined) input.arcUnusable = arcUnusable;
  if (keep.size < sigValues.length || input.arcDropped || input.headersDropped) input.raw = filtered(msg.raw, msg.bodyOffset, msg.newline, keep, input.arcDropped);
  task.cache.set(CACHE_KEY, input);
  return input;
}

/**
 * The message for mailauth to sign or seal: like authInput's, but every DKIM-Signature field
 * within the kept ones stays (a signature or ARC-Message-Signature made here may cover them, and
 * the message the MTA delivers has them all); one signature costs one walk of the block.
 */
export function signingInput(task: Task): Buffer {
  const cached = task.cache.get(SIGNING_CACHE_KEY) as Buffer | undefined;
  if (cached) return cached;
  const verify = authInput(task);
  let raw = task.raw;
  if (verify.arcDropped || verify.headersDropped) {
    const msg = task.message;
    raw = filtered(msg.raw, msg.bodyOffset, msg.newline, null, verify.arcDropped);
  }
  task.cache.set(SIGNING_CACHE_KEY, raw);
  return raw;
}

/**
 * A copy of `raw` whose header block keeps at most MAX_HEADERS fields read from at most
 * MAX_HEADER_BLOCK_BYTES, the DKIM-Signature fields in `keep` only (all of them when null), and
 * no ARC field when `dropArc`; the body from `bodyOffset` on.
 */
function filtered(raw: Buffer, bodyOffset: number, newline: string, keep: ReadonlySet<number> | null, dropArc: boolean): Buffer {
  const pieces: Buffer[] = [];
  const end = Math.min(bodyOffset, raw.length, MAX_HEADER_BLOCK_BYTES);
  let fields = 0;
  let sigIndex = 0;
  let pos = 0;
  let blank = false;
  while (pos < end && fields < MAX_HEADERS) {
    // One field: its first line and the continuation lines after it.
    let next = lineEnd(raw, pos, end);
    if (next - pos <= 2 && (raw[pos] === LF || (raw[pos] === CR && raw[pos + 1] === LF))) {
      blank = true;
      break;
    }
    while (next < end && (raw[next] === SP || raw[next] === TAB)) next = lineEnd(raw, next, end);
    const name = fieldName(raw, pos, next);
    let take = true;
    if (name === 'dkim-signature') take = keep === null || keep.has(sigIndex++);
    else if (dropArc && name.startsWith('arc-')) take = false;
    if (take) {
      pieces.push(raw.subarray(pos, next));
      fields++;
    }
    pos = next;
  }
  // The blank line that ends the block, then the body as the message's parse found it.
  if (!blank) pieces.push(Buffer.from(newline));
  pieces.push(raw.subarray(blank ? pos : bodyOffset));
  return Buffer.concat(pieces);
}

// Both searches stay inside [pos, end): a search of the whole buffer from each of 2 048 lines
// without the byte would each run to the end of a 50 MB body.

/** Offset just past the line that starts at `pos` (its LF included), at most `end`. */
function lineEnd(raw: Buffer, pos: number, end: number): number {
  const lf = raw.subarray(pos, end).indexOf(LF);
  return lf < 0 ? end : pos + lf + 1;
}

/** Lower-cased name of the field at [start, end): up to its colon, blanks before it dropped. */
function fieldName(raw: Buffer, start: number, end: number): string {
  const at = raw.subarray(start, end).indexOf(COLON);
  if (at < 0) return '';
  const colon = start + at;
  let e = colon;
  while (e > start && (raw[e - 1] === SP || raw[e - 1] === TAB)) e--;
  return raw.toString('latin1', start, e).toLowerCase();
}
