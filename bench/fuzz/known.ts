// Signatures of bugs already filed that other work is fixing. A finding that
// matches one is labelled with it, so a campaign's report separates the known from the new;
// `--skip-known` does not send inputs that would hit a known hang at all (each costs a
// hung worker, ten seconds and a restart, and tells nothing new).

/** Whitespace that is not SP/HT/CR/LF, as bytes (UTF-8 forms, and the bare latin1 bytes). */
const ODD_SPACE = [
  '\xc2\xa0', '\x0b', '\x0c', '\xe2\x80\xa8', '\xe2\x80\xa9', '\xe3\x80\x80', '\xef\xbb\xbf', '\xe1\x9a\x80', '\xc2\x85', '\xe2\x80\xaf', '\xe2\x81\x9f',
  '\xe2\x80\x80', '\xe2\x80\x81', '\xe2\x80\x82', '\xe2\x80\x83', '\xe2\x80\x84', '\xe2\x80\x85', '\xe2\x80\x86', '\xe2\x80\x87', '\xe2\x80\x88', '\xe2\x80\x89', '\xe2\x80\x8a', '\xa0', '\x85',
];

/** Signature floods at or above this count are the known DKIM/ARC slowness. */
const SIGNATURE_FLOOD = 200;

/** Code of LF, and of the two characters that continue a header on the next line. */
const LF = 0x0a;
const SP = 0x20;
const HT = 0x09;

/**
 * True when a header block starting at the line of `start` (that line and its continuation
 * lines, raw) contains odd whitespace. No entry of ODD_SPACE holds CR, LF, SP or HT, so
 * searching the raw block finds what searching its lines joined would.
 */
function blockHasOddSpace(text: string, start: number): boolean {
  let end = text.indexOf('\n', start);
  while (end >= 0 && (text.charCodeAt(end + 1) === SP || text.charCodeAt(end + 1) === HT)) end = text.indexOf('\n', end + 1);
  const block = text.slice(start, end < 0 ? text.length : end);
  return ODD_SPACE.some((s) => block.includes(s));
}

export type KnownBug = 'received-odd-whitespace' | 'signature-flood';

/** A `Received:` header name at the start of a line (the start of the input or after LF: lines split on \r?\n). */
const RECEIVED_LINE = /(?:^|\n)received:/gi;
const SIGNATURE_LINE = /^(dkim-signature|arc-seal|arc-message-signature|arc-authentication-results):/gim;

/**
 * The known bug an input would hit, judged from its bytes. Called on every input under
 * --skip-known, so it searches the text without splitting it into lines.
 */
export function knownBug(bytes: Buffer): KnownBug | undefined {
  const text = bytes.toString('latin1');
  RECEIVED_LINE.lastIndex = 0;
  for (let m = RECEIVED_LINE.exec(text); m; m = RECEIVED_LINE.exec(text)) {
    if (blockHasOddSpace(text, m.index + (text.charCodeAt(m.index) === LF ? 1 : 0))) return 'received-odd-whitespace';
  }
  SIGNATURE_LINE.lastIndex = 0;
  let sigs = 0;
  while (SIGNATURE_LINE.exec(text)) if (++sigs >= SIGNATURE_FLOOD) return 'signature-flood';
  return undefined;
}
