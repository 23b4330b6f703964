// Which characters are blanks: the code points of the regexp class `\s`, tested by code unit
// where a parser walks text itself instead of running a regexp per character.

/** true for a code point of `\s` (ASCII blanks, NBSP, U+1680, U+2000–200A, U+2028/9, U+202F, U+205F, U+3000, U+FEFF). */
export function isBlank(c: number): boolean {
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true;
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}
