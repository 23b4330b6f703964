// chartable: R_MIXED_CHARSET (words mixing Latin with look-alike letters, leet digits, accents
// where the language has none: mostly mis-decoded 8-bit text) and R_MIXED_CHARSET_URL, through
// the real engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { createEngine } from '../../src/engine/index.js';
import { chartableModule } from '../../src/modules/chartable/index.js';
import { wordBadness, wordBadnessByCodePoint } from '../../src/modules/chartable/badness.js';
import { readWords, textWords } from '../../src/modules/chartable/check.js';
import { STOP_WORDS } from '../../src/rule-libs/bayes/stop-words.js';
import { readdirSync, readFileSync } from 'node:fs';
import { parseMessage } from '../../src/message/parse-message.js';
import type { ScanResult } from '../../src/plugin-api/index.js';
import { engineConfig, FIXTURES, fixtureMessage, meta, symbol, testMessage } from './helpers.js';
import { join } from 'node:path';

async function scan(msg: Buffer, config: Record<string, unknown> = {}): Promise<ScanResult> {
  const e = await createEngine(engineConfig({ chartable: config }), [chartableModule]);
  return e.scan(msg, meta());
}

function mail(body: Buffer | string, opts: { subject?: string; charset?: string; type?: string } = {}): Buffer {
  const head = ['From: "Service" <service@notify.example.net>', 'To: user@example.org', `Subject: ${opts.subject ?? 'Account notice'}`,
    'Date: Tue, 20 Aug 2002 09:58:00 +0000', 'Message-ID: <c1@notify.example.net>', 'MIME-Version: 1.0',
    `Content-Type: ${opts.type ?? 'text/plain'}${opts.charset ? `; charset=${opts.charset}` : ''}`, 'Content-Transfer-Encoding: 8bit', '', ''].join('\r\n');
  return Buffer.concat([Buffer.from(head), Buffer.isBuffer(body) ? body : Buffer.from(body), Buffer.from('\r\n')]);
}

test('word badness: a look-alike inside a Latin word costs 1 over the run it breaks; one script alone costs nothing', () => {
  const o = { isUrl: false, lenientDiacritics: false, maxWordLen: 10 };
  assert.equal(wordBadness('p\u0430ypal', o), 1); // Cyrillic а after one Latin letter
  assert.equal(wordBadness('payp\u0430l', o), 0.25); // after four Latin letters
  assert.equal(wordBadness('\u0440\u0430ypal', o), 0.5); // leading Cyrillic р а, then Latin: that switch counts
  assert.equal(wordBadness('привет', o), 0);
  assert.equal(wordBadness('paypal', o), 0);
  assert.equal(wordBadness('\uff50\uff41\uff59pal', o), 1 / 3); // fullwidth letters are dressed-up Latin
  // Leet: a letter after a digit, once letters were seen (hex letters excepted); not in host names.
  assert.equal(wordBadness('V1agra', o), 0);
  assert.equal(wordBadness('C1AL1S', o), 0.25); // S after 1; A after 1 could be hex
  assert.equal(wordBadness('C1AL1S', { ...o, isUrl: true }), 0);
  // Accents: 1 each in a language without them, half of each after the first in one with them.
  assert.equal(wordBadness('café', o), 1);
  assert.equal(wordBadness('élégant', { ...o, lenientDiacritics: true }), 0.5);
  // Long words are not judged.
  assert.equal(wordBadness('p\u0430ypalpaypalpaypal', o), 0);
});

test('a phishing text with look-alike letters in most words: R_MIXED_CHARSET', async () => {
  const text = 'Y\u043eur \u0430ccount h\u0430s been l\u043ecked. Ple\u0430se c\u043enfirm y\u043eur identity t\u043e rest\u043ere \u0430ccess.';
  const r = await scan(mail(text, { charset: 'utf-8' }));
  const hit = symbol(r, 'R_MIXED_CHARSET');
  assert.ok(hit, 'fires');
  assert.ok(hit.score > 0.3 * 5 && hit.score <= 5);
  // One odd word among ordinary ones stays under the threshold (Rspamd's mean, not any word).
  assert.equal(symbol(await scan(mail('Please log in to your p\u0430ypal account today.', { charset: 'utf-8' })), 'R_MIXED_CHARSET'), undefined);
});

