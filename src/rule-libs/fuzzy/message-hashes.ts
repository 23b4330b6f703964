// Which parts of a message a rule hashes and how (lua_fuzzy's policy): long texts
// get a digest and 32 shingles, short texts a direct hash, images/archives/attachments the
// digest of their decoded content.
import type { Message, MimePart, TextPart } from '../../message/types.js';
import { makeTextPart } from '../../message/text-part.js';
import { SHINGLE_COUNT, dataDigest, shingles, shortTextDigest, textDigest } from './digest.js';
import type { FuzzyRule } from './rule.js';
import { stemmedWords } from './words.js';

export type FuzzyHashType = 'txt' | 'img' | 'bin';

export interface FuzzyHash {
  type: FuzzyHashType;
  digest: Buffer;
  /** Present for long texts only. */
  shingles?: bigint[];
  /** Part id in the message tree. */
  partId: string;
  /** Decoded size of the part in bytes. */
  size: number;
}

/** Controller learn requests can leave kinds of content out (Skip-Images, …). */
export interface HashSkips {
  text?: boolean;
  images?: boolean;
  attachments?: boolean;
}

/** Rspamd's shingled texts need at least this many words whatever min_length says. */
const MIN_SHINGLE_WORDS = 32;
const ARCHIVE_TYPES = /^application\/(zip|x-zip-compressed|x-rar|x-rar-compressed|vnd\.rar|x-7z-compressed|gzip|x-gzip|x-tar|x-bzip2|x-xz|x-lzh|x-ace-compressed|java-archive)$/;
const ARCHIVE_EXT = /\.(zip|rar|7z|gz|tgz|tar|bz2|xz|lzh|ace|jar|arj|cab|zst)$/i;
const CYRILLIC = /\p{Script=Cyrillic}/gu;
const LATIN = /\p{Script=Latin}/gu;

/** A crude script-based language guess; Rspamd's n-gram detector falls back to `en` too. */
function guessLanguage(text: string): string {
  const sample = text.slice(0, 4096);
  const cyr = sample.match(CYRILLIC)?.length ?? 0;
  const lat = sample.match(LATIN)?.length ?? 0;
  return cyr > lat ? 'ru' : 'en';
}

/**
 * Rspamd's "stripped content" of a text part, which short-text digests cover: the decoded text
 * with every run of line breaks turned into one space (a final newline included, as 3.4 does).
 */
export function strippedContent(tp: TextPart): string {
  return (tp.kind === 'plain' ? tp.utf8 : tp.text).replace(/[\r\n]+/g, ' ');
}

function isLeaf(p: MimePart): boolean {
  return !p.isMultipart && !p.isMessage;
}

function isTextType(t: string): boolean {
  return t === 'text/plain' || t === 'text/html';
}

/** Every hash a rule sends for `msg`, duplicates removed (first occurrence kept). */
export function messageHashes(msg: Message, rule: FuzzyRule, skips: HashSkips = {}): FuzzyHash[] {
  const out: FuzzyHash[] = [];
  const seen = new Set<string>();
  const push = (h: FuzzyHash): void => {
    const k = h.digest.toString('hex');
    if (seen.has(k)) return;
    seen.add(k);
    out.push(h);
  };
  const textByPart = new Map<MimePart, TextPart>(msg.textParts.map((t) => [t.part, t]));
  const pol = rule.policy;
  const subject = pol.noSubject ? '' : (msg.subject ?? '');
  for (const part of msg.parts) {
    if (!isLeaf(part)) continue;
    const type = part.contentType.type;
    if (isTextType(type)) {
      if (skips.text) continue;
      const tp = textByPart.get(part) ?? makeTextPart(part);
      if (tp.empty) continue;
      const words = stemmedWords(tp.text, guessLanguage(tp.text));
      const minWords = Math.max(pol.minLength, MIN_SHINGLE_WORDS);
      if (words.length >= minWords) {
        const h: FuzzyHash = { type: 'txt', digest: textDigest(words, rule.keys), partId: part.id, size: part.content.length };
        if (pol.textShingles) {
          const sh = shingles(words, rule.algorithm, rule.keys);
          if (sh.length === SHINGLE_COUNT) h.shingles = sh;
        }
        push(h);
      } else if (pol.shortTextDirectHash && words.length > 0) {
        const content = strippedContent(tp);
        const bytes = (Buffer.byteLength(content) + Buffer.byteLength(subject)) * pol.textMultiplier;
        if (pol.minBytes > 0 && bytes < pol.minBytes) continue;
        push({ type: 'txt', digest: shortTextDigest(content, subject, rule.keys), partId: part.id, size: part.content.length });
      }
      continue;
    }
    const size = part.content.length;
    if (size === 0) continue;
    if (type.startsWith('image/')) {
      if (skips.images || pol.skipImages) continue;
      if (pol.minBytes > 0 && size < pol.minBytes) continue;
      push({ type: 'img', digest: dataDigest(part.content), partId: part.id, size });
      continue;
    }
    if (skips.attachments) continue;
    if (pol.scanArchives && (ARCHIVE_TYPES.test(type) || ARCHIVE_EXT.test(part.filename ?? ''))) {
      push({ type: 'bin', digest: dataDigest(part.content), partId: part.id, size });
      continue;
    }
    if (pol.mimeTypes.some((re) => re.test(type))) {
      if (pol.minBytes > 0 && size < pol.minBytes) continue;
      push({ type: 'bin', digest: dataDigest(part.content), partId: part.id, size });
    }
  }
  return out;
}
