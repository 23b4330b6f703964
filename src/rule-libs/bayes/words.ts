// Text → normalised words for the Bayes tokeniser: URLs and e-mail
// addresses become single exception words, the rest is NFKC-normalised, lower-cased and split
// on word boundaries (a regexp approximating UAX#29, with Intl.Segmenter for scripts written
// without spaces), punctuation inside words dropped, stop words removed, and long texts sampled.
import { getDomain } from 'tldts';
import { STOP_WORDS } from './stop-words.js';

/** Words before sampling starts (Rspamd's `words_decay`): keeps long texts from drowning short ones. */
export const WORDS_DECAY = 600;
/** Words kept per message at most: bounds CPU and store round-trip size on huge mails. */
export const MAX_WORDS_PER_MESSAGE = 100_000;
/** Longer words are skipped: base64 debris and hashes, never seen twice. */
export const MAX_WORD_LENGTH = 40;

/** Exception word for an e-mail address or a URL without a registrable domain. */
export const EXCEPTION_WORD = '!!EX!!';

// The address alternative starts only at the first word boundary of a run of [\w.+-]: from any
// later one in the run it would scan to the same run end and fail the same way, and trying every
// boundary was quadratic (300 KB of "aa." took 83 s to tokenise). `(?<!\w[.+-]*)` says no word
// character comes earlier in the run. The one difference: right after an address that ends inside
// a run (`a@b.c+@d.e`), the rest (`+@d.e`) is no longer taken for a second address.
const URL_OR_EMAIL = /\b(?:(?:https?|ftp):\/\/[^\s<>"'()]+|www\.[^\s<>"'()]+|(?<!\w[.+-]*)[\w.+-]+@[\w-]+(?:\.[\w-]+)+)/gi;
// A word starts with a letter, digit or connector and may contain apostrophes or dots between
// word characters ("don't", "3.14"), as UAX#29's MidLetter/MidNum rules do.
const WORD = /[\p{L}\p{N}\p{M}_]+(?:['.\u2019][\p{L}\p{N}\p{M}_]+)*/gu;
// The same words in a text of ASCII only, where the classes above are exactly these characters:
// a pattern without Unicode properties, and no script check per word.
const ASCII_WORD = /[a-z0-9_]+(?:['.][a-z0-9_]+)*/gi;
const INNER_PUNCT = /['.\u2019]/g;
const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const NON_ASCII = /[^\x00-\x7f]/;
// Invisible code points (zero-width spaces and joiners, soft hyphen, BOM) that spammers put
// inside words to break them; dropped before splitting.
const INVISIBLE = /[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]/g;

/** Whether splitWords would flag `text` as bad Unicode, without splitting it. */
export function hasInvisible(text: string): boolean {
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.test(text);
  INVISIBLE.lastIndex = 0;
  return found;
}

let segmenter: Intl.Segmenter | undefined;

/** Collects the words of one stream, applying the per-message budget and long-text sampling. */
export class WordSink {
  readonly words: string[] = [];
  /** Words seen in this stream, kept or not: drives the sampling rate. */
  #seen = 0;
  #lcg = 0x2545f491;
  /** Set when a word contained invisible code points or needed Unicode normalisation. */
  badUnicode = false;
  readonly #budget: { left: number };

  constructor(budget: { left: number }) {
    this.#budget = budget;
  }

  push(w: string): void {
    if (this.#budget.left <= 0) return;
    this.#seen++;
    if (this.#seen > WORDS_DECAY) {
      // Keep about WORDS_DECAY / seen of the later words, decided by a deterministic LCG so the
      // same message always yields the same tokens (the learn cache depends on it).
      this.#lcg = (Math.imul(this.#lcg, 1664525) + 1013904223) >>> 0;
      if (this.#lcg / 0x1_0000_0000 > WORDS_DECAY / this.#seen) return;
    }
    this.#budget.left--;
    this.words.push(w);
  }
}

function exceptionWord(match: string): string {
  if (!match.includes('://') && !match.toLowerCase().startsWith('www.')) return EXCEPTION_WORD;
  const host = match.replace(/^[a-z]+:\/\//i, '').split(/[/?#:]/, 1)[0] ?? '';
  const domain = getDomain(host.toLowerCase());
  return domain ?? EXCEPTION_WORD;
}

function pushSegment(text: string, sink: WordSink, ascii: boolean): void {
  const word = ascii ? ASCII_WORD : WORD;
  word.lastIndex = 0;
  for (let m = word.exec(text); m !== null; m = word.exec(text)) {
    let w = m[0];
    if (!ascii && NO_SPACE_SCRIPT.test(w)) {
      segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
      for (const seg of segmenter.segment(w)) {
        if (seg.isWordLike) addWord(seg.segment, sink);
      }
      continue;
    }
    if (w.length > 1 && (w.includes('.') || w.includes("'") || w.includes('\u2019'))) w = w.replace(INNER_PUNCT, '');
    addWord(w, sink);
  }
}

function addWord(w: string, sink: WordSink): void {
  if (w.length === 0 || w.length > MAX_WORD_LENGTH) return;
  if (STOP_WORDS.has(w)) return;
  sink.push(w);
}

/** Split one text into normalised words, appended to `sink`. */
export function splitWords(text: string, sink: WordSink): void {
  const ascii = !NON_ASCII.test(text);
  if (!ascii) {
    const cleaned = text.replace(INVISIBLE, '');
    if (cleaned.length !== text.length) sink.badUnicode = true;
    text = cleaned.normalize('NFKC');
  }
  text = text.toLowerCase();
  URL_OR_EMAIL.lastIndex = 0;
  let last = 0;
  for (let m = URL_OR_EMAIL.exec(text); m !== null; m = URL_OR_EMAIL.exec(text)) {
    if (m.index > last) pushSegment(text.slice(last, m.index), sink, ascii);
    sink.push(exceptionWord(m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) pushSegment(last === 0 ? text : text.slice(last), sink, ascii);
}
