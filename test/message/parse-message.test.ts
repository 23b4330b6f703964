// parseMessage on real messages: Rspamd's functional-test messages, the protocol fixtures'
// messages and SpamAssassin corpus messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeRawMessage, parseMessage } from '../../src/message/parse-message.js';
import { corpusMessage, rspamdMessage, scanMessage } from './fixtures.js';

test('CRLF message: newline, headers in order, addresses, URL and body e-mail', () => {
  const m = parseMessage(scanMessage('crlf-simple.eml'));
  assert.equal(m.newline, '\r\n');
  assert.equal(m.headers.all[0]!.order, 0);
  assert.deepEqual(m.headers.all.map((h) => h.order), m.headers.all.map((_, i) => i));
  assert.equal(m.from[0]!.address, 'alice@example.com');
  assert.equal(m.from[0]!.name, 'Alice');
  assert.equal(m.textParts.length, 1);
  assert.match(m.textParts[0]!.text, /short test message/);
  assert.ok(!m.textParts[0]!.text.includes('\r'));
  assert.deepEqual(m.urls.map((u) => u.url), ['https://www.example.org/page']);
  assert.equal(m.urls[0]!.tld, 'example.org');
  assert.ok(m.urls[0]!.flags.has('text'));
  assert.deepEqual(m.emails.map((e) => e.address), ['carol@example.net']);
  assert.equal(m.raw.subarray(m.bodyOffset).toString('latin1').startsWith('Hello Bob,'), true);
});

test('LF message: newline is LF and the body starts after the blank line', () => {
  const m = parseMessage(scanMessage('lf-simple.eml'));
  assert.equal(m.newline, '\n');
  assert.equal(m.raw.subarray(m.bodyOffset).toString(), 'Hello Bob,\n\nplain LF message.\n');
  assert.equal(m.textParts[0]!.text, 'Hello Bob,\nplain LF message.');
  assert.equal(m.anomalies.size, 0);
});

test('multipart/alternative with plain and HTML, QP and encoded-word subject (windows-1251)', () => {
  const m = parseMessage(rspamdMessage('bad_message.eml'));
  assert.equal(m.subject, 'Скидки до 36 процентов на насосы!');
  assert.equal(m.from[0]!.name, 'Насосы');
  assert.equal(m.messageId, '588d01d0b859$92a6a7e0$10a887d3@nasutkadqw');
  assert.equal(m.root.contentType.type, 'multipart/related');
  assert.equal(m.root.contentType.params['type'], 'multipart/alternative');
  const alt = m.root.children[0]!;
  assert.equal(alt.contentType.type, 'multipart/alternative');
  assert.deepEqual(alt.children.map((p) => p.contentType.type), ['text/plain', 'text/html']);
  assert.equal(alt.children[0]!.transferEncoding, 'quoted-printable');
  // QP `=0D=0A` pairs decode to CRLF bytes.
  assert.equal(alt.children[0]!.content.toString('latin1').startsWith('\r\n\r\n'), true);
  assert.equal(m.attachments.length, 24); // 24 `image/jpeg` parts in the file
  assert.ok(m.attachments.every((a) => a.contentType === 'image/jpeg' && a.filename?.endsWith('.jpeg') && a.size > 1000));
  assert.equal(m.date?.toISOString(), '2015-07-06T23:06:44.000Z');
  assert.deepEqual(m.parts.map((p) => p.id).slice(0, 5), ['', '1', '1.1', '1.2', '2']);
});

test('windows-1251 plain and HTML parts decode to Cyrillic text', () => {
  const m = parseMessage(rspamdMessage('spam.eml'));
  const [plain, html] = m.textParts;
  assert.equal(plain!.charset, 'windows-1251');
  assert.equal(plain!.badCharset, false);
  assert.match(plain!.text, /^ДЕТСКИЕ АУДИОЭНЦИКЛОПЕДИИ/);
  assert.equal(html!.kind, 'html');
  // Source line breaks inside HTML text are spaces; the title is not visible text.
  assert.match(html!.text, /^ДЕТСКИЕ АУДИОЭНЦИКЛОПЕДИИ/);
  assert.ok(html!.html!.tags.has('table'));
  // The attachment is text/plain with a name: listed as an attachment, not a text part.
  assert.equal(m.attachments[0]!.filename, 'Список-Аудиоэнциклопедии.txt');
  assert.ok(m.emails.some((e) => e.address === 'audioencyclopedia@cwhflash.ru'));
});

