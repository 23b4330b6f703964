// The message a spamc PROCESS reply returns (and the header part a HEADERS reply returns): the
// scanned message with the verdict applied the way a milter would apply it (the result's milter
// header edits, a rewritten Subject, DKIM signatures), plus SpamAssassin's X-Spam-Flag,
// X-Spam-Level and X-Spam-Status headers, which procmail and sieve recipes written for spamc test.
// A pure function of the message and the scan result object.

import { isSpamResult, jsonObject, num, own, symbolEntries, type JsonObject } from './result-json.js';

interface Field {
  /** Lower-case name. */
  lname: string;
  /** The whole field with its continuation lines and line endings, as in the message. */
  bytes: Buffer;
}

interface SplitMessage {
  /** An mbox `From ` line before the headers, kept in place. */
  prefix: Buffer;
  fields: Field[];
  /** The blank line ending the headers; absent when the message has none. */
  separator?: Buffer;
  body: Buffer;
  /** Newline of the message, used for the lines we add. */
  nl: string;
}

const EMPTY = Buffer.alloc(0);
/** A field name (printable ASCII but the colon) and its colon, at the start of a line. */
const FIELD_START = /^[\x21-\x39\x3b-\x7e]+:/;
/** Bytes of a line examined for a field name; longer names are not header lines anyone wrote. */
const MAX_NAME_PEEK = 1000;
/**
 * Header edits applied from one result: a result from another server (through the proxy) is read,
 * not trusted, and this bounds the work one reply can ask for. Rspamd's modules emit a few dozen.
 */
const MAX_HEADER_EDITS = 1000;
/**
 * Header fields parsed one by one for editing. A message may be max_message of header lines; one
 * object per line would cost far more than the message, so the lines past this are kept as
 * they came, in one piece (no edit reaches into it; our headers still end the header block).
 */
const MAX_HEADER_FIELDS = 10_000;
/** Longest header line we write before folding, as RFC 5322 recommends (78). */
const FOLD_WIDTH = 78;
/** SpamAssassin caps X-Spam-Level at 50 stars. */
const MAX_LEVEL_STARS = 50;
/** The headers this reply owns: copies already in the message are removed (a sender could forge them). */
const SA_HEADERS = ['X-Spam-Flag', 'X-Spam-Level', 'X-Spam-Status'];

/** Start of the first blank line at or after `pos` (a line start), or the message's end. */
function headerEnd(msg: Buffer, pos: number): number {
  const from = Math.max(0, pos - 1);
  const ends = [msg.indexOf('\n\n', from), msg.indexOf('\n\r\n', from)].filter((i) => i >= 0);
  return ends.length > 0 ? Math.max(pos, Math.min(...ends) + 1) : msg.length;
}

function isBlankLine(line: Buffer): boolean {
  return (line.length === 1 && line[0] === 10) || (line.length === 2 && line[0] === 13 && line[1] === 10);
}

/** Header fields up to the first blank line. The loop takes one line per turn: max_message bounds it. */
function splitMessage(msg: Buffer): SplitMessage {
  const firstNl = msg.indexOf(10);
  const nl = firstNl > 0 && msg[firstNl - 1] === 13 ? '\r\n' : '\n';
  const out: SplitMessage = { prefix: EMPTY, fields: [], body: EMPTY, nl };
  const parts: Buffer[][] = [];
  let pos = 0;
  while (pos < msg.length) {
    const end = msg.indexOf(10, pos);
    const next = end < 0 ? msg.length : end + 1;
    const line = msg.subarray(pos, next);
    if (isBlankLine(line)) {
      out.separator = line;
      out.body = msg.subarray(next);
      break;
    }
    const c0 = line[0];
    if (out.fields.length >= MAX_HEADER_FIELDS) {
      const end = headerEnd(msg, pos);
      out.fields.push({ lname: '', bytes: EMPTY });
      parts.push([msg.subarray(pos, end)]);
      pos = end;
      continue;
    }
    if (pos === 0 && line.subarray(0, 5).toString('latin1') === 'From ') {
      out.prefix = line;
    } else if ((c0 === 32 || c0 === 9) && parts.length > 0) {
      parts[parts.length - 1]!.push(line);
    } else {
      const m = FIELD_START.exec(line.subarray(0, MAX_NAME_PEEK).toString('latin1'));
      if (!m) {
        // Not a header line: the headers (if any) end here, without a blank line.
        out.body = msg.subarray(pos);
        break;
      }
      out.fields.push({ lname: m[0].slice(0, -1).toLowerCase(), bytes: EMPTY });
      parts.push([line]);
    }
    pos = next;
  }
  out.fields.forEach((f, i) => (f.bytes = Buffer.concat(parts[i]!)));
  return out;
}

