import { test } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { parseMessage } from '../../src/message/parse-message.js';
import { metatokens, splitWords, tokenDigest, tokenizeMessage, WordSink } from '../../src/rule-libs/bayes/index.js';
import { messageHasBadUnicode } from '../../src/rule-libs/bayes/tokenize.js';
import { rspamdMessage } from '../message/fixtures.js';
import { devMessages } from './corpus.js';

function words(text: string): { words: string[]; bad: boolean } {
  const sink = new WordSink({ left: 1e6 });
  splitWords(text, sink);
  return { words: sink.words, bad: sink.badUnicode };
}

const ALL_META = { images: true, mimeInfo: true, headers: true, urls: true, meta: true };

function mail(headers: string, body: Buffer | string): Buffer {
  return Buffer.concat([Buffer.from(`${headers.trim().replace(/\n/g, '\r\n')}\r\n\r\n`), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
}

test('words: a text of ASCII only splits as it does beside a non-ASCII character (its faster pattern agrees)', () => {
  // Every ASCII text part of the development split: the ASCII pattern's words, then the same
  // text through the Unicode path (a trailing "é" word forces it), which adds at most that word
  // (past WORDS_DECAY words the sampling may leave it out).
  let checked = 0;
  for (const raw of [...devMessages('easy-ham-1', 0, 150), ...devMessages('spam-1', 0, 150)]) {
    for (const tp of parseMessage(raw).textParts) {
      if (tp.empty || /[^\x00-\x7f]/.test(tp.text)) continue;
      const ascii = words(tp.text).words;
      const unicode = words(`${tp.text} é`).words;
      assert.deepEqual(unicode.at(-1) === 'é' ? unicode.slice(0, -1) : unicode, ascii);
      checked++;
    }
  }
  assert.ok(checked > 200, `${checked} ASCII parts compared`);
  assert.deepEqual(words("it's 3.14 o'clock at a.b.c, under_score x'").words, ['314', 'oclock', 'abc', 'under_score', 'x']);
});

test('words: NFKC, lower case, inner punctuation, stop words, invisible characters', () => {
  const w = words('Don\'t MISS the ﬁnest Café deals: 3.14 % naïve');
  assert.deepEqual(w.words, ['dont', 'miss', 'finest', 'café', 'deals', '314', 'naïve']);
  assert.equal(w.bad, false);
  const z = words('fr\u200bee mon\u00adey');
  assert.deepEqual(z.words, ['free', 'money']);
  assert.equal(z.bad, true);
});

test('words: URLs become their registrable domain, e-mail addresses one exception word', () => {
  const w = words('see https://shop.example.co.uk/x?y=1 or mail bob@example.org today');
  assert.deepEqual(w.words, ['see', 'example.co.uk', 'mail', '!!EX!!', 'today']);
});

test('words: scripts without spaces are split by the dictionary segmenter', () => {
  const w = words('東京都に住んでいます');
  assert.ok(w.words.length >= 3, `got ${JSON.stringify(w.words)}`);
  assert.ok(w.words.includes('東京'), JSON.stringify(w.words));
});

test('a KOI8-R Russian message in base64 and a Windows-1251 fixture yield Cyrillic words', () => {
  const text = 'Привет! Отличное предложение только сегодня: скидка на все товары магазина.';
  const m = parseMessage(mail(
    'From: Иван <ivan@example.ru>\nTo: a@example.org\nSubject: =?koi8-r?B?' + iconv.encode('Скидка', 'koi8-r').toString('base64') + '?=\nMIME-Version: 1.0\nContent-Type: text/plain; charset=koi8-r\nContent-Transfer-Encoding: base64',
    iconv.encode(text, 'koi8-r').toString('base64').replace(/.{76}/g, '$&\r\n'),
  ));
  const sink = new WordSink({ left: 1e6 });
  splitWords(m.textParts[0]!.text, sink);
  assert.ok(sink.words.includes('привет'), JSON.stringify(sink.words));
  assert.ok(sink.words.includes('скидка'));
  const t = tokenizeMessage(m);
  assert.ok(t.textCount >= 8, `text tokens ${t.textCount}`);

  const cp1251 = parseMessage(rspamdMessage('spam.eml'));
  const s2 = new WordSink({ left: 1e6 });
  for (const tp of cp1251.textParts) splitWords(tp.text, s2);
  assert.ok(s2.words.some((w) => /[а-я]/.test(w)), JSON.stringify(s2.words.slice(0, 20)));
});

test('the same text in base64 and in 8bit gives the same word tokens', () => {
  const body = 'Dear friend,\r\nWe are pleased to offer you an exclusive investment opportunity in precious metals.\r\nReply today to claim your bonus.\r\n';
  const h = 'From: Sender <s@example.com>\nTo: r@example.org\nSubject: Exclusive offer\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8';
  const plain = tokenizeMessage(parseMessage(mail(`${h}\nContent-Transfer-Encoding: 8bit`, body)));
  const b64 = tokenizeMessage(parseMessage(mail(`${h}\nContent-Transfer-Encoding: base64`, Buffer.from(body).toString('base64'))));
  const textOf = (t: typeof plain): string[] => {
    const out: string[] = [];
    for (let i = 0; i < t.length; i++) if (t.meta[i] === 0) out.push(`${t.hi[i]}:${t.lo[i]}`);
    return out;
  };
  assert.ok(plain.textCount > 10, `text tokens ${plain.textCount}`);
  assert.deepEqual(textOf(b64), textOf(plain));
  // The encoded part is larger, so the part-size metatoken differs: the message digests do too.
  assert.notEqual(tokenDigest(b64), tokenDigest(plain));
});

test('an HTML-only message is tokenised from its rendered text, with the html-only structure token', () => {
  const m = parseMessage(rspamdMessage('mixed-related-html-only.eml'));
  const t = tokenizeMessage(m);
  assert.ok(t.textCount > 0);
  const meta = metatokens(m, ALL_META);
  assert.ok(meta.some((x) => x.startsWith('#m:#ho')), JSON.stringify(meta));
  assert.ok(meta.includes('#fe:pdf'), JSON.stringify(meta));
  assert.ok(meta.includes('image'));
  // No markup leaks into the words.
  const sink = new WordSink({ left: 1e6 });
  splitWords(m.textParts[0]!.text, sink);
  assert.ok(!sink.words.includes('div') && !sink.words.includes('href'), JSON.stringify(sink.words.slice(0, 40)));
});

test('metatokens: headers, From name, link domains, send time', () => {
  const m = parseMessage(devMessages('spam-1', 0, 1)[0]!);
  const meta = metatokens(m, ALL_META);
  assert.ok(meta.some((x) => x.startsWith('#m:')));
  assert.ok(meta.some((x) => x.startsWith('#ps:')));
  if (m.date) assert.ok(meta.some((x) => /^#dt:[1-7]:\d\d$/.test(x)), JSON.stringify(meta));
  const off = metatokens(m, { images: false, mimeInfo: false, headers: false, urls: false, meta: false });
  assert.deepEqual(off, []);
});

test('tokenising is deterministic, windows change the token count, repeats count once', () => {
  for (const raw of devMessages('easy-ham-1', 0, 5)) {
    const m = parseMessage(raw);
    const a = tokenizeMessage(m);
    const b = tokenizeMessage(parseMessage(raw));
    assert.equal(tokenDigest(a), tokenDigest(b));
    const w2 = tokenizeMessage(m, { window: 2, metatokens: ALL_META });
    assert.ok(w2.length < a.length);
    const seen = new Set<string>();
    for (let i = 0; i < a.length; i++) seen.add(`${a.hi[i]}:${a.lo[i]}`);
    assert.equal(seen.size, a.length);
  }
});

test('long texts are sampled after 600 words, not cut', () => {
  const words = Array.from({ length: 5000 }, (_, i) => `word${i}`).join(' ');
  const sink = new WordSink({ left: 1e6 });
  splitWords(words, sink);
  assert.ok(sink.words.length > 700 && sink.words.length < 3000, `kept ${sink.words.length}`);
  assert.ok(sink.words.includes('word4000') || sink.words.some((w) => Number(w.slice(4)) > 4000));
});

test('messageHasBadUnicode agrees with the tokeniser, invisible characters in a part, the subject or the From name', () => {
  const msgs = [
    ...devMessages('easy-ham-1', 0, 40),
    ...devMessages('spam-1', 0, 40),
    mail('From: a@example.org\nSubject: plain', 'fr\u200bee money, act now'),
    mail('From: a@example.org\nSubject: =?utf-8?q?fr=E2=80=8Bee?=', 'nothing hidden here'),
    mail('From: =?utf-8?q?Sh=C2=ADop?= <a@example.org>\nSubject: hi', 'nothing hidden here'),
    mail('From: a@example.org\nSubject: hi\nContent-Type: text/plain; charset=utf-8', 'caf\u00e9 na\u00efve, no invisible ones'),
  ].map((raw) => parseMessage(raw));
  const flagged = msgs.map((m) => messageHasBadUnicode(m));
  assert.deepEqual(flagged, msgs.map((m) => tokenizeMessage(m).badUnicode));
  assert.deepEqual(flagged.slice(-4), [true, true, true, false]);
});

test('text past MAX_TOKENIZED_CHARS is not split into words, and the token list says so', async () => {
  const { MAX_TOKENIZED_CHARS } = await import('../../src/rule-libs/bayes/tokenize.js');
  const line = 'lorem ipsum dolor sit amet consectetur adipiscing elit\r\n';
  const body = line.repeat(Math.ceil((MAX_TOKENIZED_CHARS * 1.5) / line.length));
  const big = parseMessage(mail('From: a@example.org\nSubject: big', body));
  const cpu = process.cpuUsage();
  const t = tokenizeMessage(big);
  const used = process.cpuUsage(cpu);
  assert.equal(t.textCut, true);
  assert.ok(used.user + used.system < 2_000_000, `${used.user + used.system} µs`);
  // The same tokens as the text cut at the cap.
  const cut = parseMessage(mail('From: a@example.org\nSubject: big', big.textParts[0]!.text.slice(0, MAX_TOKENIZED_CHARS)));
  const a = tokenizeMessage(cut);
  assert.equal(a.textCut, undefined);
  assert.deepEqual([a.textCount, [...a.hi].sort().slice(0, 50)], [t.textCount, [...t.hi].sort().slice(0, 50)]);
  assert.equal(tokenizeMessage(parseMessage(mail('From: a@example.org\nSubject: small', line.repeat(10)))).textCut, undefined);
});
