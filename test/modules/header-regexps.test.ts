// Header regexp and forged-MUA rules (Rspamd rules/regexp/headers.lua) on recorded and fixture
// messages, and on messages shaped like the mailers they name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { meta, metaFromRecorded, names, recordedCase, scanner, symbol, testMessage } from './helpers.js';

function mail(headers: string, body = 'Hello,\r\nplain text body.\r\n', ctype = 'text/plain; charset=us-ascii'): Buffer {
  return Buffer.from(
    `Date: Sun, 22 Nov 2026 04:00:00 +0000\r\nSubject: hello\r\nMIME-Version: 1.0\r\nContent-Type: ${ctype}\r\n${headers}\r\n${body}`,
  );
}

const BASE = 'From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nMessage-ID: <abc.123@example.org>\r\n';

test('FORGED_MUA_OUTLOOK on the recorded Rspamd 3.4 case, with its score', async () => {
  const c = recordedCase('a10-flags-groups');
  assert.equal(c.symbols['FORGED_MUA_OUTLOOK']?.score, 3);
  const r = await (await scanner()).scan(c.message, metaFromRecorded(c));
  assert.equal(symbol(r, 'FORGED_MUA_OUTLOOK')?.score, 3);
  // Every rule of this module that Rspamd did not report must stay silent here too.
  for (const n of names(r)) {
    if (/^(FORGED_|SUSPICIOUS_BOUNDARY|RATWARE|MISSING_MIMEOLE|INVALID_MSGID|MIME_HEADER_CTYPE_ONLY)/.test(n)) assert.ok(c.symbols[n], `${n} not in Rspamd's reply`);
  }
});

test('fixture messages: invalid Message-ID, 8-bit subject, Postfix Received without a from clause', async () => {
  const s = await scanner();
  assert.ok(names(await s.scan(testMessage('fws_tp.eml'), meta())).has('INVALID_MSGID'));
  assert.ok(names(await s.scan(testMessage('currency.eml'), meta())).has('SUBJECT_NEEDS_ENCODING'));
  assert.ok(names(await s.scan(testMessage('external_relay.eml'), meta())).has('INVALID_POSTFIX_RECEIVED'));
});

test('needless base64 / quoted-printable in From, To and Reply-To; real 8-bit names are fine', async () => {
  const s = await scanner();
  const r = await s.scan(mail('From: =?utf-8?B?QWxpY2U=?= <alice@example.org>\r\nTo: =?utf-8?Q?Bob?= <bob@example.net>\r\nReply-To: =?utf-8?B?UmVwbHk=?= <r@example.org>\r\nMessage-ID: <a.1@example.org>\r\n'), meta());
  for (const n of ['FROM_EXCESS_BASE64', 'TO_EXCESS_QP', 'REPLYTO_EXCESS_BASE64']) assert.ok(names(r).has(n), n);
  const ok = await s.scan(mail('From: =?utf-8?B?w4FsaWNl?= <alice@example.org>\r\nTo: bob@example.net\r\nMessage-ID: <a.2@example.org>\r\n'), meta());
  assert.ok(!names(ok).has('FROM_EXCESS_BASE64'), 'Álice needs encoding');
});

