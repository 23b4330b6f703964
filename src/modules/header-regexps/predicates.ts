// Building blocks of Rspamd's regexp rules (rules/regexp/headers.lua): a header regexp over the
// decoded value (`H`) or the raw value (`X`), header presence, and a few message functions.
// Each predicate is a closure compiled once at module setup.
import { isBlank } from '../../message/blank.js';
import { decodeEncodedWords } from '../../message/encoded-words.js';
import type { MessageHeader, Task } from '../../plugin-api/index.js';

export type Pred = (task: Task) => boolean;

/** A regexp, or a test written out where the regexp's backtracking would be quadratic. */
export interface Matcher {
  test(value: string): boolean;
}

/** Any header of that name whose decoded value matches (Rspamd `Name=/re/H`). */
export const hdr = (name: string, re: Matcher): Pred => (task) => task.message.headers.get(name).some((h) => re.test(h.value));

/** Any header of that name whose raw value (folding kept) matches (Rspamd `Name=/re/X`). */
export const rawHdr = (name: string, re: Matcher): Pred => (task) => task.message.headers.get(name).some((h) => re.test(h.raw.replace(/^[ \t]+/, '')));

const NON_BLANK_RUN = /\S+/g;

/**
 * `/=\?\S+\?B\?/i` (or `?Q?`): in some run of non-blanks, `=?`, at least one character, then
 * `?B?`. Checked from the run's first `=?` (a later one cannot do better); the regexp retried
 * from every `=?` to the run's end, quadratic on a value of `=?=?=?…`.
 */
export function encodedWordStart(letter: 'B' | 'Q'): Matcher {
  const marker = `?${letter}?`;
  return {
    test(value) {
      if (value.indexOf('=?') < 0) return false;
      NON_BLANK_RUN.lastIndex = 0;
      for (let m = NON_BLANK_RUN.exec(value); m; m = NON_BLANK_RUN.exec(value)) {
        const run = m[0];
        const at = run.indexOf('=?');
        if (at >= 0 && run.toUpperCase().indexOf(marker, at + 3) >= 0) return true;
      }
      return false;
    },
  };
}

export const exists = (name: string): Pred => (task) => task.message.headers.has(name);

/** PCRE's `\s` without Unicode properties: the ASCII blanks. */
const ASCII_SPACE = /[ \t\n\v\f\r]/;
const FOLD = /[\r\n][ \t\n\v\f\r]*/g;
const HIGH_BYTE = /[\x80-\xff]/;
const HIGH_BYTES = /[\x80-\xff]/g;
/** Six subject rules read the same value: decoded once per header object. */
const READ = new WeakMap<MessageHeader, string>();

/**
 * The value Rspamd's `/re/H` reads: each line break with the blanks after it becomes one space,
 * leading blanks go, encoded words are decoded, 8-bit bytes that are not UTF-8 read as U+FFFD.
 * `h.value` differs: trimmed both ways (Rspamd keeps the blanks a subject ends with), folds keep
 * their blanks (`Service\n    (5.5` is `Service (5.5` to Rspamd), stray bytes read as Latin-1
 * (a raw 0xA3 would be a pound sign).
 */
export function rspamdValue(h: MessageHeader): string {
  let text = READ.get(h);
  if (text !== undefined) return text;
  text = readAsRspamd(h);
  READ.set(h, text);
  return text;
}

function readAsRspamd(h: MessageHeader): string {
  let text = h.raw;
  // Raw values are bytes as latin1; valid UTF-8 reads as UTF-8, as for `value`.
  if (HIGH_BYTE.test(text)) text = h.broken ? text.replace(HIGH_BYTES, '\ufffd') : Buffer.from(text, 'latin1').toString('utf8');
  text = text.replace(FOLD, ' ');
  let i = 0;
  while (i < text.length && ASCII_SPACE.test(text[i]!)) i++;
  if (i > 0) text = text.slice(i);
  return text.indexOf('=?') >= 0 ? decodeEncodedWords(text) : text;
}

/** Some header of that name whose value as Rspamd reads it (rspamdValue) passes `test`. */
export const rspamdHdr = (name: string, test: (value: string) => boolean): Pred => (task) =>
  task.message.headers.get(name).some((h) => test(rspamdValue(h)));

/** The value without the ASCII blanks it ends with: `/X\s*$/` becomes a look at its last character, linear. */
export function trimAsciiEnd(value: string): string {
  let n = value.length;
  while (n > 0 && ASCII_SPACE.test(value[n - 1]!)) n--;
  return value.slice(0, n);
}

export const not = (p: Pred): Pred => (task) => !p(task);
export const all = (...ps: Pred[]): Pred => (task) => ps.every((p) => p(task));
export const any = (...ps: Pred[]): Pred => (task) => ps.some((p) => p(task));

/** Every text part is HTML, and there is at least one (Rspamd `has_only_html_part()`). */
export const onlyHtml: Pred = (task) => {
  const tp = task.message.textParts;
  return tp.length > 0 && tp.every((p) => p.kind === 'html');
};

/** Some HTML part has the tag (Rspamd `has_html_tag(name)`). */
export const htmlTag = (tag: string): Pred => (task) => task.message.textParts.some((p) => p.html?.tags.has(tag) === true);

/** Some part is text/html (Rspamd `content_type_is_type(text) & content_type_is_subtype(html)`). */
export const hasHtmlPart: Pred = (task) => task.message.parts.some((p) => p.contentType.type === 'text/html');

/** Fewest MIME recipients for the sorted-list check to mean anything (Rspamd's MIN_RCPT_TO_COMPARE). */
const MIN_SORTED_RCPTS = 7;