test('iso-8859-1 quoted-printable body and encoded-word header from the corpus', () => {
  const m = parseMessage(corpusMessage('easy-ham-1/01556.126fd032d9f624e282a711df96f64cc6.txt'));
  assert.equal(m.headers.first('organization')!.value, 'Université de Nantes');
  assert.match(m.headers.first('organization')!.raw, /=\?ISO-8859-1\?Q\?Universit=E9_de_Nantes\?=/);
  const tp = m.textParts[0]!;
  assert.equal(tp.charset, 'iso-8859-1');
  assert.match(tp.text, /Arnaud Abélard\nAdministrateur réseaux et systèmes/);
});

test('mbox From line is skipped and Q-encoded subject decoded (corpus)', () => {
  const raw = corpusMessage('easy-ham-1/02434.37126367f2a918fead5ff8ea834cc334.txt');
  assert.equal(raw.toString('latin1', 0, 5), 'From ');
  const m = parseMessage(raw);
  assert.notEqual(m.raw.toString('latin1', 0, 5), 'From ');
  assert.equal(m.subject, 'Re: RE: [zzzzteana] Sitting Bull über alles [Long]');
});

test('koi8-r body (corpus spam) is converted', () => {
  const m = parseMessage(corpusMessage('spam-1/00089.7e7baae6ef4a8fb945d7b3fe551329fe.txt'));
  assert.equal(m.textParts[0]!.charset, 'koi8-r');
  assert.match(m.textParts[0]!.text, /^Email marketing works!/);
  // A numeric-host URL gets the IP as its tld and the numeric flag.
  const ip = m.urls.find((u) => u.host === '68.62.73.31')!;
  assert.ok(ip.flags.has('numeric'));
  assert.equal(ip.tld, '68.62.73.31');
});

test('HTML-only message: links, images and rendered text', () => {
  const m = parseMessage(rspamdMessage('html_phishing.eml'));
  assert.equal(m.textParts.length, 1);
  const tp = m.textParts[0]!;
  assert.equal(tp.kind, 'html');
  assert.ok(!tp.text.includes('<'));
  // `<title>Newsletter</title>` is not visible text; the body's heading comes first.
  assert.match(tp.text, /^Weekly Newsletter\nURGENT: Verify your account now!\n/);
  assert.deepEqual(
    tp.html!.links.map((l) => l.href),
    ['https://phishing-site.evil', 'https://phishing-site.evil/steal-credentials', 'https://phishing-site.evil/fake'],
  );
  assert.equal(tp.html!.links[1]!.text, 'Verify Now');
  assert.deepEqual(tp.html!.images, ['https://cdn.example.com/logo.png']);
  const img = m.urls.find((u) => u.host === 'cdn.example.com')!;
  assert.ok(img.flags.has('image'));
  assert.equal(img.tld, 'example.com');
});

test('HTML link whose text is a URL records the displayed URL', () => {
  // `<a href="http://www.example.net">http://www.cnn.com</a>`
  const m = parseMessage(rspamdMessage('phishing1.eml'));
  const target = m.urls.find((u) => u.host === 'www.example.net')!;
  assert.equal(target.displayed, 'http://www.cnn.com');
  assert.equal(target.flags.has('text'), false);
  const shown = m.urls.find((u) => u.host === 'www.cnn.com')!;
  assert.ok(shown.flags.has('html_displayed'));
  assert.equal(m.textParts[0]!.text, 'lol http://www.cnn.com');
});

test('message/rfc822 attachment is parsed into children[0]', () => {
  const m = parseMessage(rspamdMessage('alternative-nested-rfc822.eml'));
  const msgPart = m.parts.find((p) => p.isMessage)!;
  assert.equal(msgPart.contentType.type, 'message/rfc822');
  assert.equal(msgPart.children.length, 1);
  const inner = msgPart.children[0]!;
  assert.equal(inner.depth, msgPart.depth + 1);
  assert.equal(inner.parent, msgPart);
  assert.equal(inner.contentType.type, 'multipart/alternative');
  assert.ok(inner.headers.has('subject'));
  const texts = m.textParts.map((t) => t.text);
  assert.ok(texts.includes('This is the plain text version of the inner message.'));
  assert.ok(texts.includes('This is the HTML version of the inner message.'));
});

