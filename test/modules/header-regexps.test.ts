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