test('Outlook Express claims: ratware hash, missing MimeOLE, HTML-only; a genuine header set passes', async () => {
  const s = await scanner();
  const forged = mail(
    'From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nMessage-ID: <00ab12cd$0a1b2c3d$4e5f6a7b@example.org>\r\n' +
      'X-Mailer: Microsoft Outlook Express 6.00.2600.0000\r\nX-MSMail-Priority: Normal\r\n',
    '<html><body><p>Buy now</p></body></html>\r\n',
    'text/html; charset=us-ascii',
  );
  const r = await s.scan(forged, meta());
  for (const n of ['RATWARE_MS_HASH', 'MISSING_MIMEOLE', 'FORGED_OUTLOOK_TAGS']) assert.ok(names(r).has(n), n);
  assert.ok(!names(r).has('FORGED_MUA_OUTLOOK'), 'the OE $-style Message-ID is genuine');
  const genuine = mail(
    'From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nMessage-ID: <001a01c2$3b4c5d60$0a00a8c0@example.org>\r\n' +
      'X-Mailer: Microsoft Outlook Express 6.00.2600.0000\r\nX-MSMail-Priority: Normal\r\nX-MimeOLE: Produced By Microsoft MimeOLE V6.00.2600.0000\r\n',
  );
  const g = await s.scan(genuine, meta());
  for (const n of ['RATWARE_MS_HASH', 'MISSING_MIMEOLE', 'FORGED_MUA_OUTLOOK', 'FORGED_OUTLOOK_HTML']) assert.ok(!names(g).has(n), n);
  const wrongId = await s.scan(mail(`${BASE}X-Mailer: Microsoft Outlook Express 6.00.2600.0000\r\n`), meta());
  assert.equal(symbol(wrongId, 'FORGED_MUA_OUTLOOK')?.score, 3);
});

test('sorted recipient lists of seven or more, The Bat! and Mozilla Message-ID shapes', async () => {
  const s = await scanner();
  const rcpts = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => `${x}@example.net`);
  const sorted = await s.scan(mail(`From: Alice <alice@example.org>\r\nTo: ${rcpts.join(', ')}\r\nMessage-ID: <m.1@example.org>\r\n`), meta());
  assert.equal(symbol(sorted, 'SORTED_RECIPS')?.score, 3.5);
  const shuffled = await s.scan(mail(`From: Alice <alice@example.org>\r\nTo: ${[...rcpts].reverse().join(', ')}\r\nMessage-ID: <m.2@example.org>\r\n`), meta());
  assert.ok(!names(shuffled).has('SORTED_RECIPS'));
  const bat = await s.scan(mail('From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nMessage-ID: <1234.5678@example.org>\r\nX-Mailer: The Bat! (v1.62r)\r\n'), meta());
  assert.ok(names(bat).has('FORGED_MUA_THEBAT_MSGID'));
  const tb = await s.scan(mail('From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nMessage-ID: <nothing-like-mozilla@example.org>\r\nUser-Agent: Mozilla Thunderbird 1.0 (Windows/20041206)\r\n'), meta());
  assert.ok(names(tb).has('FORGED_MUA_THUNDERBIRD_MSGID_UNKNOWN'));
});

test('raw input (Raw: yes) is not judged by header rules', async () => {
  const r = await (await scanner()).scan(mail('From: =?utf-8?B?QWxpY2U=?= <alice@example.org>\r\nTo: bob@example.net\r\n'), meta({ raw: true }));
  assert.ok(!names(r).has('FROM_EXCESS_BASE64'));
});

test('INTRODUCTION: the sender introduces itself by name or title (Rspamd rules/regexp/misc.lua)', async () => {
  const s = await scanner();
  for (const text of ['Dear friend,\r\nMy name is Peter Okon and I work for the ministry.\r\n', 'Good day. I am Dr. Peter Okon, an accountant.\r\n', 'This is Mrs Helen Smith writing from Lagos.\r\n']) {
    const r = await s.scan(mail(`${BASE}\r\n`, text), meta());
    assert.equal(symbol(r, 'INTRODUCTION')?.score, 2, text);
  }
  // "I am" without a title, and a name mentioned in passing, are ordinary.
  const plain = await s.scan(mail(`${BASE}\r\n`, 'I am drafting the minutes; his name is on the list.\r\n'), meta());
  assert.ok(!names(plain).has('INTRODUCTION'));
});

/** A message whose every header is given (no default Subject), with a plain body. */
function raw(headers: string, body = 'Hello,\r\nplain text body.\r\n'): Buffer {
  return Buffer.from(`Date: Sun, 22 Nov 2026 04:00:00 +0000\r\nMIME-Version: 1.0\r\n${headers}\r\n${body}`);
}
const PLAIN = 'From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nMessage-ID: <abc.123@example.org>\r\nContent-Type: text/plain; charset=us-ascii\r\n';
const SUBJECT_RULES = ['SUBJECT_ENDS_EXCLAIM', 'SUBJECT_HAS_EXCLAIM', 'SUBJECT_ENDS_QUESTION', 'SUBJECT_HAS_QUESTION', 'SUBJECT_HAS_CURRENCY', 'SUBJECT_ENDS_SPACES'];

