// Message → Bayes tokens: the words of each text part (the second of two
// near-identical alternative parts skipped), the subject and From name as a second stream and the
// metatokens as a third, each turned into orthogonal sparse bigrams over a sliding window.
import { createHash } from 'node:crypto';
import type { Message } from '../../message/types.js';
import { hashWord, toBigInt } from './hash.js';
import { headerTokens } from './header-tokens.js';
import { htmlTokens } from './html-tokens.js';
import { metatokens, type MetatokenOptions } from './metatokens.js';
import { hasInvisible, MAX_WORDS_PER_MESSAGE, splitWords, WordSink } from './words.js';

/** OSB multipliers by distance 1..4 (Rspamd's primes; index 0 unused). */
const OSB_MULTIPLIERS = [1, 3, 5, 11, 23, 47, 97, 197] as const;
/** Window sizes accepted: Rspamd caps it at 8. */
export const MAX_WINDOW = 8;
/** Two alternative parts more similar than this are one text: only the first is tokenised. */
const SIMILAR_PARTS = 0.8;
/**
 * Characters of text parts split into words per message. Past WORDS_DECAY words only a thinning
 * sample is kept (about 5 500 words of a 40 MB text), yet every word was still found by the
 * regexps: a 42 MB text cost 1.2 s of CPU. What lies past this is not tokenised (`textCut`).
 */
export const MAX_TOKENIZED_CHARS = 4 * 1024 * 1024;

export interface TokenizeOptions {
  /** OSB window: 5 in Rspamd 3.4, 2 in Rspamd master, 2 by default here (config.ts says why). */
  window: number;

  metatokens: MetatokenOptions;
}

export const DEFAULT_TOKENIZE_OPTIONS: TokenizeOptions = {
  window: 2,
  metatokens: { images: true, mimeInfo: true, headers: true, urls: true, meta: true, headerTokens: true, htmlTokens: false },
};

/** Tokens of one message, as parallel arrays. */
export interface TokenList {
  readonly length: number;
  /** High and low 32 bits of each token's 64-bit hash. */
  readonly hi: Uint32Array;
  readonly lo: Uint32Array;
  /** Distance between the paired words (1..window-1); 0 for a unigram. */
  readonly window: Uint8Array;
  /** 1 for metatokens. */
  readonly meta: Uint8Array;
  /** Tokens that are not metatokens. */
  readonly textCount: number;
  /** Some word had invisible characters (task flag BAD_UNICODE). */
  readonly badUnicode: boolean;
  /** Text past MAX_TOKENIZED_CHARS was not split into words. */
  readonly textCut?: boolean;
  /**
   * Metatokens of mailsift's extensions (header and HTML tokens). They are not counted against
   * min_tokens / max_tokens, so those limits keep Rspamd's meaning: about 50 header facts would
   * otherwise let any near-empty message pass the minimum.
   */
  readonly extensionCount?: number;
}

class TokenBuilder {
  hi: number[] = [];
  lo: number[] = [];
  win: number[] = [];
  meta: number[] = [];
  textCount = 0;
  readonly #h = new Uint32Array(2);
  // A token repeated in one message counts once: repetition is cheap for a spammer to add, and
  // one store row per distinct token keeps the round trip small.
  readonly #seen = new Set<number>();

  osb(words: readonly string[], window: number, isMeta: boolean): void {
    const n = words.length;
    if (n === 0) return;
    const hh = new Uint32Array(n);
    const hl = new Uint32Array(n);
    for (let j = 0; j < n; j++) {
      hashWord(words[j]!, this.#h);
      hh[j] = this.#h[0]!;
      hl[j] = this.#h[1]!;
    }
    if (n === 1) {
      this.#emit(hh[0]!, hl[0]!, 0, isMeta);
      return;
    }
    for (let j = 1; j < n; j++) {
      for (let i = 1; i < window && j - i >= 0; i++) {
        const p = OSB_MULTIPLIERS[i]!;
        this.#emit((hh[j]! + Math.imul(hh[j - i]!, p)) >>> 0, (hl[j]! + Math.imul(hl[j - i]!, p)) >>> 0, i, isMeta);
      }
    }
  }

  unigram(word: string, isMeta: boolean): void {
    hashWord(word, this.#h);
    this.#emit(this.#h[0]!, this.#h[1]!, 0, isMeta);
  }

  #emit(hi: number, lo: number, w: number, isMeta: boolean): void {
    // 53-bit key: exact enough to spot repeats; a rare collision only drops one token.
    const key = hi * 0x200000 + (lo >>> 11);
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    this.hi.push(hi);
    this.lo.push(lo);
    this.win.push(w);
    this.meta.push(isMeta ? 1 : 0);
    if (!isMeta) this.textCount++;
  }
}

/** Share of words the two lists have in common (multiset overlap over the longer list). */
function similarity(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const w of a) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of b) {
    const c = counts.get(w);
    if (c) {
      common++;
      counts.set(w, c - 1);
    }
  }
  return common / Math.max(a.length, b.length);
}