test('8-bit text decoded in the wrong charset (Thai sent as us-ascii): R_MIXED_CHARSET', async () => {
  // The words of a Thai offer in TIS-620, labelled us-ascii: read as Latin-1 they are accent soup.
  const thai = iconv.encode('ธุรกิจ ในอนาคต สมัครสมาชิก วันนี้ รับส่วนลด พิเศษ สำหรับ ลูกค้า ใหม่ ทุกท่าน โปรดติดต่อ เรา ได้ทันที', 'tis620');
  const r = await scan(mail(thai, { charset: 'us-ascii' }));
  assert.ok(symbol(r, 'R_MIXED_CHARSET'));
  // The same text correctly labelled is clean Thai.
  assert.equal(symbol(await scan(mail(thai, { charset: 'tis-620' })), 'R_MIXED_CHARSET'), undefined);
});

test('languages that write accents, plain English, and ordinary fixtures: no hit', async () => {
  const french = 'Bonjour, nous avons reçu votre réclamation concernant la livraison du matériel. Le dossier est clôturé et la facture a été réglée. Cordialement, le service clientèle';
  assert.equal(symbol(await scan(mail(french, { charset: 'utf-8' })), 'R_MIXED_CHARSET'), undefined);
  const german = 'Sehr geehrte Damen und Herren, für Ihre Bestellung möchten wir uns herzlich bedanken. Die Lieferung erfolgt über unseren Spediteur in den nächsten Tagen.';
  assert.equal(symbol(await scan(mail(german, { charset: 'utf-8' })), 'R_MIXED_CHARSET'), undefined);
  for (const m of [fixtureMessage('ham.eml'), testMessage('newsletter.eml'), testMessage('utf.eml')]) {
    const r = await scan(m);
    assert.equal(symbol(r, 'R_MIXED_CHARSET'), undefined);
    assert.equal(symbol(r, 'R_MIXED_CHARSET_URL'), undefined);
  }
});

test('a mixed subject alone counts at most a quarter', async () => {
  const r = await scan(mail('Your invoice is attached to this message as requested by you.', { subject: '=?utf-8?b?' + Buffer.from('Y\u043eur \u0430cc\u043eunt').toString('base64') + '?=' }));
  const hit = symbol(r, 'R_MIXED_CHARSET');
  assert.deepEqual(hit?.options, ['subject']);
  assert.equal(hit?.score, 0.25 * 5);
});

test('R_MIXED_CHARSET_URL: a link host with a look-alike letter; genuine IDN and ASCII hosts are fine', async () => {
  const r = await scan(mail('Sign in at http://www.p\u0430ypal.com/login to keep your account.', { charset: 'utf-8' }));
  const hit = symbol(r, 'R_MIXED_CHARSET_URL');
  assert.deepEqual(hit?.options, ['www.p\u0430ypal.com']);
  assert.equal(hit?.score, 0.5 * 2.5);
  for (const body of ['Visit http://www.paypal.com/login or http://mail2.example-24.net/x.', 'Besuchen Sie http://www.bücher.de/ heute.', 'Посетите http://пример.рф/ сегодня.']) {
    assert.equal(symbol(await scan(mail(body, { charset: 'utf-8' })), 'R_MIXED_CHARSET_URL'), undefined, body);
  }
  // The threshold is configurable.
  assert.equal(symbol(await scan(mail('Sign in at http://www.p\u0430ypal.com/login now.', { charset: 'utf-8' }), { threshold: 1.5 }), 'R_MIXED_CHARSET_URL'), undefined);
});

/** The words readWords hands over, as strings. */
function wordsOf(text: string): string[] {
  const out: string[] = [];
  readWords(text, { ascii: (t, start, end) => out.push(t.slice(start, end)), other: (w) => out.push(w) });
  return out;
}

/** wordsOf as it was written first: split on `\s`, drop links, match the words (the index-by-index reader must give the same). */
function wordsBySplitting(text: string): string[] {
  const out: string[] = [];
  for (const chunk of text.slice(0, 256 * 1024).split(/\s+/)) {
    if (chunk === '' || /[@/]|^www\.|\.[a-z]{2,}$/i.test(chunk)) continue;
    for (const w of chunk.match(/[\p{L}\p{M}\p{N}]+/gu) ?? []) {
      out.push(w);
      if (out.length >= 20_000) return out;
    }
  }
  return out;
}