test('subject punctuation: ends with or contains ! and ?, currency signs, trailing blanks (Rspamd 3.4 scores)', async () => {
  const s = await scanner();
  const fired = async (subject: string) => {
    const r = await s.scan(raw(`${PLAIN}Subject: ${subject}\r\n`), meta());
    return { r, got: SUBJECT_RULES.filter((n) => names(r).has(n)).sort() };
  };
  const q = await fired('Are you coming tomorrow?');
  assert.deepEqual(q.got, ['SUBJECT_ENDS_QUESTION']);
  assert.equal(symbol(q.r, 'SUBJECT_ENDS_QUESTION')?.score, 1);
  assert.deepEqual((await fired('Is it? I think so')).got, ['SUBJECT_HAS_QUESTION']);
  assert.deepEqual((await fired('Act now! Offer ends today')).got, ['SUBJECT_HAS_EXCLAIM']);
  // Rspamd keeps the blanks a value ends with: `!` then spaces still ends with `!`.
  const spaced = await fired('Act now!   ');
  assert.deepEqual(spaced.got, ['SUBJECT_ENDS_EXCLAIM', 'SUBJECT_ENDS_SPACES']);
  assert.equal(symbol(spaced.r, 'SUBJECT_ENDS_SPACES')?.score, 0.5);
  assert.equal(symbol(spaced.r, 'SUBJECT_ENDS_EXCLAIM')?.score, 0);
  // Encoded words decoded: a euro sign is a currency symbol; `?` then a no-break space still ends
  // with a question (`\s` with Unicode), but a no-break space is not one of `\s+$`'s ASCII blanks.
  const euro = await fired('=?utf-8?Q?Only_=E2=82=AC5_today?=');
  assert.deepEqual(euro.got, ['SUBJECT_HAS_CURRENCY']);
  assert.equal(symbol(euro.r, 'SUBJECT_HAS_CURRENCY')?.score, 1);
  assert.deepEqual((await fired('=?utf-8?Q?Ready=3F=C2=A0?=')).got, ['SUBJECT_ENDS_QUESTION']);
  assert.deepEqual((await fired('Save $100 on your order')).got, ['SUBJECT_HAS_CURRENCY']);
  // A raw Latin-1 pound sign is not UTF-8: Rspamd reads U+FFFD there, no currency sign.
  const latin1 = await s.scan(Buffer.from(`Date: Sun, 22 Nov 2026 04:00:00 +0000\r\n${PLAIN}Subject: Gambler wins \xa37,000\r\n\r\nHello\r\n`, 'latin1'), meta());
  assert.ok(!names(latin1).has('SUBJECT_HAS_CURRENCY'));
  // A folded subject: the fold is one space inside, not a trailing blank.
  assert.deepEqual((await fired('Quarterly figures\r\n\tfor the board')).got, []);
  assert.deepEqual((await fired('Minutes of the meeting')).got, []);
});

