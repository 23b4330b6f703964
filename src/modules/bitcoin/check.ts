// The callbacks: find wallet addresses in the text parts, and the words that come with them in
// sextortion and leaked-password scams.

import type { Task, TextPart } from '../../plugin-api/index.js';
import { isBase58CheckAddress, isCashAddress, isEthereumAddress, isSegwitAddress } from './validate.js';

/** Characters of each text part searched: the address of a scam sits near the top, and the regexps must not walk a huge body. */
export const MAX_TEXT_CHARS = 256 * 1024;
/** Candidates validated per message: each costs hashes, and a hostile body can hold thousands of look-alikes. */
export const MAX_CANDIDATES = 100;
/** Words read per message by the scam-word rule. */
export const MAX_WORDS = 20_000;

interface Shape {
  re: RegExp;
  valid(word: string): boolean;
}

// Rspamd's two regexps split by format, each with its own checksum. Legacy and P2SH (Bitcoin
// `1`/`3`, Litecoin `L`/`M`) are 26 to 35 base58 characters; segwit and cashaddr use bech32's
// alphabet, which has no `1`, `b`, `i` or `o` after the separator.
const BTC_SHAPES: readonly Shape[] = [
  { re: /(?<![\w/])[13LM][1-9A-HJ-NP-Za-km-z]{25,34}(?!\w)/g, valid: isBase58CheckAddress },
  { re: /(?<![\w/])(?:bc|tb|ltc)1[ac-hj-np-z02-9]{8,87}(?!\w)/gi, valid: isSegwitAddress },
  { re: /(?<![\w/])(?:bitcoincash:)?[qp][ac-hj-np-z02-9]{41,111}(?!\w)/g, valid: isCashAddress },
];
const ETH_SHAPE: Shape = { re: /(?<![\w/])0x[0-9a-fA-F]{40}(?!\w)/g, valid: isEthereumAddress };

function partText(p: TextPart): string {
  return p.text.length > MAX_TEXT_CHARS ? p.text.slice(0, MAX_TEXT_CHARS) : p.text;
}

/** Valid addresses of the given shapes in the text parts, each once, in order of discovery. */
export function findAddresses(parts: readonly TextPart[], shapes: readonly Shape[]): string[] {
  const found = new Set<string>();
  const rejected = new Set<string>();
  let budget = MAX_CANDIDATES;
  for (const p of parts) {
    const text = partText(p);
    for (const shape of shapes) {
      for (const m of text.matchAll(shape.re)) {
        const word = m[0];
        // The plain and HTML alternatives repeat the same address: validate it once.
        if (found.has(word) || rejected.has(word)) continue;
        if (budget-- <= 0) return [...found];
        if (shape.valid(word)) found.add(word);
        else rejected.add(word);
      }
    }
  }
  return [...found];
}

export function checkBitcoin(task: Task): void {
  const addrs = findAddresses(task.message.textParts, BTC_SHAPES);
  if (addrs.length > 0) task.insert('BITCOIN_ADDR', 1, addrs);
}

export function checkEthereum(task: Task): void {
  const addrs = findAddresses(task.message.textParts, [ETH_SHAPE]);
  if (addrs.length > 0) task.insert('ETHEREUM_ADDR', 1, addrs);
}

// Rspamd's LEAKED_PASSWORD_SCAM_RE word regexps; words are compared lower-cased.
const WORD_SIGNS: ReadonlyArray<[string, RegExp]> = [
  ['password', /^pass(?:word|phrase)$/],
  ['wallet', /^wallet$/],
  ['victim', /victim|prey/],
  ['webcam', /webcam/],
  ['onanism', /mast[ur]{2}bati(?:on|ng)|onanism|solitary/],
];

function scamWord(parts: readonly TextPart[]): string | undefined {
  let words = 0;
  for (const p of parts) {
    for (const m of partText(p).matchAll(/\p{L}+/gu)) {
      if (++words > MAX_WORDS) return undefined;
      const w = m[0].toLowerCase();
      for (const [sign, re] of WORD_SIGNS) if (re.test(w)) return sign;
    }
  }
  return undefined;
}

/**
 * What makes a wallet address a scam's: the words of blackmail (password, webcam, victim…), or
 * the marks Rspamd counts with them: text in a broken charset, images inlined as data: URLs, a
 * List-Unsubscribe header on a one-off demand, a PHP script as the sender.
 */
function scamSign(task: Task): string | undefined {
  const parts = task.message.textParts;
  const word = scamWord(parts);
  if (word) return word;
  if (parts.some((p) => p.badCharset)) return 'bad_unicode';
  if (parts.some((p) => p.html?.images.some((src) => /^\s*data:/i.test(src)))) return 'data_images';
  if (task.message.headers.has('List-Unsubscribe')) return 'list_unsubscribe';
  if (task.message.headers.has('X-PHP-Originating-Script')) return 'x_php_origin';
  return undefined;
}

export function checkLeakedPasswordScam(task: Task): void {
  if (!task.hasSymbol('BITCOIN_ADDR') && !task.hasSymbol('ETHEREUM_ADDR')) return;
  const sign = scamSign(task);
  if (sign) task.insert('LEAKED_PASSWORD_SCAM_RE', 1, sign);
}