test('broken boundaries are reported and the content is still scanned', () => {
  const declaredNeverUsed = parseMessage(rspamdMessage('btc2.eml'));
  assert.ok(declaredNeverUsed.anomalies.has('boundary_not_found'));
  assert.match(declaredNeverUsed.textParts[0]!.text, /bech32/);

  const unterminated = parseMessage(rspamdMessage('badboundary.eml'));
  assert.ok(unterminated.anomalies.has('no_closing_boundary'));
  assert.equal(unterminated.attachments[0]!.filename, 'Transparent.gif');

  const noBoundary = parseMessage(rspamdMessage('external_relay.eml'));
  assert.ok(noBoundary.anomalies.has('missing_boundary'));
});

test('base64 attachments: RFC 2231 / encoded file names, decoded sizes, truncated base64 flagged', () => {
  const m = parseMessage(rspamdMessage('fname.eml'));
  const names = m.attachments.map((a) => a.filename);
  assert.ok(names.includes('[삼성생명]2020.08.14 데일리 경제뉴스.pdf'), JSON.stringify(names));
  assert.ok(m.anomalies.has('bad_base64'));

  const gif = parseMessage(rspamdMessage('badboundary.eml')).attachments[0]!;
  assert.equal(gif.part.transferEncoding, 'base64');
  assert.equal(gif.part.content.toString('latin1', 0, 6), 'GIF89a');
  assert.equal(gif.size, gif.part.content.length);
});

test('encoded-word subject carrying a URL: the URL gets the subject flag', () => {
  const m = parseMessage(rspamdMessage('urlinsubjectencoded.eml'));
  assert.match(m.subject!, /^ПОДТВЕРДИТЕ ВЫПЛАТУ - https:\/\/example\.com\//);
  const u = m.urls.find((x) => x.flags.has('subject'));
  assert.equal(u?.host, 'example.com');
});

test('UTF-8 encoded-word display names', () => {
  const m = parseMessage(rspamdMessage('utf.eml'));
  assert.equal(m.to[0]!.name, 'Васисуалий Евлампиевич');
  assert.equal(m.textParts[0]!.charset, 'utf-8');
  assert.equal(m.textParts[0]!.badCharset, false);
});

test('numeric and image URLs from HTML', () => {
  const m = parseMessage(rspamdMessage('numeric_urls.eml'));
  const byHost = new Map(m.urls.map((u) => [u.host, u]));
  assert.ok(byHost.get('1.2.3.4')!.flags.has('numeric'));
  assert.ok(byHost.get('9.10.11.12')!.flags.has('image'));
  assert.equal(byHost.get('judo.za.org')!.tld, 'za.org');
  assert.equal(m.attachments[0]!.filename, 'lamecontent.pdf');
});

test('makeRawMessage: no headers, one part of the given or guessed type', () => {
  const bytes = scanMessage('crlf-simple.eml');
  const text = makeRawMessage(bytes);
  assert.equal(text.headers.all.length, 0);
  assert.equal(text.parts.length, 1);
  assert.equal(text.root.contentType.type, 'text/plain');
  assert.equal(text.newline, '\r\n');
  // Raw input is not MIME: the header lines are body text.
  assert.match(text.textParts[0]!.text, /^From: /);
  assert.equal(text.urls[0]!.host, 'www.example.org');

  const pdf = makeRawMessage(rspamdMessage('numeric_urls.eml').subarray(0, 2000), 'application/pdf', 'doc.pdf');
  assert.equal(pdf.root.contentType.type, 'application/pdf');
  assert.equal(pdf.root.disposition, 'inline');
  assert.equal(pdf.textParts.length, 0);
  assert.deepEqual(pdf.attachments.map((a) => [a.filename, a.contentType, a.size]), [['doc.pdf', 'application/pdf', 2000]]);

  const binary = makeRawMessage(Buffer.from([0, 1, 2, 0xff, 0]));
  assert.equal(binary.root.contentType.type, 'application/octet-stream');
});