test('X-Mailer age and forgery: OLD_X_MAILER, FORGED_X_MAILER, FORGED_IMS, XM_UA_NO_VERSION', async () => {
  const s = await scanner();
  const scan = (extra: string) => s.scan(raw(`${PLAIN}Subject: report\r\n${extra}`), meta());
  const oe = await scan('X-Mailer: Microsoft Outlook Express 6.00.2900.5512\r\n');
  assert.equal(symbol(oe, 'OLD_X_MAILER')?.score, 2);
  assert.ok(!names(oe).has('FORGED_X_MAILER'));
  assert.ok(!names(await scan('X-Mailer: Microsoft Outlook 16.0\r\n')).has('OLD_X_MAILER'));
  assert.equal(symbol(await scan('X-Mailer: Mozilla Thunderbird 1.0.2 (Windows/20050317)\r\n'), 'FORGED_X_MAILER')?.score, 4.5);
  assert.ok(names(await scan('X-Mailer: X-Mailer: PHP\r\n')).has('FORGED_X_MAILER'));
  assert.ok(names(await scan('X-Mailer: iPhone Mail\r\n')).has('FORGED_X_MAILER'));
  // A genuine iOS build: not forged, and iOS 4 (8L1) is old.
  const ios4 = await scan('X-Mailer: iPhone Mail (8L1)\r\n');
  assert.ok(names(ios4).has('OLD_X_MAILER') && !names(ios4).has('FORGED_X_MAILER'));
  const ios15 = await scan('X-Mailer: iPhone Mail (19A346)\r\n');
  assert.ok(!names(ios15).has('OLD_X_MAILER') && !names(ios15).has('FORGED_X_MAILER'));
  // Exchange 5.5 names itself in its own Received line; a bare X-Mailer claiming it is forged.
  const ims = 'X-Mailer: Internet Mail Service (5.5.2653.19)\r\n';
  assert.equal(symbol(await scan(ims), 'FORGED_IMS')?.score, 3);
  const exch = await s.scan(
    raw(`Received: by EXCH1 with Internet Mail Service (5.5.2653.19)\r\n\tid <K1Q2R3>; Tue, 8 Dec 2020 07:10:54 -0600\r\n${PLAIN}Subject: report\r\n${ims}`),
    meta(),
  );
  assert.ok(!names(exch).has('FORGED_IMS'));
  // Folded before the version, as Exchange wrote it: Rspamd reads the fold as one space.
  const folded = await s.scan(
    raw(`Received: by EXCH1.example.com with Internet Mail Service\r\n    (5.5.2654.52) id <M82N0FTN>; Wed, 28 Aug 2002 09:29:20 +0100\r\n${PLAIN}Subject: report\r\n${ims}`),
    meta(),
  );
  assert.ok(!names(folded).has('FORGED_IMS'));
  // A mailer name without any digit, unless it points at a web page.
  assert.equal(symbol(await scan('X-Mailer: SuperMailer\r\n'), 'XM_UA_NO_VERSION')?.score, 0.01);
  assert.ok(names(await scan('User-Agent: Roundcube Webmail\r\n')).has('XM_UA_NO_VERSION'));
  assert.ok(!names(await scan('X-Mailer: SuperMailer 2.1\r\n')).has('XM_UA_NO_VERSION'));
  assert.ok(!names(await scan('X-Mailer: SuperMailer\r\nUser-Agent: see https://mailer.example\r\n')).has('XM_UA_NO_VERSION'));
});

test('raw header shapes: CTE_CASE, CT_EXTRA_SEMI, FROM_NEEDS_ENCODING, TO_NEEDS_ENCODING', async () => {
  const s = await scanner();
  const base = 'Message-ID: <m.9@example.org>\r\nSubject: report\r\n';
  const cte = await s.scan(raw(`${PLAIN}${base}Content-Transfer-Encoding: 7Bit\r\n`), meta());
  assert.equal(symbol(cte, 'CTE_CASE')?.score, 0.5);
  assert.ok(!names(await s.scan(raw(`${PLAIN}${base}Content-Transfer-Encoding: 7bit\r\n`), meta())).has('CTE_CASE'));
  const semi = await s.scan(raw(`From: a@example.org\r\nTo: b@example.net\r\n${base}Content-Type: text/plain; charset=us-ascii;\r\n`), meta());
  assert.equal(symbol(semi, 'CT_EXTRA_SEMI')?.score, 1);
  assert.ok(!names(await s.scan(raw(`${PLAIN}${base}`), meta())).has('CT_EXTRA_SEMI'));
  // Raw UTF-8 in From and To: the names needed encoded words.
  const eight = await s.scan(raw(`From: Jörg Müller <joerg@example.org>\r\nTo: Zoë <zoe@example.net>\r\n${base}Content-Type: text/plain; charset=utf-8\r\n`), meta());
  assert.equal(symbol(eight, 'FROM_NEEDS_ENCODING')?.score, 1);
  assert.equal(symbol(eight, 'TO_NEEDS_ENCODING')?.score, 1);
  const encoded = await s.scan(raw(`From: =?utf-8?Q?J=C3=B6rg?= <joerg@example.org>\r\nTo: =?utf-8?Q?Zo=C3=AB?= <zoe@example.net>\r\n${base}Content-Type: text/plain; charset=utf-8\r\n`), meta());
  assert.ok(!names(encoded).has('FROM_NEEDS_ENCODING') && !names(encoded).has('TO_NEEDS_ENCODING'));
});