/** The To and Cc addresses are in ascending order (Rspamd `is_recipients_sorted()`). */
export const recipientsSorted: Pred = (task) => {
  const list = [...task.message.to, ...task.message.cc].filter((a) => !a.invalid && a.address).map((a) => a.address.toLowerCase());
  if (list.length < MIN_SORTED_RCPTS) return false;
  for (let i = 1; i < list.length; i++) if (list[i - 1]! > list[i]!) return false;
  return true;
};

/** Leading characters two addresses share to count as alike (Rspamd's COMPARE_RCPT_LEN). */
const ALIKE_PREFIX = 3;
/** Rspamd's compare_recipients_distance(0.65): pairs alike over two must reach this. */
const RECIPS_DISTANCE = 0.65;

/**
 * Auto-generated recipient lists (Rspamd `compare_recipients_distance(0.65)`): with seven or more
 * To/Cc addresses, those longer than three characters are ordered by domain (length, then
 * bytes), and neighbours of equal length that start with the same three characters (any case)
 * count as alike; half the count must reach 0.65, i.e. two alike neighbours.
 */
export const recipientsDistant: Pred = (task) => {
  const list = [...task.message.to, ...task.message.cc].filter((a) => !a.invalid && a.address);
  if (list.length < MIN_SORTED_RCPTS) return false;
  const kept = list.filter((a) => a.address.length > ALIKE_PREFIX);
  kept.sort((a, b) => a.domain.length - b.domain.length || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
  let hits = 0;
  for (let i = 1; i < kept.length; i++) {
    const x = kept[i - 1]!.address;
    const y = kept[i]!.address;
    if (x.length === y.length && x.slice(0, ALIKE_PREFIX).toLowerCase() === y.slice(0, ALIKE_PREFIX).toLowerCase()) hits++;
  }
  return hits / 2 >= RECIPS_DISTANCE;
};

/** Characters of a text part that body regexps read: the signs they look for sit near the top. */
const BODY_TEXT_LIMIT = 100_000;

/** Some text part's decoded, rendered text matches (Rspamd `/re/{sa_body}`). */
export const bodyText = (re: RegExp): Pred => (task) =>
  task.message.textParts.some((p) => re.test(p.text.length > BODY_TEXT_LIMIT ? p.text.slice(0, BODY_TEXT_LIMIT) : p.text));

/** The whole of some text part is one long token: a tracker string to skew statistics. */
export const trackerOnlyPart = (re: RegExp): Pred => (task) => task.message.textParts.some((p) => re.test(p.utf8));

/** What `.` refuses besides the `\n` that ends a line. */
const NOT_DOT = /[\r\u2028\u2029]/;

/**
 * `^\s*(.+\n)*X` (X not starting with a blank) written out: X at the end of the leading blanks,
 * or right after a line break reached through lines `.+` can match, the first of which may start
 * anywhere the leading blanks reach. The regexp backtracked between `\s*` and `(.+\n)*` over every
 * line: 64 KiB of ` \n` cost it seconds. One pass over the lines, X tried where it may start.
 */
export function afterLines(x: RegExp): Matcher {
  const sticky = new RegExp(x.source, `${x.flags.replace(/[gy]/g, '')}y`);
  const at = (value: string, q: number): boolean => {
    sticky.lastIndex = q;
    return sticky.test(value);
  };
  return {
    test(value) {
      const n = value.length;
      let w = 0;
      while (w < n && isBlank(value.charCodeAt(w))) w++;
      if (at(value, w)) return true;
      // Whether the line starting at `a` continues a run of lines `(.+\n)*` matched.
      let reached = false;
      for (let a = 0, b = value.indexOf('\n'); b >= 0; a = b + 1, b = value.indexOf('\n', a)) {
        const line = value.slice(a, b);
        const bad = Math.max(line.lastIndexOf('\r'), line.lastIndexOf('\u2028'), line.lastIndexOf('\u2029'));
        const good = b > a && bad < 0;
        // The run may open with this line's tail after its last refused character, when `\s*`
        // reaches that far (everything before is blank).
        const opens = a <= w && Math.max(a, a + bad + 1) <= Math.min(w, b - 1);
        reached = opens || (reached && good);
        if (reached && at(value, b + 1)) return true;
      }
      return false;
    },
  };
}

/**
 * `from \[(ip)\].*\n(.+\n)*\s*from \1 by \S+;\s+<date>$` written out (the regexp, unanchored,
 * retried from every `from [` over every following line). The closing `from ip by …` can only be
 * the value's last `from `; the opening `from [ip]` does best as the last one before the blanks
 * ahead of it; then its line and the lines after it must reach a line break inside those blanks.
 */
export function openedAndClosedBy(tail: RegExp): Matcher {
  return {
    test(value) {
      const k = value.lastIndexOf('from ');
      if (k < 0) return false;
      const closing = tail.exec(value.slice(k));
      if (!closing) return false;
      let w = k;
      while (w > 0 && isBlank(value.charCodeAt(w - 1))) w--;
      const open = `from [${closing[1]}]`;
      const s = value.lastIndexOf(open, w - open.length);
      if (s < 0) return false;
      let a = s + open.length;
      for (;;) {
        const b = value.indexOf('\n', a);
        if (b < 0 || b >= k) return false;
        // The opening line's rest may be empty (`.*`), a later line not (`.+`).
        if ((a !== s + open.length && b === a) || NOT_DOT.test(value.slice(a, b))) return false;
        if (b >= w) return true;
        a = b + 1;
      }
    },
  };
}