/** Tokenise a parsed message. */
export function tokenizeMessage(msg: Message, opts: TokenizeOptions = DEFAULT_TOKENIZE_OPTIONS): TokenList {
  const window = Math.min(MAX_WINDOW, Math.max(2, opts.window));
  const budget = { left: MAX_WORDS_PER_MESSAGE };
  const b = new TokenBuilder();
  let badUnicode = false;
  const partWords: string[][] = [];
  let chars = MAX_TOKENIZED_CHARS;
  let textCut = false;
  for (const tp of msg.textParts) {
    if (tp.empty) continue;
    if (chars <= 0) {
      textCut = true;
      break;
    }
    const sink = new WordSink(budget);
    if (tp.text.length > chars) textCut = true;
    splitWords(tp.text.length > chars ? tp.text.slice(0, chars) : tp.text, sink);
    chars -= tp.text.length;
    badUnicode ||= sink.badUnicode;
    partWords.push(sink.words);
  }
  if (partWords.length === 2 && similarity(partWords[0]!, partWords[1]!) > SIMILAR_PARTS) partWords.pop();
  for (const words of partWords) b.osb(words, window, false);

  const metaSink = new WordSink(budget);
  if (msg.subject) splitWords(msg.subject, metaSink);
  const fromName = msg.from[0]?.name;
  if (fromName) splitWords(fromName, metaSink);
  badUnicode ||= metaSink.badUnicode;
  b.osb(metaSink.words, window, false);

  // Metatokens are facts, not a sentence: each is one unigram token (pairing them would only
  // multiply structure tokens and let them outvote the words of a short message).
  const mo = opts.metatokens;
  for (const m of metatokens(msg, { ...mo, headerTokens: false, htmlTokens: false })) b.unigram(m, true);
  const before = b.hi.length;
  const ext: string[] = [];
  if (mo.headerTokens) headerTokens(msg, ext);
  if (mo.htmlTokens) htmlTokens(msg, ext);
  for (const m of ext) b.unigram(m, true);

  return {
    length: b.hi.length,
    hi: Uint32Array.from(b.hi),
    lo: Uint32Array.from(b.lo),
    window: Uint8Array.from(b.win),
    meta: Uint8Array.from(b.meta),
    textCount: b.textCount,
    badUnicode,
    extensionCount: b.hi.length - before,
    ...(textCut ? { textCut } : {}),
  };
}

/**
 * TokenList.badUnicode of `msg` without tokenising it: the same texts (non-empty text parts,
 * subject, From name) checked for the invisible code points splitWords removes.
 */
export function messageHasBadUnicode(msg: Message): boolean {
  for (const tp of msg.textParts) if (!tp.empty && hasInvisible(tp.text)) return true;
  if (msg.subject && hasInvisible(msg.subject)) return true;
  const fromName = msg.from[0]?.name;
  return fromName ? hasInvisible(fromName) : false;
}

/** Tokens as the 64-bit values stores take. */
export function tokenValues(t: TokenList): bigint[] {
  const out = new Array<bigint>(t.length);
  for (let i = 0; i < t.length; i++) out[i] = toBigInt(t.hi[i]!, t.lo[i]!);
  return out;
}

/**
 * The learn-cache id of a message: a digest of the user and every token,
 * so the same message learned again is recognised whatever its envelope.
 */
export function tokenDigest(t: TokenList, user = ''): string {
  const h = createHash('blake2b512');
  if (user) h.update(user);
  const buf = Buffer.allocUnsafe(t.length * 8);
  for (let i = 0; i < t.length; i++) {
    buf.writeUInt32LE(t.lo[i]!, i * 8);
    buf.writeUInt32LE(t.hi[i]!, i * 8 + 4);
  }
  h.update(buf);
  return h.digest('hex').slice(0, 32);
}
