// Regexps of the rules that backtracked quadratically on input a message controls (a header
// value, a link's text, the body), and what replaced them: each replacement matches what the
// regexp matched on random strings of the characters that matter to it, and stays linear on the
// input that made the regexp take seconds (found by timing every regexp in src/ on repeated
// fragments of its own literals).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hasDataUri } from '../../src/modules/html-checks/check.js';
import { encodedWordStart } from '../../src/modules/header-regexps/predicates.js';
import { LEAVE_OR_UNSUBSCRIBE } from '../../src/modules/header-regexps/rules.js';
import { ascFilename } from '../../src/modules/mime/check-structure.js';
import { forAddress } from '../../src/modules/received/check.js';
import { dkimResults } from '../../src/rule-libs/bayes/metatokens.js';
import { splitWords, WordSink } from '../../src/rule-libs/bayes/words.js';

const SEED = Number(process.env['FC_SEED'] ?? 91_117);

/** `a` and `b` agree on every string of up to 25 pieces of `alphabet`. */
function same<T>(alphabet: string[], a: (s: string) => T, b: (s: string) => T, numRuns = 4000): void {
  const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 25 }).map((x) => x.join(''));
  fc.assert(fc.property(text, (s) => assert.deepEqual(b(s), a(s), JSON.stringify(s))), { seed: SEED, numRuns });
}

/** CPU (ms) of `fn`, which must stay under `maxMs` on input the old regexp took seconds over. */
function linear(what: string, maxMs: number, fn: () => unknown): void {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  const ms = (used.user + used.system) / 1000;
  assert.ok(ms < maxMs, `${what}: ${ms.toFixed(0)} ms of CPU`);
}

const LIMIT_MS = 500;

test('header rules: Message-Id, Reply-To, List-Unsubscribe and encoded-word tests', () => {
  const cases: Array<[string, RegExp, { test(s: string): boolean }, string[], string]> = [
    ['/\\(.*\\)/', /\(.*\)/, /\([^()\n\r\u2028\u2029]*\)/, ['(', ')', '\n', 'a', '\u2028'], '('],
    ['hex$hex$hex@', /[0-9a-f]{4,}\$[0-9a-f]{4,}\$[0-9a-f]{4,}@\S+/, /(?<![0-9a-f])[0-9a-f]{4,}\$[0-9a-f]{4,}\$[0-9a-f]{4,}@\S+/, ['0', 'a', 'f', '$', '@', ' ', 'x', '0000'], '0'],
    ['/".*"\\s*</', /".*"\s*</, /"[^"\n\r\u2028\u2029]*"\s*</, ['"', '<', ' ', 'a', '\n', '\u2028'], '"'],
    ['/=\\?\\S+\\?B\\?/i', /=\?\S+\?B\?/i, encodedWordStart('B'), ['=?', '?B?', '?b?', '?', 'B', ' ', 'x', '\u3000', '='], '=?'],
    ['/=\\?\\S+\\?Q\\?/i', /=\?\S+\?Q\?/i, encodedWordStart('Q'), ['=?', '?Q?', '?q?', '?', 'Q', ' ', 'x', '='], '=?'],
    ['leave/unsubscribe', /<mailto:(?:leave-\S+|\S+-unsubscribe)@\S+>$/, LEAVE_OR_UNSUBSCRIBE, ['<mailto:', 'leave-', '-unsubscribe@', '@', '>', ' ', 'a', '\n', '<'], '<mailto:'],
  ];
  for (const [label, re, matcher, alphabet, flood] of cases) {
    same(alphabet, (s) => re.test(s), (s) => matcher.test(s));
    // A 64 KiB header value (MAX_HEADER_LINE_BYTES) of the fragment: seconds for the regexp.
    linear(label, LIMIT_MS, () => matcher.test(`${flood.repeat(65_536 / flood.length)}x`));
  }
});