/** A value on as many lines as it needs, every line after the first a continuation (one field, never more). */
function foldValue(value: string, nl: string): string {
  const lines = value.split(/\r\n|\r|\n/).filter((l) => l.trim().length > 0);
  return lines.map((l, i) => (i === 0 || l[0] === ' ' || l[0] === '\t' ? l : `\t${l}`)).join(nl);
}

/** `a=1 b=2 tests=A,B,C` folded at spaces and after commas so no line passes FOLD_WIDTH. */
function foldList(name: string, value: string, nl: string): string {
  const pieces: Array<[string, string]> = [];
  for (const word of value.split(' ')) {
    const commaParts = word.split(/(?<=,)/);
    commaParts.forEach((p, i) => pieces.push([i === 0 && pieces.length > 0 ? ' ' : '', p]));
  }
  let out = '';
  let width = name.length + 2;
  for (const [sep, piece] of pieces) {
    if (out.length > 0 && width + sep.length + piece.length > FOLD_WIDTH) {
      out += `${nl}\t`;
      width = 8;
    } else {
      out += sep;
      width += sep.length;
    }
    out += piece;
    width += piece.length;
  }
  return out;
}

function field(name: string, value: string, nl: string): Field {
  return { lname: name.toLowerCase(), bytes: Buffer.from(`${name}: ${value}${nl}`, 'utf8') };
}

/** A header name we may write: printable ASCII without colon, of a sane length. */
function validName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && /^[\x21-\x39\x3b-\x7e]+$/.test(name);
}

class HeaderEditor {
  readonly fields: Field[];
  readonly #nl: string;
  #edits = 0;

  constructor(fields: Field[], nl: string) {
    this.fields = fields;
    this.#nl = nl;
  }

