// R_MIXED_CHARSET: the mean badness of a part's words (badness.ts) over the threshold, or of the
// subject's; R_MIXED_CHARSET_URL: the summed badness of the host names of the message's links and
// addresses. Rspamd's chartable plugin, with its language detector replaced by a stop-word test.
import type { Task } from '../../plugin-api/index.js';
import { STOP_WORDS } from '../../rule-libs/bayes/stop-words.js';
import type { ChartableConfig } from './config.js';
import { asciiBadnessIn, wordBadness } from './badness.js';
import type { WordOptions } from './badness.js';

/** Characters of one part read: bounds the work on huge bodies. */
const MAX_PART_CHARS = 256 * 1024;
/** Words judged per part; the mean over them stands for the part. */
const MAX_PART_WORDS = 20_000;
/** Distinct hosts judged per message. */
const MAX_HOSTS = 256;
/** R_MIXED_CHARSET_URL's total is capped here (Rspamd: 2). */
const MAX_URL_BADNESS = 2;
/** A subject alone, in a message whose parts are clean, counts at most this much. */
const SUBJECT_ONLY_CAP = 0.25;
/**
 * Share of a text's words that are English stop words from which it is taken for English, a
 * language without accents; below it the text may be French, German, Spanish… and accented
 * letters are normal. Rspamd asks its language detector; English prose runs at 30–50 %.
 */
const ENGLISH_STOP_SHARE = 0.12;
/** Share of words with accents above which a text is not prose of an accented language (see writesAccents). */
const MAX_ACCENTED_WORD_SHARE = 0.5;

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/** What `\s` matches in a JavaScript pattern: ASCII and Unicode white space, the line separators and the BOM. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

function isAsciiAlnum(c: number): boolean {
  const lower = c | 0x20;
  return (lower >= 0x61 && lower <= 0x7a) || (c >= 0x30 && c <= 0x39);
}

/** Where the words of a text go: ASCII ones as a range of the text, others as strings. */
export interface WordVisitor {
  ascii(text: string, start: number, end: number): void;
  other(word: string): void;
}

/**
 * Whether the chunk text[start, end) is a link or an address, not words (Rspamd's tokeniser skips
 * them): an `@` or `/` in it, `www.` at its start or a dot and two or more ASCII letters at its end.
 * Read in place; a character beyond ASCII is never one of these letters.
 */
function isLinkish(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x40 || c === 0x2f) return true;
  }
  if (end - start >= 4 && (text.charCodeAt(start) | 0x20) === 0x77 && (text.charCodeAt(start + 1) | 0x20) === 0x77 && (text.charCodeAt(start + 2) | 0x20) === 0x77 && text.charCodeAt(start + 3) === 0x2e) return true;
  // A dot and two or more letters at the end.
  let letters = 0;
  let i = end - 1;
  for (; i >= start; i--) {
    const lower = text.charCodeAt(i) | 0x20;
    if (lower < 0x61 || lower > 0x7a) break;
    letters++;
  }
  return letters >= 2 && i >= start && text.charCodeAt(i) === 0x2e;
}

/**
 * The words of a text: its whitespace-separated chunks that are not links or addresses, cut into
 * runs of letters, marks and digits, at most MAX_PART_WORDS of them. Read in place, index by
 * index; an ASCII word is handed over as its range of the text, so the text's words are judged
 * without a string for each (splitting the text and matching each chunk made arrays of every
 * chunk and word, a seventh of all a scan allocated).
 */
export function readWords(text: string, visit: WordVisitor): void {
  const end = Math.min(text.length, MAX_PART_CHARS);
  let words = 0;
  let i = 0;
  while (i < end && words < MAX_PART_WORDS) {
    while (i < end && isSpace(text.charCodeAt(i))) i++;
    if (i >= end) break;
    const start = i;
    let ascii = true;
    let alnum = true;
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (isSpace(c)) break;
      if (c >= 0x80) ascii = false;
      else if (!isAsciiAlnum(c)) alnum = false;
    }
    // Letters and digits only: the chunk is one word, and cannot be a link (no @, / or dot).
    if (ascii && alnum) {
      visit.ascii(text, start, i);
      words++;
      continue;
    }
    if (isLinkish(text, start, i)) continue;
    if (!ascii) {
      for (const w of text.slice(start, i).match(WORD) ?? []) {
        visit.other(w);
        if (++words >= MAX_PART_WORDS) break;
      }
      continue;
    }
    // ASCII with punctuation: the runs of letters and digits between it.
    for (let j = start; j < i && words < MAX_PART_WORDS; ) {
      while (j < i && !isAsciiAlnum(text.charCodeAt(j))) j++;
      const w = j;
      while (j < i && isAsciiAlnum(text.charCodeAt(j))) j++;
      if (j > w) {
        visit.ascii(text, w, j);
        words++;
      }
    }
  }
}

/** Accented Latin letters (Latin-1 Supplement to Latin Extended-B, Latin Extended Additional). */
const ACCENTED = /[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]/u;