test('SUSPICIOUS_RECIPS: seven or more recipients, neighbours of one length and prefix', async () => {
  const s = await scanner();
  const send = (to: string[]) => s.scan(raw(`From: Alice <alice@example.org>\r\nTo: ${to.join(', ')}\r\nMessage-ID: <r.1@example.org>\r\nSubject: news\r\nContent-Type: text/plain\r\n`), meta());
  // Generated mailbox names: user1..user7 at one domain, listed out of order.
  const generated = ['user4', 'user1', 'user7', 'user2', 'user6', 'user3', 'user5'].map((u) => `${u}@example.net`);
  const r = await send(generated);
  assert.equal(symbol(r, 'SUSPICIOUS_RECIPS')?.score, 1.5);
  assert.ok(!names(r).has('SORTED_RECIPS'));
  // A team list: different names and lengths.
  const team = ['alice', 'bob', 'carol.jones', 'dave', 'erin.k', 'frank', 'grace.hopper'].map((u) => `${u}@example.net`);
  assert.ok(!names(await send(team)).has('SUSPICIOUS_RECIPS'));
  // Six generated names are too few to judge.
  assert.ok(!names(await send(generated.slice(0, 6))).has('SUSPICIOUS_RECIPS'));
});

test('list and host signs: PRECEDENCE_BULK, HAS_ORG_HEADER, HAS_XOIP, compromised-host headers, MID_RHS_WWW', async () => {
  const s = await scanner();
  const scan = (extra: string, body?: string) => s.scan(raw(`${PLAIN}Subject: report\r\n${extra}`, body), meta());
  const plain = await scan('');
  const signs = ['PRECEDENCE_BULK', 'HAS_ORG_HEADER', 'HAS_XOIP', 'HAS_XAW', 'HAS_X_ANTIABUSE', 'HAS_X_AS', 'HAS_X_POS', 'HAS_X_PHP_SCRIPT', 'HAS_PHPMAILER_SIG', 'HAS_WP_URI', 'MID_RHS_WWW', 'ENVFROM_SERVICE_ACCT'];
  for (const n of signs) assert.ok(!names(plain).has(n), n);
  assert.equal(symbol(await scan('Precedence: bulk\r\n'), 'PRECEDENCE_BULK')?.score, 0);
  assert.ok(!names(await scan('Precedence: list\r\n')).has('PRECEDENCE_BULK'));
  assert.ok(names(await scan('Organisation: Example Ltd\r\n')).has('HAS_ORG_HEADER'));
  assert.ok(names(await scan('X-Originating-IP: [192.0.2.7]\r\n')).has('HAS_XOIP'));
  assert.ok(names(await scan('X-Authentication-Warning: host.example: www-data set sender to info@example.org using -f\r\n')).has('HAS_XAW'));
  assert.ok(names(await scan('X-AntiAbuse: Primary Hostname - host.example\r\n')).has('HAS_X_ANTIABUSE'));
  const xas = await scan('X-Authenticated-Sender: accord.host-care.example: sales@shop.example\r\n');
  assert.deepEqual(symbol(xas, 'HAS_X_AS')?.options, ['sales@shop.example']);
  assert.deepEqual(symbol(await scan('X-Authenticated-Sender: sales\r\n'), 'HAS_X_AS')?.options ?? [], []);
  assert.ok(names(await scan('X-PHP-Originating-Script: 1001:mailer.php\r\n')).has('HAS_X_POS'));
  assert.ok(names(await scan('X-PHP-Script: shop.example/sendmail.php for 192.0.2.9\r\n')).has('HAS_X_PHP_SCRIPT'));
  assert.ok(names(await scan('X-Mailer: PHPMailer 6.1.4 (https://github.com/PHPMailer/PHPMailer)\r\n')).has('HAS_PHPMAILER_SIG'));
  const wp = await scan('', 'See http://blog.example.org/wp-content/uploads/2020/offer.html today.\r\n');
  assert.ok(names(wp).has('HAS_WP_URI'));
  assert.ok(!names(await scan('', 'See http://blog.example.org/wp.html today.\r\n')).has('HAS_WP_URI'));
  const www = await s.scan(raw('From: a@example.org\r\nTo: b@example.net\r\nMessage-ID: <20201208.1@www.example.org>\r\nSubject: report\r\nContent-Type: text/plain\r\n'), meta());
  assert.equal(symbol(www, 'MID_RHS_WWW')?.score, 0.5);
});

