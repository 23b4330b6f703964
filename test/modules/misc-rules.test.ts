// Rspamd 3.4's misc, MIME-structure and recipient rules (rules/misc.lua, rules/headers_checks.lua):
// PGP / S/MIME parts, base64 text, attachments, differing alternatives, links in the Subject,
// plus-tagged addresses and a To without addresses. Each through the real engine, hit and miss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { meta, names, scanner, symbol, testMessage } from './helpers.js';
import { wordDistance } from '../../src/modules/mime/check-parts-differ.js';

const HEAD = [
  'From: Alice <alice@example.com>',
  'To: Bob <bob@example.org>',
  'Subject: quarterly figures',
  'Date: Tue, 01 Aug 2023 10:00:00 +0000',
  'Message-ID: <misc-1@example.com>',
  'MIME-Version: 1.0',
];

/** A message from header lines (HEAD by default, patched) and a body, with CRLF line ends. */
function message(body: string[], extra: string[] = [], head: string[] = HEAD): Buffer {
  return Buffer.from([...head, ...extra, '', ...body, ''].join('\r\n'), 'latin1');
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

const SIGNED_PGP = message(
  [
    '--sig',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'The figures are attached to the wiki page.',
    '--sig',
    'Content-Type: application/pgp-signature; name="signature.asc"',
    'Content-Disposition: attachment; filename="signature.asc"',
    '',
    '-----BEGIN PGP SIGNATURE-----',
    'iQEzBAEBCAAdFiEE0000000000000000000000000000000000000000=',
    '-----END PGP SIGNATURE-----',
    '--sig--',
  ],
  ['Content-Type: multipart/signed; micalg=pgp-sha256; protocol="application/pgp-signature"; boundary="sig"'],
);

test('a PGP-signed message is SIGNED_PGP with an attachment, and nothing bogus', async () => {
  const r = await (await scanner()).scan(SIGNED_PGP, meta());
  assert.equal(symbol(r, 'SIGNED_PGP')?.score, -2);
  assert.ok(names(r).has('HAS_ATTACHMENT'), 'the signature part is marked attachment');
  for (const s of ['BOGUS_ENCRYPTED_AND_TEXT', 'ENCRYPTED_PGP', 'SIGNED_SMIME']) assert.ok(!names(r).has(s), s);
});

test('an S/MIME signature is SIGNED_SMIME; a plain message is neither', async () => {
  const s = await scanner();
  const smime = Buffer.from(
    SIGNED_PGP.toString('latin1').replaceAll('application/pgp-signature', 'application/pkcs7-signature'),
    'latin1',
  );
  const r = await s.scan(smime, meta());
  assert.ok(names(r).has('SIGNED_SMIME'));
  assert.ok(!names(r).has('SIGNED_PGP'));
  const plain = await s.scan(message(['Just text.'], ['Content-Type: text/plain']), meta());
  for (const sym of ['SIGNED_SMIME', 'SIGNED_PGP', 'HAS_ATTACHMENT', 'MIME_BASE64_TEXT']) assert.ok(!names(plain).has(sym), sym);
});

test('PGP/MIME encryption is ENCRYPTED_PGP; encrypted next to readable text is BOGUS_ENCRYPTED_AND_TEXT', async () => {
  const s = await scanner();
  const encrypted = message(
    [
      '--enc',
      'Content-Type: application/pgp-encrypted',
      '',
      'Version: 1',
      '--enc',
      'Content-Type: application/octet-stream; name="encrypted.asc"',
      '',
      '-----BEGIN PGP MESSAGE-----',
      'hQEMA0000000000000AQf/000000000000000000000000000000000000000000=',
      '-----END PGP MESSAGE-----',
      '--enc--',
    ],
    ['Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="enc"'],
  );
  const r = await s.scan(encrypted, meta());
  assert.equal(symbol(r, 'ENCRYPTED_PGP')?.score, -0.5);
  assert.ok(!names(r).has('BOGUS_ENCRYPTED_AND_TEXT'));

  const bogus = message(
    [
      '--mix',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Your account is suspended. <a href="http://verify.example.net/">Verify now</a></p>',
      '--mix',
      'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"',
      'Content-Transfer-Encoding: base64',
      '',
      'MIAGCSqGSIb3DQEHA6CAMIACAQAxggFAMIIBPAIBADAk',
      '--mix--',
    ],
    ['Content-Type: multipart/mixed; boundary="mix"'],
  );
  const b = await s.scan(bogus, meta());
  assert.deepEqual(symbol(b, 'BOGUS_ENCRYPTED_AND_TEXT')?.options, ['smime part']);
  assert.equal(symbol(b, 'BOGUS_ENCRYPTED_AND_TEXT')?.score, 10);
  assert.ok(names(b).has('ENCRYPTED_SMIME'));
});

test('base64 text: MIME_BASE64_TEXT, and _BOGUS only when the decoded text is plain ASCII', async () => {
  const s = await scanner();
  const ascii = await s.scan(
    message([b64('Cheap meds here, no prescription needed.')], ['Content-Type: text/plain; charset=us-ascii', 'Content-Transfer-Encoding: base64']),
    meta(),
  );
  assert.ok(names(ascii).has('MIME_BASE64_TEXT'));
  assert.equal(symbol(ascii, 'MIME_BASE64_TEXT_BOGUS')?.score, 1);
  const accented = await s.scan(
    message([b64('Grüße aus München, die Zahlen folgen morgen.')], ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64']),
    meta(),
  );
  assert.ok(names(accented).has('MIME_BASE64_TEXT'));
  assert.ok(!names(accented).has('MIME_BASE64_TEXT_BOGUS'), 'real 8-bit text needs the encoding');
  // A base64 attachment that is not text is neither.
  const pdf = message(
    [
      '--m',
      'Content-Type: text/plain',
      '',
      'See the attached file.',
      '--m',
      'Content-Type: application/pdf; name="a.pdf"',
      'Content-Disposition: attachment; filename="a.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      b64('%PDF-1.4 fake'),
      '--m--',
    ],
    ['Content-Type: multipart/mixed; boundary="m"'],
  );
  const p = await s.scan(pdf, meta());
  assert.ok(!names(p).has('MIME_BASE64_TEXT'));
  assert.ok(names(p).has('HAS_ATTACHMENT'));
});

test('HAS_ATTACHMENT needs more than one part', async () => {
  const single = message(['report body'], ['Content-Type: text/plain', 'Content-Disposition: attachment; filename="report.txt"']);
  assert.ok(!names(await (await scanner()).scan(single, meta())).has('HAS_ATTACHMENT'));
});

/** multipart/alternative of a plain and an HTML part. */
function alternative(plain: string, html: string): Buffer {
  return message(
    ['--alt', 'Content-Type: text/plain; charset=utf-8', '', plain, '--alt', 'Content-Type: text/html; charset=utf-8', '', html, '--alt--'],
    ['Content-Type: multipart/alternative; boundary="alt"'],
  );
}

const PITCH =
  'Act now to claim the exclusive discount on our premium watches, shipped worldwide within days. ' +
  'Thousands of satisfied customers trust our store for genuine quality, secure payment and fast delivery. ' +
  'Limited stock remains, so order today and save up to eighty percent on every item in the catalogue.';

test('R_PARTS_DIFFER: a decoy text part next to an HTML pitch; matching alternatives stay quiet', async () => {
  const s = await scanner();
  const decoy = await s.scan(alternative('Please view this message in HTML.', `<html><body><p>${PITCH}</p></body></html>`), meta());
  const hit = symbol(decoy, 'R_PARTS_DIFFER');
  assert.ok(hit, 'fires');
  // 6 words against 48: the distance is their difference, 42 of 54 words (77.8 %), weight (0.778 - 0.5) × 2.
  assert.deepEqual(hit.options, ['77.8%']);
  assert.ok(Math.abs(hit.score - 0.556) < 0.01, String(hit.score));
  const same = await s.scan(alternative(PITCH, `<html><body><p>${PITCH}</p></body></html>`), meta());
  assert.ok(!names(same).has('R_PARTS_DIFFER'));
  // Two text parts that are not alternatives of each other are not compared.
  const mixed = Buffer.from(alternative('Please view this message in HTML.', `<p>${PITCH}</p>`).toString('latin1').replace('multipart/alternative', 'multipart/mixed'), 'latin1');
  assert.ok(!names(await s.scan(mixed, meta())).has('R_PARTS_DIFFER'));
});

test('word distance follows Rspamd 3.4 and stays bounded on huge parts', () => {
  // Rspamd's table charges equal words on the diagonal: identical texts are 2 apart (one shift).
  assert.equal(wordDistance([1, 2, 3, 4], [1, 2, 3, 4]), 2);
  assert.equal(wordDistance([1, 2], [3, 4, 5, 6, 7, 8]), 4);
  const a = Array.from({ length: 4000 }, (_, i) => i);
  const b = Array.from({ length: 4000 }, (_, i) => i + 1);
  const t0 = process.hrtime.bigint();
  assert.equal(wordDistance(a, b), 0);
  assert.ok(Number(process.hrtime.bigint() - t0) / 1e6 < 20, 'over the cell cap the counts are compared, not the words');
});

test('URL_IN_SUBJECT: a link in the subject, not a bare host name or a link the body also has', async () => {
  const s = await scanner();
  const whole = await s.scan(testMessage('urlinsubject.eml'), meta());
  assert.deepEqual(symbol(whole, 'URL_IN_SUBJECT')?.options, ['example.com']);
  assert.equal(symbol(whole, 'URL_IN_SUBJECT')?.score, 4, 'the whole subject is the link: full weight');
  const withSubject = (subject: string, body = 'Nothing else.'): Buffer =>
    message([body], ['Content-Type: text/plain'], HEAD.map((h) => (h.startsWith('Subject:') ? `Subject: ${subject}` : h)));
  const part = await s.scan(withSubject('cheap pills at http://pills.example.net/buy today'), meta());
  assert.equal(symbol(part, 'URL_IN_SUBJECT')?.score, 1, 'a quarter of 4');
  const www = await s.scan(withSubject('visit www.pills.example.net'), meta());
  assert.ok(Math.abs(symbol(www, 'URL_IN_SUBJECT')!.score - 0.4) < 1e-9, 'a tenth of 4 without a scheme');
  assert.ok(!names(await s.scan(withSubject('Forbidden thoughts from salon.com'), meta())).has('URL_IN_SUBJECT'));
  const inBody = await s.scan(withSubject('see http://pills.example.net/buy', 'Order at http://pills.example.net/buy now.'), meta());
  assert.ok(!names(inBody).has('URL_IN_SUBJECT'), 'Rspamd keeps the body entry, without the subject flag');
});

test('TAGGED_FROM and TAGGED_RCPT: plus tags and dotted Gmail users', async () => {
  const s = await scanner();
  const tagged = await s.scan(message(['hi'], ['Content-Type: text/plain']), meta({ from: 'alice+lists@example.com', rcpt: ['bob+work@example.org'] }));
  assert.deepEqual(symbol(tagged, 'TAGGED_FROM')?.options, ['lists']);
  assert.deepEqual(symbol(tagged, 'TAGGED_RCPT')?.options, ['work']);
  const gmail = await s.scan(testMessage('aliases_googlemail.eml'), meta());
  assert.ok(names(gmail).has('TAGGED_FROM'), 'first.last@googlemail.com is firstlast@gmail.com');
  const plain = await s.scan(message(['hi'], ['Content-Type: text/plain']), meta({ from: 'alice@example.com', rcpt: ['bob@example.org'] }));
  assert.ok(!names(plain).has('TAGGED_FROM'));
  assert.ok(!names(plain).has('TAGGED_RCPT'));
});

test('a To without addresses is RCPT_COUNT_ZERO; no To or Cc at all inserts no count', async () => {
  const s = await scanner();
  const undisclosed = message(['hi'], ['Content-Type: text/plain'], HEAD.map((h) => (h.startsWith('To:') ? 'To: undisclosed-recipients:;' : h)));
  const r = await s.scan(undisclosed, meta({ rcpt: ['bob@example.org'] }));
  assert.deepEqual(symbol(r, 'RCPT_COUNT_ZERO')?.options, ['0']);
  for (const sym of ['TO_DN_NONE', 'TO_DN_EQ_ADDR_ALL', 'TO_MATCH_ENVRCPT_ALL']) assert.ok(names(r).has(sym), sym);
  const none = message(['hi'], ['Content-Type: text/plain'], HEAD.filter((h) => !h.startsWith('To:')));
  const n = await s.scan(none, meta({ rcpt: ['bob@example.org'] }));
  assert.ok(![...names(n)].some((x) => x.startsWith('RCPT_COUNT_') || x.startsWith('TO_DN_') || x.startsWith('TO_MATCH_')));
});

test('a display name that is the address itself is FROM_DN_EQ_ADDR / TO_DN_EQ_ADDR_ALL, as in Rspamd', async () => {
  const s = await scanner();
  const echoed = message(['hi'], ['Content-Type: text/plain'], HEAD.map((h) =>
    h.startsWith('From:') ? 'From: "alice@example.com" <alice@example.com>' : h.startsWith('To:') ? 'To: bob@example.org <bob@example.org>' : h));
  const r = await s.scan(echoed, meta());
  assert.ok(names(r).has('FROM_DN_EQ_ADDR'));
  assert.ok(names(r).has('TO_DN_EQ_ADDR_ALL'));
  assert.ok(!names(r).has('FROM_NO_DN'));
  // A bare address, or the address repeated as a separate list entry, has no display name.
  const bare = message(['hi'], ['Content-Type: text/plain'], HEAD.map((h) =>
    h.startsWith('From:') ? 'From: alice@example.com' : h.startsWith('To:') ? 'To: bob@example.org, <bob@example.org>' : h));
  const b = await s.scan(bare, meta());
  assert.ok(names(b).has('FROM_NO_DN'));
  assert.ok(!names(b).has('FROM_DN_EQ_ADDR'));
  assert.ok(names(b).has('TO_DN_NONE'));
});

test('CTYPE_MIXED_BOGUS: multipart/mixed with only body text; a patch attached inline with a file name is an attachment, as in Rspamd', async () => {
  const s = await scanner();
  // As Mozilla 1.x sends a patch "attached inline" (easy-ham-1/01045 of the development split):
  // the body, then the patch as text/plain with Content-Disposition: inline and a file name.
  const patch = message(
    [
      'This is a multi-part message in MIME format.',
      '--------------090303060407010605030507',
      'Content-Type: text/plain; charset=us-ascii; format=flowed',
      'Content-Transfer-Encoding: 7bit',
      '',
      'Here is a spec patch that adds --without kernsrc, to remove the build',
      'dependency on kernel-source.',
      '--------------090303060407010605030507',
      'Content-Type: text/plain;',
      ' name="alsa-driver.spec.patch"',
      'Content-Transfer-Encoding: 7bit',
      'Content-Disposition: inline;',
      ' filename="alsa-driver.spec.patch"',
      '',
      '--- alsa-driver.spec.orig\t2002-10-03 10:12:01.000000000 +0200',
      '+++ alsa-driver.spec\t2002-10-03 10:20:44.000000000 +0200',
      '@@ -1,3 +1,4 @@',
      '+%{?_without_kernsrc:%define kernsrc 0}',
      '--------------090303060407010605030507--',
    ],
    ['User-Agent: Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.0.1) Gecko/20020826', 'Content-Type: multipart/mixed; boundary="------------090303060407010605030507"'],
  );
  assert.ok(!names(await s.scan(patch, meta())).has('CTYPE_MIXED_BOGUS'));
  // The same two parts without the file name are two body texts: nothing but text in a mixed
  // container, which is what the rule is about.
  const unnamed = Buffer.from(
    patch.toString('latin1').replace(';\r\n name="alsa-driver.spec.patch"', '').replace('inline;\r\n filename="alsa-driver.spec.patch"', 'inline'),
    'latin1',
  );
  assert.equal(symbol(await s.scan(unnamed, meta()), 'CTYPE_MIXED_BOGUS')?.score, 1);
});

/** A shop's newsletter: multipart/alternative of the given text and HTML (or wrapped in a multipart/mixed). */
function newsletter(text: string[], html: string, top: 'alternative' | 'mixed' = 'alternative'): Buffer {
  const alt = ['--alt-1', 'Content-Type: text/plain; charset=us-ascii', '', ...text, '--alt-1', 'Content-Type: text/html; charset=us-ascii', '', html, '--alt-1--'];
  const head = HEAD.map((h) => (h.startsWith('From:') ? 'From: Example Shop <news@shop.example.com>' : h));
  if (top === 'alternative') return message(alt, ['Content-Type: multipart/alternative; boundary="alt-1"'], head);
  return message(['--mix', 'Content-Type: multipart/alternative; boundary="alt-1"', '', ...alt, '--mix--'], ['Content-Type: multipart/mixed; boundary="mix"'], head);
}

const SALE = 'https://shop.example.com/sale';
const PREFS = 'https://shop.example.com/prefs';
const TEXT = [`Our summer sale starts today: ${SALE}`, `Manage your subscription: ${PREFS}`];
const HTML = `<html><body><p>Our <a href="${SALE}">summer sale</a> starts today.</p><p><a href="${PREFS}">Manage your subscription</a></p></body></html>`;

// Every case below was also sent to Rspamd 3.4, which gave the same verdict and total.
test('URI_COUNT_ODD: each link in the text and again in the HTML is even; one more sighting makes it odd', async () => {
  const s = await scanner();
  const even = await s.scan(newsletter(TEXT, HTML), meta());
  assert.ok(!names(even).has('URI_COUNT_ODD'), 'two links, each twice');
  const shown = HTML.replace('starts today.</p>', `starts today. Details at ${SALE}</p>`);
  const odd = await s.scan(newsletter(TEXT, shown), meta());
  assert.deepEqual(symbol(odd, 'URI_COUNT_ODD')?.options, ['5'], 'the HTML text shows the sale link once more');
  assert.equal(symbol(odd, 'URI_COUNT_ODD')?.score, 1);
  const repeated = await s.scan(newsletter([...TEXT, `Again: ${SALE}`], HTML), meta());
  assert.deepEqual(symbol(repeated, 'URI_COUNT_ODD')?.options, ['5'], 'every occurrence in a text counts');
  const banner = HTML.replace('<body>', '<body><img src="https://shop.example.com/banner.png">');
  assert.deepEqual(symbol(await s.scan(newsletter(TEXT, banner), meta()), 'URI_COUNT_ODD')?.options, ['5'], 'an image counts');
  // Only the top Content-Type is read: the same parts inside a multipart/mixed are not judged.
  assert.ok(!names(await s.scan(newsletter(TEXT, shown, 'mixed'), meta())).has('URI_COUNT_ODD'));
});

test('URI_COUNT_ODD leaves out what Rspamd leaves out: plain links first met in the HTML, link texts, bare host names', async () => {
  const s = await scanner();
  // A privacy link only the HTML has, behind a plain text: its record carries no flag.
  const extra = HTML.replace('</a></p></body>', `</a> <a href="https://shop.example.com/privacy">Privacy</a></p></body>`);
  assert.ok(!names(await s.scan(newsletter(TEXT, extra), meta())).has('URI_COUNT_ODD'));
  // A link whose text is its own URL: the sale link counts in the text, as the link, as its text
  // and in the HTML text (4), the other one twice: 6.
  const selfShown = HTML.replace('>summer sale</a>', `>${SALE}</a>`);
  assert.ok(!names(await s.scan(newsletter(TEXT, selfShown), meta())).has('URI_COUNT_ODD'));
  // Rspamd reads the text of a two-part alternative strictly: a bare host name is no URL there,
  // a `www.` name is.
  assert.ok(!names(await s.scan(newsletter([...TEXT, 'More at shop.example.com'], HTML), meta())).has('URI_COUNT_ODD'));
  assert.deepEqual(symbol(await s.scan(newsletter([...TEXT, 'More at www.shop.example.com'], HTML), meta()), 'URI_COUNT_ODD')?.options, ['5']);
});
