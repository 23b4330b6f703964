// The `rewrite subject` value: a template with %s (original subject),
// %d (score, two decimals) and %% (a percent sign), RFC 2047-encoded when it is not ASCII.

/** Rspamd's built-in template when neither settings nor config give one. */
export const DEFAULT_SUBJECT_TEMPLATE = '*** SPAM *** %s';

/** Bytes of UTF-8 text per encoded word, so each word stays under RFC 2047's 75-character cap. */
const ENCODED_WORD_BYTES = 45;

export function renderSubject(template: string, subject: string, score: number): string {
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c === '%' && i + 1 < template.length) {
      const n = template[i + 1];
      if (n === 's') {
        out += subject;
        i++;
        continue;
      }
      if (n === 'd') {
        out += score.toFixed(2);
        i++;
        continue;
      }
      if (n === '%') {
        out += '%';
        i++;
        continue;
      }
    }
    out += c;
  }
  return encodeHeaderValue(out);
}

/** RFC 2047 B-encoding in UTF-8, split on character boundaries; ASCII text is returned as is. */
export function encodeHeaderValue(value: string): string {
  // eslint-disable-next-line no-control-regex -- the check is exactly "any non-ASCII or control byte"
  if (!/[^\x20-\x7e\t]/.test(value)) return value;
  const words: string[] = [];
  let chunk = '';
  let chunkBytes = 0;
  for (const ch of value) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (chunkBytes + n > ENCODED_WORD_BYTES && chunk) {
      words.push(chunk);
      chunk = '';
      chunkBytes = 0;
    }
    chunk += ch;
    chunkBytes += n;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(' ');
}