test('PHPMailer boundary, ENVFROM_SERVICE_ACCT, and the AUTOGEN_PHP_SPAMMY composite', async () => {
  const s = await scanner();
  const multipart = raw(
    'From: shop@example.org\r\nTo: b@example.net\r\nMessage-ID: <p.1@example.org>\r\nSubject: Your account is suspended!\r\n' +
      'Content-Type: multipart/alternative; boundary="b1_Ez5tmpb4bSqknyUZ1B1hIvLAfR1MlspDEKGioCOXc"\r\n',
    '--b1_Ez5tmpb4bSqknyUZ1B1hIvLAfR1MlspDEKGioCOXc\r\nContent-Type: text/plain\r\n\r\nLog in now.\r\n--b1_Ez5tmpb4bSqknyUZ1B1hIvLAfR1MlspDEKGioCOXc--\r\n',
  );
  const r = await s.scan(multipart, meta({ from: 'www-data@web1.example.org' }));
  for (const n of ['HAS_PHPMAILER_SIG', 'SUBJECT_ENDS_EXCLAIM']) assert.ok(names(r).has(n), n);
  assert.equal(symbol(r, 'ENVFROM_SERVICE_ACCT')?.score, 1);
  assert.equal(symbol(r, 'AUTOGEN_PHP_SPAMMY')?.score, 1);
  // The same message from a person's envelope, with a calm subject: neither fires.
  const calm = await s.scan(Buffer.from(multipart.toString('latin1').replace('suspended!', 'updated'), 'latin1'), meta({ from: 'alice@example.org' }));
  assert.ok(names(calm).has('HAS_PHPMAILER_SIG'));
  assert.ok(!names(calm).has('ENVFROM_SERVICE_ACCT') && !names(calm).has('AUTOGEN_PHP_SPAMMY'));
});

