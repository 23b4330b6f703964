// How suspicious one word's mix of characters is, after Rspamd's chartable plugin: a letter that
// passes for Latin inside a Latin word (`pаypal` with a Cyrillic а) costs 1 over the length of
// the run it interrupts, a letter right after a digit in a word that had letters (`v1agra` style
// substitutions) a quarter, and each accented Latin letter 1 where the language is not one that
// writes accents (then half of each one after the first). Pure, no I/O.

/** Scripts with letters that pass for Latin ones (а/a, о/o, р/p, ο/o, ս/u, Ꭺ/A …). */
const LOOKALIKE_SCRIPT = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}\p{Script=Coptic}]/u;
const LATIN = /\p{Script=Latin}/u;
const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;
/** Combining marks, which stack accents onto letters. */
const MARK = /\p{Mn}/u;
const ASCII_LETTER = /^[A-Za-z]$/;
const HEX_LETTER = /^[A-Fa-f]$/;

/** Most a single word adds to its part's total. */
const MAX_WORD_BADNESS = 4;
/** A letter straight after a digit. */
const DIGIT_LETTER_BADNESS = 0.25;

const enum Kind { Latin, Lookalike, Other }
const enum State { Start, Alpha, Digit, Unknown }

/** Latin letters, look-alikes of them, or letters of another script. */
function kindOf(ch: string, cp: number): Kind {
  if (cp < 0x80) return Kind.Latin;
  // Fullwidth and mathematical letters fold to ASCII: dressed-up Latin, look-alikes by design.
  const folded = ch.normalize('NFKC');
  if (folded.length === 1 && ASCII_LETTER.test(folded)) return Kind.Lookalike;
  if (LATIN.test(ch)) return Kind.Latin;
  return LOOKALIKE_SCRIPT.test(ch) ? Kind.Lookalike : Kind.Other;
}

/** An accented Latin letter (beyond ASCII). Combining marks are counted by the caller. */
function isDiacritic(cp: number): boolean {
  if (cp < 0x80) return false;
  // Latin-1 Supplement through Latin Extended-B, and Latin Extended Additional.
  return (cp >= 0xc0 && cp <= 0x24f && cp !== 0xd7 && cp !== 0xf7) || (cp >= 0x1e00 && cp <= 0x1eff);
}

export interface WordOptions {
  /** A host name: digits next to letters are normal there. */
  isUrl: boolean;
  /** The text's language writes accents: count them leniently. */
  lenientDiacritics: boolean;
  maxWordLen: number;
}

/**
 * The badness of the ASCII word `text[start, end)`, or undefined when it is not ASCII. Most words
 * of most mail are, and in ASCII only one rule can apply (a non-hex letter right after a digit,
 * once the word has had a letter): the same figure as wordBadnessByCodePoint, without splitting
 * the word into code points (a fifth of all the bytes a scan allocated), nor cutting it out of
 * its text.
 */
export function asciiBadnessIn(text: string, start: number, end: number, opts: WordOptions): number | undefined {
  let badness = 0;
  let seenLetter = false;
  let afterDigit = false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return undefined;
    const lower = c | 0x20;
    if (lower >= 0x61 && lower <= 0x7a) {
      // `lower > 0x66`: not a hex digit (a–f).
      if (afterDigit && seenLetter && lower > 0x66) badness += DIGIT_LETTER_BADNESS;
      seenLetter = true;
      afterDigit = false;
    } else {
      afterDigit = c >= 0x30 && c <= 0x39;
    }
  }
  if (end - start > opts.maxWordLen || opts.isUrl) return 0;
  return Math.min(badness, MAX_WORD_BADNESS);
}

/** The badness of one word, 0…MAX_WORD_BADNESS. */
export function wordBadness(word: string, opts: WordOptions): number {
  return asciiBadnessIn(word, 0, word.length, opts) ?? wordBadnessByCodePoint(word, opts);
}

/** wordBadness of any word, code point by code point (exported for the test that holds the ASCII path to it). */
export function wordBadnessByCodePoint(word: string, opts: WordOptions): number {
  const chars = Array.from(word);
  if (chars.length > opts.maxWordLen) return 0;
  let badness = 0;
  let diacritics = 0;
  let state = State.Start;
  let seenLetter = false;
  // The run of letters of one kind the current letter continues (Latin or look-alike).
  let runKind = Kind.Other;
  let run = 0;
  // The current run is the word's first run of letters.
  let leading = true;
  for (const ch of chars) {
    const cp = ch.codePointAt(0)!;
    if (isDiacritic(cp)) diacritics++;
    else if (cp >= 0x300 && MARK.test(ch)) {
      // A combining accent on a Latin letter; Thai, Devanagari… write their vowels as marks.
      if (state === State.Alpha && runKind === Kind.Latin) diacritics++;
      continue;
    }
    if (LETTER.test(ch)) {
      const kind = kindOf(ch, cp);
      if (state === State.Digit && seenLetter && !opts.isUrl) {
        // `cp < 0x80`: an ASCII letter after a digit, unless it could be a hex digit.
        if (cp < 0x80 ? !HEX_LETTER.test(ch) : kind !== Kind.Latin) badness += DIGIT_LETTER_BADNESS;
      }
      if (state === State.Alpha && run > 0) {
        // Into a look-alike from Latin; back to Latin only out of a word's leading look-alikes
        // (one substitution is one switch, wherever it sits).
        const switched = (runKind === Kind.Latin && kind === Kind.Lookalike) || (leading && runKind === Kind.Lookalike && kind === Kind.Latin);
        if (kind !== runKind) leading = false;
        if (switched) {
          badness += 1 / run;
          runKind = kind;
          run = 1;
        } else if (kind === runKind) {
          run++;
        } else {
          runKind = kind;
          run = 1;
        }
      } else {
        leading = !seenLetter;
        runKind = kind;
        run = 1;
      }
      seenLetter = true;
      state = State.Alpha;
    } else if (DIGIT.test(ch)) {
      state = State.Digit;
      run = 0;
    } else {
      state = State.Unknown;
      run = 0;
    }
  }
  if (diacritics > 0) badness += opts.lenientDiacritics ? Math.max(0, diacritics - 1) / 2 : diacritics;
  return Math.min(badness, MAX_WORD_BADNESS);
}