  /** False once the edit budget is spent. */
  #spend(): boolean {
    return ++this.#edits <= MAX_HEADER_EDITS;
  }

  #positions(lname: string): number[] {
    const at: number[] = [];
    this.fields.forEach((f, i) => f.lname === lname && at.push(i));
    return at;
  }

  /** milter `remove_headers` semantics: 0 all, N the N-th, -N the N-th from the end. */
  remove(name: string, n: number): void {
    if (!this.#spend() || !Number.isInteger(n)) return;
    const at = this.#positions(name.toLowerCase());
    let drop: number[] = [];
    if (n === 0) drop = at;
    else if (n > 0 && n <= at.length) drop = [at[n - 1]!];
    else if (n < 0 && -n <= at.length) drop = [at[at.length + n]!];
    for (const i of drop.reverse()) this.fields.splice(i, 1);
  }

  /**
   * milter `add_headers` semantics: no order or -1 appends, N >= 0 inserts before the
   * N-th field (0: at the top), -N counts from the end. A milter's +2 for the MTA's own Received
   * does not apply: this message has all its headers here.
   */
  insert(name: string, value: string, order: number | undefined): void {
    if (!this.#spend() || !validName(name)) return;
    const f = field(name, foldValue(value, this.#nl), this.#nl);
    const len = this.fields.length;
    if (order === undefined || order === -1 || !Number.isInteger(order)) this.fields.push(f);
    else if (order >= 0) this.fields.splice(Math.min(order, len), 0, f);
    else this.fields.splice(Math.max(0, len + order + 1), 0, f);
  }

  /** Replaces the first field of that name in place (or appends one). */
  set(name: string, value: string): void {
    if (!this.#spend() || !validName(name)) return;
    const f = field(name, foldValue(value, this.#nl), this.#nl);
    const i = this.fields.findIndex((x) => x.lname === f.lname);
    if (i >= 0) this.fields[i] = f;
    else this.fields.push(f);
  }

  has(lname: string, value: string): boolean {
    const want = value.replace(/\s+/g, '');
    return this.fields.some((f) => f.lname === lname && f.bytes.toString('utf8').slice(lname.length + 1).replace(/\s+/g, '') === want);
  }
}

/** The milter block's header edits, in Rspamd's order: removals, then additions. Returns the names added. */
function applyMilterBlock(ed: HeaderEditor, r: JsonObject): Set<string> {
  const added = new Set<string>();
  const block = jsonObject(own(r, 'milter')) ?? jsonObject(own(r, 'rmilter'));
  if (!block) return added;
  const removes = jsonObject(own(block, 'remove_headers'));
  if (removes) {
    for (const [name, spec] of Object.entries(removes)) {
      for (const n of Array.isArray(spec) ? spec : [spec]) if (typeof n === 'number') ed.remove(name, n);
    }
  }
  const adds = jsonObject(own(block, 'add_headers'));
  if (adds) {
    for (const [name, spec] of Object.entries(adds)) {
      for (const one of Array.isArray(spec) ? spec : [spec]) {
        if (typeof one === 'string') {
          ed.insert(name, one, undefined);
          added.add(name.toLowerCase());
          continue;
        }
        const o = jsonObject(one);
        const value = o ? own(o, 'value') : undefined;
        if (!o || typeof value !== 'string') continue;
        const order = own(o, 'order') ?? own(o, 'index');
        ed.insert(name, value, typeof order === 'number' ? order : undefined);
        added.add(name.toLowerCase());
      }
    }
  }
  return added;
}

function editHeaders(msg: Buffer, r: JsonObject): SplitMessage {
  const split = splitMessage(msg);
  const { nl } = split;
  const ed = new HeaderEditor(split.fields, nl);
  for (const name of SA_HEADERS) ed.remove(name, 0);
  const milterAdded = applyMilterBlock(ed, r);
  const subject = own(r, 'subject');
  if (own(r, 'action') === 'rewrite subject' && typeof subject === 'string') ed.set('Subject', subject);
  const dkim = own(r, 'dkim-signature');
  const sigs = (typeof dkim === 'string' ? [dkim] : Array.isArray(dkim) ? dkim : []).filter((s): s is string => typeof s === 'string');
  // On top, in order; a message the scanner rewrote may carry them already.
  sigs.filter((s) => !ed.has('dkim-signature', s)).forEach((s, i) => ed.insert('DKIM-Signature', s, i));
  const spam = isSpamResult(r);
  const score = num(own(r, 'score'));
  const tests = symbolEntries(r).map(([name]) => name).filter(validName);
  const status = `${spam ? 'Yes' : 'No'}, score=${score.toFixed(2)} required=${num(own(r, 'required_score')).toFixed(2)} tests=${tests.length > 0 ? tests.join(',') : 'none'}`;
  const action = own(r, 'action');
  // One token, like SpamAssassin's key=value pairs: `action=add_header`.
  const act = typeof action === 'string' && action.length > 0 ? ` action=${action.replace(/[^\x21-\x7e]+/g, '_')}` : '';
  const ours: Array<[string, string | undefined]> = [
    ['X-Spam-Flag', spam ? 'YES' : undefined],
    ['X-Spam-Level', score >= 1 ? '*'.repeat(Math.floor(Math.min(score, MAX_LEVEL_STARS))) : undefined],
    ['X-Spam-Status', foldList('X-Spam-Status', status + act, nl)],
  ];
  for (const [name, value] of ours) {
    if (value !== undefined && !milterAdded.has(name.toLowerCase())) split.fields.push(field(name, value, nl));
  }
  return split;
}

function headerBytes(split: SplitMessage): Buffer[] {
  const out: Buffer[] = [split.prefix];
  for (const f of split.fields) {
    out.push(f.bytes);
    // The last field of a message that ends inside its headers has no newline yet.
    if (f.bytes[f.bytes.length - 1] !== 10) out.push(Buffer.from(split.nl, 'latin1'));
  }
  return out;
}

/** PROCESS: the whole message with the verdict's headers. */
export function legacyMessage(msg: Buffer, r: JsonObject): Buffer {
  const split = editHeaders(msg, r);
  return Buffer.concat([...headerBytes(split), split.separator ?? Buffer.from(split.nl, 'latin1'), split.body]);
}

/** HEADERS: the header part with its blank line (spamc appends the body it sent). */
export function legacyHeaders(msg: Buffer, r: JsonObject): Buffer {
  const split = editHeaders(msg, r);
  return Buffer.concat([...headerBytes(split), split.separator ?? Buffer.from(split.nl, 'latin1')]);
}
