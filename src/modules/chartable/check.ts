// R_MIXED_CHARSET: the mean badness of a part's words (badness.ts) over the threshold, or of the
// subject's; R_MIXED_CHARSET_URL: the summed badness of the host names of the message's links and
// addresses. Rspamd's chartable plugin, with its language detector replaced by a stop-word test.
import type { Task } from '../../plugin-api/index.js';
import { STOP_WORDS } from '../../rule-libs/bayes/stop-words.js';
import type { ChartableConfig } from './config.js';
import { wordBadness } from './badness.js';
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

/** Whitespace-separated chunks that are links or addresses: not words (Rspamd's tokeniser skips them). */
const LINKISH = /[@/]|^www\.|\.[a-z]{2,}$/i;
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

/**
 * The words of a text: its whitespace-separated chunks that are not links or addresses, cut into
 * runs of letters, marks and digits. Read in place, index by index: splitting the text and
 * matching each chunk made arrays of every chunk and word, a seventh of all a scan allocated.
 */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  const end = Math.min(text.length, MAX_PART_CHARS);
  let i = 0;
  while (i < end && out.length < MAX_PART_WORDS) {
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
      out.push(text.slice(start, i));
      continue;
    }
    const chunk = text.slice(start, i);
    if (LINKISH.test(chunk)) continue;
    if (!ascii) {
      for (const w of chunk.match(WORD) ?? []) {
        out.push(w);
        if (out.length >= MAX_PART_WORDS) break;
      }
      continue;
    }
    // ASCII with punctuation: the runs of letters and digits between it.
    for (let j = 0; j < chunk.length && out.length < MAX_PART_WORDS; ) {
      while (j < chunk.length && !isAsciiAlnum(chunk.charCodeAt(j))) j++;
      const w = j;
      while (j < chunk.length && isAsciiAlnum(chunk.charCodeAt(j))) j++;
      if (j > w) out.push(chunk.slice(w, j));
    }
  }
  return out;
}

/** Accented Latin letters (Latin-1 Supplement to Latin Extended-B, Latin Extended Additional). */
const ACCENTED = /[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]/u;

/**
 * Whether the text reads as a language that writes accents, so accented letters are ordinary:
 * not English (few English stop words), and accents on a minority of words, as in French,
 * German or Spanish prose. 8-bit text decoded in the wrong charset has accents on nearly every
 * "word", and is exactly what the accent count is for.
 */
function writesAccents(words: string[]): boolean {
  if (words.length === 0) return false;
  let stop = 0;
  let accented = 0;
  for (const w of words) {
    if (STOP_WORDS.has(w.toLowerCase())) stop++;
    if (ACCENTED.test(w)) accented++;
  }
  return stop / words.length < ENGLISH_STOP_SHARE && accented / words.length < MAX_ACCENTED_WORD_SHARE;
}

/** Mean badness of `words`, at most 1. */
function meanBadness(words: string[], opts: WordOptions): number {
  if (words.length === 0) return 0;
  let total = 0;
  for (const w of words) total += wordBadness(w, opts);
  return Math.min(1, total / words.length);
}

export function makeMixedCharsetCheck(cfg: ChartableConfig) {
  return (task: Task): void => {
    let partScore = 0;
    let lenient = false;
    for (const p of task.message.textParts) {
      const words = wordsOf(p.text);
      lenient = writesAccents(words);
      const score = meanBadness(words, { isUrl: false, lenientDiacritics: lenient, maxWordLen: cfg.max_word_len });
      if (score > cfg.threshold) partScore = Math.max(partScore, score);
    }
    if (partScore > 0) {
      task.insert('R_MIXED_CHARSET', partScore);
      return;
    }
    const subject = task.message.subject;
    if (!subject) return;
    const words = wordsOf(subject);
    // Without text parts there is no language to go by: be lenient, as Rspamd is.
    if (task.message.textParts.length === 0) lenient = true;
    const score = meanBadness(words, { isUrl: false, lenientDiacritics: lenient, maxWordLen: cfg.max_word_len });
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