/** The longest stop word: a longer word is not looked up. */
const MAX_STOP_LEN = Math.max(...[...STOP_WORDS].map((w) => w.length));
/** Letters a letterCode holds exactly (5 bits each, within a double's 53). */
const MAX_CODE_LETTERS = 10;
/** A word of ASCII letters as a number, case folded, 5 bits a letter; -1 for any other character. */
function letterCode(text: string, start: number, end: number): number {
  let code = 0;
  for (let i = start; i < end; i++) {
    const lower = text.charCodeAt(i) | 0x20;
    if (lower < 0x61 || lower > 0x7a) return -1;
    code = code * 32 + (lower - 0x60);
  }
  return code;
}
/** The stop words of letters only, as letterCode gives them: a lookup without a lower-cased copy of the word. */
const STOP_CODES: ReadonlySet<number> = new Set(
  [...STOP_WORDS].filter((w) => /^[a-z]+$/.test(w) && w.length <= MAX_CODE_LETTERS).map((w) => letterCode(w, 0, w.length)),
);

function isAsciiStopWord(text: string, start: number, end: number): boolean {
  const len = end - start;
  if (len > MAX_STOP_LEN) return false;
  const code = len <= MAX_CODE_LETTERS ? letterCode(text, start, end) : -1;
  return code >= 0 ? STOP_CODES.has(code) : STOP_WORDS.has(text.slice(start, end).toLowerCase());
}

/**
 * A text's words summed up in one reading: how many, how many are English stop words or carry an
 * accented letter, the badness of the ASCII ones (the same in any language) and the others, whose
 * badness depends on whether the language writes accents (writesAccents).
 */
class TextWords implements WordVisitor {
  count = 0;
  stop = 0;
  accented = 0;
  asciiBadness = 0;
  readonly others: string[] = [];
  readonly #opts: WordOptions;

  constructor(maxWordLen: number) {
    this.#opts = { isUrl: false, lenientDiacritics: false, maxWordLen };
  }

  ascii(text: string, start: number, end: number): void {
    this.count++;
    if (isAsciiStopWord(text, start, end)) this.stop++;
    this.asciiBadness += asciiBadnessIn(text, start, end, this.#opts) ?? 0;
  }

  other(word: string): void {
    this.count++;
    if (STOP_WORDS.has(word.toLowerCase())) this.stop++;
    if (ACCENTED.test(word)) this.accented++;
    this.others.push(word);
  }

  /**
   * Whether the text reads as a language that writes accents, so accented letters are ordinary:
   * not English (few English stop words), and accents on a minority of words, as in French,
   * German or Spanish prose. 8-bit text decoded in the wrong charset has accents on nearly every
   * "word", and is exactly what the accent count is for.
   */
  writesAccents(): boolean {
    return this.count > 0 && this.stop / this.count < ENGLISH_STOP_SHARE && this.accented / this.count < MAX_ACCENTED_WORD_SHARE;
  }

  /** Mean badness of the words, at most 1, accents judged leniently or not. */
  meanBadness(lenientDiacritics: boolean): number {
    if (this.count === 0) return 0;
    let total = this.asciiBadness;
    const opts = { ...this.#opts, lenientDiacritics };
    for (const w of this.others) total += wordBadness(w, opts);
    return Math.min(1, total / this.count);
  }
}

/** The words of `text`, summed up. */
export function textWords(text: string, maxWordLen: number): TextWords {
  const words = new TextWords(maxWordLen);
  readWords(text, words);
  return words;
}

export function makeMixedCharsetCheck(cfg: ChartableConfig) {
  return (task: Task): void => {
    let partScore = 0;
    let lenient = false;
    for (const p of task.message.textParts) {
      const words = textWords(p.text, cfg.max_word_len);
      lenient = words.writesAccents();
      const score = words.meanBadness(lenient);
      if (score > cfg.threshold) partScore = Math.max(partScore, score);
    }
    if (partScore > 0) {
      task.insert('R_MIXED_CHARSET', partScore);
      return;
    }
    const subject = task.message.subject;
    if (!subject) return;
    // Without text parts there is no language to go by: be lenient, as Rspamd is.
    if (task.message.textParts.length === 0) lenient = true;
    const score = textWords(subject, cfg.max_word_len).meanBadness(lenient);
    if (score > cfg.threshold) task.insert('R_MIXED_CHARSET', Math.min(score, SUBJECT_ONLY_CAP), 'subject');
  };
}

export function makeMixedCharsetUrlCheck(cfg: ChartableConfig) {
  return (task: Task): void => {
    const seen = new Set<string>();
    let total = 0;
    const hosts: string[] = [];
    for (const u of task.message.urls) {
      // The Unicode form: the punycode one hides exactly what this looks for.
      const host = u.host;
      if (host === '' || seen.has(host)) continue;
      if (seen.size >= MAX_HOSTS) break;
      seen.add(host);
      // Host labels are words here; digits beside letters are ordinary in names.
      let b = 0;
      for (const label of host.split('.')) b += wordBadness(label, { isUrl: true, lenientDiacritics: true, maxWordLen: cfg.max_word_len });
      if (b > 0) hosts.push(host);
      total += b;
      if (total >= MAX_URL_BADNESS) break;
    }
    total = Math.min(total, MAX_URL_BADNESS);
    if (total > cfg.threshold) task.insert('R_MIXED_CHARSET_URL', Math.min(1, total / MAX_URL_BADNESS), hosts);
  };
}
