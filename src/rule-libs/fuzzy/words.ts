// Text → the stemmed word list that fuzzy digests and shingles are computed over (as
// Rspamd's tokeniser makes it): UAX#29 word boundaries (ICU, as Intl.Segmenter), NFKC,
// lower case, only letter/mark/number/connector/math/currency code points, Snowball stem.
// URLs and e-mail addresses are exceptions in Rspamd's tokeniser and never become words.
import { createRequire } from 'node:module';
import { LinkifyIt } from 'linkify-it';

type Snowball = typeof import('snowball-stemmers');
let snowballLib: Snowball | undefined;
// Required on the first stem rather than imported: its 0.8 MiB of generated source (and the
// objects it builds) would otherwise sit in the supervisor too, which never stems a word.
const snowball = (): Snowball => (snowballLib ??= createRequire(import.meta.url)('snowball-stemmers') as Snowball);

// Built once per process: linkify compiles its regexps at construction.
const linkify = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true });
const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
// Rspamd keeps a span as a word when its first code point is a "Java identifier part".
const WORD_START = /^[\p{L}\p{N}\p{M}\p{Pc}\p{Sc}]/u;
// Code points kept in the normalised form; everything else (invisible spaces, punctuation) is dropped.
const KEEP = /[\p{L}\p{M}\p{N}\p{Pc}\p{Sm}\p{Sc}]/gu;

/**
 * Rspamd caps tokenisation per message; the same cap here bounds the work a
 * hostile message can cause. Beyond it the remaining text is ignored.
 */
export const MAX_WORDS = 100_000;

interface Stemmer {
  stem(word: string): string;
}

const stemmers = new Map<string, Stemmer | null>();

function stemmerFor(lang: string): Stemmer | null {
  let s = stemmers.get(lang);
  if (s === undefined) {
    const name = LANG_NAMES[lang];
    s = name && snowball().algorithms().includes(name) ? snowball().newStemmer(name) : null;
    stemmers.set(lang, s);
  }
  return s;
}

const LANG_NAMES: Record<string, string> = {
  en: 'english', de: 'german', fr: 'french', es: 'spanish', it: 'italian', pt: 'portuguese',
  nl: 'dutch', ru: 'russian', sv: 'swedish', no: 'norwegian', da: 'danish', fi: 'finnish',
  hu: 'hungarian', ro: 'romanian', tr: 'turkish', ar: 'arabic', ca: 'catalan', eu: 'basque',
};

/** Replace URL and e-mail spans with a space so they split words but produce none. */
export function stripExceptions(text: string): string {
  const found = linkify.match(text);
  if (!found) return text;
  let out = '';
  let pos = 0;
  for (const m of found) {
    out += text.slice(pos, m.index) + ' ';
    pos = m.lastIndex;
  }
  return out + text.slice(pos);
}

/** Normalised form of one word: NFKC, lower case, only graphic letter-like code points. */
export function normaliseWord(word: string): string {
  const nfkc = word.normalize('NFKC');
  const kept = nfkc.match(KEEP);
  return kept ? kept.join('').toLowerCase() : '';
}

/** The stemmed words of one text part, in order; words with an empty stem are left out. */
export function stemmedWords(text: string, lang = 'en'): string[] {
  const stemmer = stemmerFor(lang);
  const out: string[] = [];
  for (const seg of segmenter.segment(stripExceptions(text))) {
    if (!WORD_START.test(seg.segment)) continue;
    const norm = normaliseWord(seg.segment);
    if (!norm) continue;
    const stem = stemmer ? stemmer.stem(norm) : norm;
    if (!stem) continue;
    out.push(stem);
    if (out.length >= MAX_WORDS) break;
  }
  return out;
}