/** Headers (CRLF-joined) and a body: a whole message. */
const msg = (headers: string[], body: string): Buffer => Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}`, 'utf8');
const B64_NOTE = Buffer.from('Hello Bob,\r\nthe invoice for July is attached to the shared folder.\r\nRegards, Alice\r\n').toString('base64');

// Each of these shapes was sent to Rspamd 3.4 as well: it reported the same symbols.
test('web-mail signatures: MAIL_RU_MAILER / MAILER_1C_8 with needless base64 give their composites, which take the penalties', async () => {
  const s = await scanner();
  const mailRu = msg(
    [
      'Received: from [198.51.100.23] by e.mail.ru with HTTP;',
      '\tTue, 01 Aug 2023 13:00:00 +0300',
      'From: =?UTF-8?B?QWxpY2UgUGV0cm92YQ==?= <alice.petrova@mail.ru>',
      'To: bob@example.org',
      'Subject: =?UTF-8?B?SW52b2ljZSBmb3IgSnVseQ==?=',
      'X-Mailer: Mail.Ru Mailer 1.0',
      'Date: Tue, 01 Aug 2023 13:00:00 +0300',
      'Message-ID: <1690884000.123456789@f123.i.mail.ru>',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
    ],
    `${B64_NOTE}\r\n`,
  );
  const r = await s.scan(mailRu, meta());
  assert.equal(symbol(r, 'MAIL_RU_MAILER_BASE64')?.score, 0);
  // The default policy drops the mailer symbol and every base64 symbol it names.
  for (const gone of ['MAIL_RU_MAILER', 'FROM_EXCESS_BASE64', 'SUBJ_EXCESS_BASE64', 'MIME_BASE64_TEXT']) assert.ok(!names(r).has(gone), gone);
  assert.ok(names(r).has('MIME_BASE64_TEXT_BOGUS'), 'not an atom: kept');
  // The same X-Mailer without Mail.Ru's web hop is not the web mailer: the penalties stay.
  const noHop = await s.scan(Buffer.from(mailRu.toString('utf8').replace('by e.mail.ru with HTTP', 'by mx.example.org with ESMTP'), 'utf8'), meta());
  assert.ok(!names(noHop).has('MAIL_RU_MAILER') && !names(noHop).has('MAIL_RU_MAILER_BASE64'));
  assert.equal(symbol(noHop, 'SUBJ_EXCESS_BASE64')?.score, 1.5);
  assert.equal(symbol(noHop, 'FROM_EXCESS_BASE64')?.score, 1.5);

  const oneC = (mailer: string) =>
    msg(
      ['From: =?UTF-8?B?QnVraGdhbHRlcmlh?= <buh@example.ru>', 'To: client@example.org', 'Subject: =?UTF-8?B?SW52b2ljZSAxMjM0?=', `X-Mailer: ${mailer}`,
        'Date: Tue, 01 Aug 2023 13:00:00 +0300', 'Message-ID: <20230801130000.1234@example.ru>', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'],
      `${B64_NOTE}\r\n`,
    );
  const c = await s.scan(oneC('1C:Enterprise 8.3'), meta());
  assert.equal(symbol(c, 'MAILER_1C_8_BASE64')?.score, 0);
  for (const gone of ['MAILER_1C_8', 'FROM_EXCESS_BASE64', 'SUBJ_EXCESS_BASE64']) assert.ok(!names(c).has(gone), gone);
  const v7 = await s.scan(oneC('1C:Enterprise 7.7'), meta());
  assert.ok(!names(v7).has('MAILER_1C_8') && names(v7).has('SUBJ_EXCESS_BASE64'), 'only 8.2 and 8.3');
});

test('YANDEX_RU_MAILER with a multipart/mixed of text only: the composite takes CTYPE_MIXED_BOGUS, HAS_ATTACHMENT stays', async () => {
  const s = await scanner();
  const B = '----==--bound.1234.web12f.yandex.ru';
  const yandex = (received: string) =>
    msg(
      [received, '\tTue, 01 Aug 2023 13:00:00 +0300', 'From: Ivan <ivan@yandex.ru>', 'To: bob@example.org', 'Subject: notes', 'X-Mailer: Yamail [ http://yandex.ru ] 5.0',
        'Date: Tue, 01 Aug 2023 13:00:00 +0300', 'Message-ID: <12345678901690884000@web12f.yandex.ru>', 'MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${B}"`],
      [`--${B}`, 'Content-Type: multipart/alternative; boundary="inner"', 'Content-Disposition: attachment', '', '--inner', 'Content-Type: text/plain; charset=utf-8', '',
        'Here are the notes from the meeting.', '--inner', 'Content-Type: text/html; charset=utf-8', '', '<div>Here are the notes from the meeting.</div>', '--inner--', `--${B}--`, ''].join('\r\n'),
    );
  const r = await s.scan(yandex('Received: by web12f.yandex.ru with HTTP;'), meta());
  assert.equal(symbol(r, 'YANDEX_RU_MAILER_CTYPE_MIXED_BOGUS')?.score, 0);
  assert.ok(!names(r).has('CTYPE_MIXED_BOGUS') && !names(r).has('YANDEX_RU_MAILER'));
  assert.ok(names(r).has('HAS_ATTACHMENT'), '-HAS_ATTACHMENT: kept');
  const relayed = await s.scan(yandex('Received: by mx.example.org with ESMTP id 77;'), meta());
  assert.equal(symbol(relayed, 'CTYPE_MIXED_BOGUS')?.score, 1);
  assert.ok(!names(relayed).has('YANDEX_RU_MAILER'));
});