test("other rules: hfilter's clients, the ratware Message-ID, a link text's trailing punctuation, multimap's addresses and line breaks", () => {
  same(['1', '2', '.', '-', 'client', 'Clients', 'x'], (s) => /[0-9]{3,}[.-]?clients?/i.test(s), (s) => /(?<![0-9])[0-9]{3,}[.-]?clients?/i.test(s));
  same(['0', 'a', 'F', '$', '@', '00', '000'], (s) => /^0{2,}[0-9a-f]{2,}\$0{3,}[0-9a-f]+\$0{3,}[0-9a-f]+@/i.test(s), (s) => /^00[0-9a-f]{2,}\$000[0-9a-f]+\$000[0-9a-f]+@/i.test(s));
  same(['.', ',', ')', ']', 'a', '\n'], (s) => s.replace(/[.,;:!?)\]]+$/, ''), (s) => s.replace(/(?<![.,;:!?)\]])[.,;:!?)\]]+$/, ''));
  const all = (re: RegExp) => (s: string) => [...s.matchAll(re)].map((m) => [m.index, m[0]]);
  same(['a', '@', ' ', '<', ',', 'b@c', '"'], all(/[^\s<>"',;:()[\]]+@[^\s<>"',;:()[\]]+/g), all(/(?<![^\s<>"',;:()[\]])[^\s<>"',;:()[\]]+@[^\s<>"',;:()[\]]+/g));
  same([' ', '\n', '\r', 'a', '\t', '\u00a0'], (s) => s.replace(/\s*\r?\n\s*/g, ' '), (s) => s.replace(/(?<!\s)\s*\n\s*/g, ' '));
  linear('clients', LIMIT_MS, () => /(?<![0-9])[0-9]{3,}[.-]?clients?/i.test(`${'3'.repeat(65_536)}x`));
  linear('ratware', LIMIT_MS, () => /^00[0-9a-f]{2,}\$000[0-9a-f]+\$000[0-9a-f]+@/i.test(`${'0'.repeat(65_536)}x`));
  linear('multimap addresses', LIMIT_MS, () => [...`${'=?'.repeat(500_000)}`.matchAll(/(?<![^\s<>"',;:()[\]])[^\s<>"',;:()[\]]+@[^\s<>"',;:()[\]]+/g)]);
  linear('multimap line breaks', LIMIT_MS, () => ' '.repeat(1 << 20).replace(/(?<!\s)\s*\n\s*/g, ' '));
});

test('written-out tests: data: URIs in the body, .asc file names, DKIM results in Authentication-Results', () => {
  same(['data:', 'DATA:', '/', ';', ' ', 'a', ';base64,', ';BASE64,', '\n', 'image/png'], (s) => /data:[^/]+\/[^; ]+;base64,/i.test(s), hasDataUri, 20_000);
  same(['filename=', '.asc', 'a', '\n', '.', '='], (s) => /filename=.+\.asc/.test(s), ascFilename);
  same(['dkim=', 'pass', 'header', 'header.d=', 'x.y', ';', ' ', '.', 'a', 'DKIM=', 'HEADER.D='],
    (s) => [...s.matchAll(/\bdkim=(\w+)[^;]*?header\.d=([\w.-]+)/gi)].map((m) => [m[1], m[2]]), dkimResults, 20_000);
  // A 100 KB body of `data:` took the regexp 9 s; a 1 MB one takes the scan milliseconds.
  linear('data: URI', LIMIT_MS, () => hasDataUri('data:'.repeat(200_000)));
  linear('data: URI with slashes', LIMIT_MS, () => hasDataUri('data:a/'.repeat(150_000)));
  linear('.asc', LIMIT_MS, () => ascFilename('filename='.repeat(7000)));
  linear('dkim=', LIMIT_MS, () => dkimResults('dkim=a'.repeat(11_000)));
  linear('for <', LIMIT_MS, () => forAddress(' for <'.repeat(11_000)));
});

test('Bayes words: a run of "aa." is tokenised in linear time (300 KB took 83 s)', () => {
  linear('splitWords', 2000, () => splitWords('aa.'.repeat(100_000), new WordSink({ left: 100_000 })));
  // Addresses and URLs still become exception words.
  const sink = new WordSink({ left: 100 });
  splitWords('write to bob.smith+x@mail.example.org or see www.example.com now', sink);
  assert.deepEqual(sink.words.filter((w) => w.includes('!!') || w.includes('example')), ['!!EX!!', 'example.com']);
});

test("Rspamd's FORGED_GENERIC_RECEIVED rules: the lines before the match read in one pass", async () => {
  const { afterLines, openedAndClosedBy } = await import('../../src/modules/header-regexps/predicates.js');
  const { DATE_TAIL } = await import('../../src/modules/header-regexps/rules.js');
  const date = 'Thu, 1 Jan 2026 00:00:00 +0000';
  const alphabet = [' ', '\n', '\r', '\r\n', '\u2028', '\t', 'a', 'from [1.2.3.4]', 'from [1.2.3.5]', `from 1.2.3.4 by x; ${date}`, `from localhost by x; ${date}`,
    `from [1.2.3.4] by a.com; ${date}`, `by 1.2.3.4 with SMTP id abcdefghijklmn.1234567890123;\n${date} (GMT)`, ` ${date}`, 'by '];
  const ip = String.raw`\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}`;
  const tails = [
    String.raw`from \[${ip}\] by (([\w\d-]+\.)+[a-zA-Z]{2,6}|${ip}); ${DATE_TAIL}`,
    String.raw`by ${ip} with SMTP id [a-zA-Z]{14}\.\d{13};[\r\n\s]*${DATE_TAIL} \(GMT\)`,
    String.raw`from localhost by \S+;\s+${DATE_TAIL}[\s\r\n]*$`,
  ];
  for (const tail of tails) {
    const original = new RegExp(String.raw`^\s*(.+\n)*${tail}`);
    const matcher = afterLines(new RegExp(tail));
    same(alphabet, (s) => original.test(s), (s) => matcher.test(s), 10_000);
    linear(tail.slice(0, 20), LIMIT_MS, () => matcher.test(' \n'.repeat(32_768)));
  }
  const five = new RegExp(String.raw`\s*from \[(${ip})\].*\n(.+\n)*\s*from \1 by \S+;\s+${DATE_TAIL}$`);
  const fiveMatcher = openedAndClosedBy(new RegExp(String.raw`^from (${ip}) by \S+;\s+${DATE_TAIL}$`));
  same(alphabet, (s) => five.test(s), (s) => fiveMatcher.test(s), 10_000);
  linear('FORGED_GENERIC_RECEIVED5', LIMIT_MS, () => fiveMatcher.test(`${'from [1.2.3.4]\n'.repeat(4000)}${'\r\n'.repeat(8000)}`));
});