/** A deterministic generator, so a failure names its input again on the next run. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

test('the words of a text, read index by index, are those of splitting and matching', () => {
  const pieces = ['word', 'V1agra', 'C1AL1S', 'a.b', 'www.example', 'mail@example.org', 'http://x.test/p', 'don\'t', '--', '3.5%', 'caf\u00e9', 'p\u0430ypal', '\u4e2d\u6587', 'x\u0301y', ' ', '\t', '\r\n', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028', '\u0085', '\u200b', '', 'end.com', 'site.de', 'Q&A', '\ud83d\ude00', 'e\u0300'];
  const rnd = lcg(7);
  for (let n = 0; n < 2000; n++) {
    let text = '';
    const len = Math.floor(rnd() * 30);
    for (let k = 0; k < len; k++) text += pieces[Math.floor(rnd() * pieces.length)];
    assert.deepEqual(wordsOf(text), wordsBySplitting(text), JSON.stringify(text));
  }
  // Real text: every text part of the edge-case messages.
  const dir = join(FIXTURES, 'rspamd-test-messages');
  let parts = 0;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.eml')).slice(0, 200)) {
    for (const part of parseMessage(readFileSync(join(dir, f))).textParts) {
      parts++;
      assert.deepEqual(wordsOf(part.text), wordsBySplitting(part.text), f);
    }
  }
  assert.ok(parts > 20, `only ${parts} text parts read`);
});

/** A part's language and mean badness as first written: a string for each word, each judged code point by code point. */
function partBySplitting(text: string, maxWordLen: number): { lenient: boolean; score: number } {
  const words = wordsBySplitting(text);
  if (words.length === 0) return { lenient: false, score: 0 };
  const stop = words.filter((w) => STOP_WORDS.has(w.toLowerCase())).length;
  const accented = words.filter((w) => /[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]/u.test(w)).length;
  const lenient = stop / words.length < 0.12 && accented / words.length < 0.5;
  let total = 0;
  for (const w of words) total += wordBadnessByCodePoint(w, { isUrl: false, lenientDiacritics: lenient, maxWordLen });
  return { lenient, score: Math.min(1, total / words.length) };
}

test('a text summed up in one reading gives the language and the mean badness of judging each word alone', () => {
  const pieces = ['the', 'THE', 'And', 'of', 'V1agra', 'C1AL1S', 'a1b2', 'a.b', 'www.example', 'WWW.x', 'x.Com', 'mail@example.org', 'don\'t', '3.5%', 'caf\u00e9', 'na\u00efve', 'p\u0430ypal', '\u0440\u0430\u0443', '\u4e2d\u6587', 'x\u0301y', '\u212a', 'THE\u0301', 'verylongwordbeyondthecap', ' ', '\t', '\r\n', '\u00a0', '\u3000', 'end.com', 'x.io', 'Q&A', '\u00e9t\u00e9'];
  const rnd = lcg(13);
  for (let n = 0; n < 3000; n++) {
    let text = '';
    const len = Math.floor(rnd() * 30);
    for (let k = 0; k < len; k++) text += pieces[Math.floor(rnd() * pieces.length)] + (rnd() < 0.7 ? ' ' : '');
    const want = partBySplitting(text, 12);
    const got = textWords(text, 12);
    assert.equal(got.writesAccents(), want.lenient, JSON.stringify(text));
    assert.ok(Math.abs(got.meanBadness(want.lenient) - want.score) < 1e-12, JSON.stringify(text));
  }
  const dir = join(FIXTURES, 'rspamd-test-messages');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.eml')).slice(0, 200)) {
    for (const part of parseMessage(readFileSync(join(dir, f))).textParts) {
      const want = partBySplitting(part.text, 12);
      const got = textWords(part.text, 12);
      assert.equal(got.writesAccents(), want.lenient, f);
      assert.ok(Math.abs(got.meanBadness(want.lenient) - want.score) < 1e-12, f);
    }
  }
});

test('word badness: the ASCII reading gives what the code-point reading gives', () => {
  const alphabet = 'aAfFgGzZ09 5-._';
  const rnd = lcg(11);
  for (let n = 0; n < 5000; n++) {
    let w = '';
    const len = 1 + Math.floor(rnd() * 12);
    for (let k = 0; k < len; k++) w += alphabet[Math.floor(rnd() * alphabet.length)];
    for (const o of [{ isUrl: false, lenientDiacritics: false, maxWordLen: 10 }, { isUrl: true, lenientDiacritics: true, maxWordLen: 10 }]) {
      assert.equal(wordBadness(w, o), wordBadnessByCodePoint(w, o), JSON.stringify(w));
    }
  }
});