test('STRONGMAIL, SUBJ_EXCESS_QP / _BASE64, X_PHP_FORGED_0X and X_PHPOS_FAKE: hit and miss', async () => {
  const s = await scanner();
  const base = (extra: string[], subject = 'Your order'): Buffer =>
    msg(['From: Shop <noreply@example-shop.com>', 'To: bob@example.org', `Subject: ${subject}`, 'Date: Tue, 01 Aug 2023 10:00:00 +0000',
      'Message-ID: <order.1@example-shop.com>', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=us-ascii', ...extra], 'Your order has shipped.\r\n');
  const sm = await s.scan(base(['Received: from strongmail ([192.0.2.44]) by mta7.example-mailer.com (-); Tue, 01 Aug 2023 10:00:00 -0700']), meta());
  assert.equal(symbol(sm, 'STRONGMAIL')?.score, 6);
  const postfix = await s.scan(base(['Received: from strongmail (mta7.example-mailer.com [192.0.2.44]) by mx.example.org (Postfix) with ESMTP id 1A2B; Tue, 01 Aug 2023 10:00:00 -0700']), meta());
  assert.ok(!names(postfix).has('STRONGMAIL'), 'a host merely named strongmail, relayed normally');

  assert.equal(symbol(await s.scan(base([], '=?us-ascii?Q?Meeting_moved_to_Thursday?='), meta()), 'SUBJ_EXCESS_QP')?.score, 1.2);
  assert.equal(symbol(await s.scan(base([], '=?utf-8?B?TWVldGluZyBtb3ZlZA==?='), meta()), 'SUBJ_EXCESS_BASE64')?.score, 1.5);
  const cafe = await s.scan(base([], '=?utf-8?Q?Caf=C3=A9_on_Thursday?='), meta());
  assert.ok(!names(cafe).has('SUBJ_EXCESS_QP'), 'é needs the encoding');

  assert.equal(symbol(await s.scan(base(['X-PHP-Originating-Script: 0123:class.mailer.php']), meta()), 'X_PHP_FORGED_0X')?.score, 4);
  assert.equal(symbol(await s.scan(base(['X-PHP-Originating-Script: 1234567:mailer.php']), meta()), 'X_PHPOS_FAKE')?.score, 3);
  const real = await s.scan(base(['X-PHP-Originating-Script: 1000:mailer.php']), meta());
  for (const n of ['X_PHP_FORGED_0X', 'X_PHPOS_FAKE']) assert.ok(!names(real).has(n), n);
  assert.ok(names(real).has('HAS_X_POS'));
});

test('HEADER_*_EMPTY_DELIMITER: nothing between the colon and the value; a space or a tab is a delimiter', async () => {
  const s = await scanner();
  const bare = msg(
    ['From:alice@example.org', 'To:bob@example.net', 'Cc:carol@example.net', 'Reply-To:alice@example.org', 'Subject: lunch', 'Date:Tue, 01 Aug 2023 10:00:00 +0000',
      'Message-ID: <nd.1@example.org>', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=us-ascii'],
    'Lunch at noon?\r\n',
  );
  const r = await s.scan(bare, meta());
  for (const h of ['FROM', 'TO', 'CC', 'REPLYTO', 'DATE']) assert.equal(symbol(r, `HEADER_${h}_EMPTY_DELIMITER`)?.score, 1, h);
  const spaced = await s.scan(Buffer.from(bare.toString('utf8').replace(/^(From|To|Cc|Reply-To|Date):/gm, '$1:\t'), 'utf8'), meta());
  assert.ok(![...names(spaced)].some((n) => n.endsWith('_EMPTY_DELIMITER')));
});
