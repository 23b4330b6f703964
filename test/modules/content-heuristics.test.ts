import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import { contentHeuristicsModule } from '../../src/modules/content-heuristics/index.js';
import type { ScanMeta, ScanResult } from '../../src/plugin-api/index.js';
import { engineConfig, fixtureMessage, meta, symbol, testMessage } from './helpers.js';

const OWN = new Set(Object.keys(contentHeuristicsModule.symbols ?? {}));

async function scan(message: Buffer, m: ScanMeta = meta(), config: Record<string, unknown> = {}): Promise<ScanResult> {
  const e = await createEngine(engineConfig({ content_heuristics: config }), [contentHeuristicsModule]);
  return e.scan(message, m);
}

function own(r: ScanResult): string[] {
  return r.symbols.map((s) => s.name).filter((n) => OWN.has(n)).sort();
}

interface Mail {
  headers?: string[];
  subject?: string;
  type?: string;
  body: string;
}

/** A message as a bulk mailer or a person would send it; headers first, CRLF line ends. */
function mail({ headers = [], subject = 'Meeting notes', type = 'text/plain; charset=us-ascii', body }: Mail): Buffer {
  const head = [
    'Received: from relay.example.net (relay.example.net [192.0.2.25]) by mx.example.org (Postfix) with ESMTP id 4A1B2C; Tue, 20 Aug 2002 10:00:00 +0000',
    'From: Alice <alice@example.net>',
    'To: Bob <bob@example.org>',
    `Subject: ${subject}`,
    'Date: Tue, 20 Aug 2002 09:58:00 +0000',
    'Message-ID: <20020820095800.1234@example.net>',
    'MIME-Version: 1.0',
    `Content-Type: ${type}`,
    ...headers,
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body.replace(/\n/g, '\r\n')}\r\n`);
}

const PLAIN = 'Hi Bob,\n\nthe notes from Monday are attached to the wiki page. Talk soon.\n\nAlice';

test('an ordinary message and the project ham fixture insert none of the content symbols', async () => {
  assert.deepEqual(own(await scan(mail({ body: PLAIN }))), []);
  assert.deepEqual(own(await scan(fixtureMessage('ham.eml'))), []);
});

test('SUBJ_PADDED_TAG: blanks padding a subject before a tag; folding is not padding', async () => {
  const padded = await scan(mail({ subject: 'Lose weight now                              18070', body: PLAIN }));
  assert.deepEqual(own(padded), ['SUBJ_PADDED_TAG']);
  const folded = Buffer.from(mail({ body: PLAIN }).toString('latin1').replace('Subject: Meeting notes', 'Subject: Meeting notes about the long\r\n        planning session'), 'latin1');
  assert.deepEqual(own(await scan(folded)), []);
});

test('MSGID_RATWARE_ZERO: zero-padded $-joined fields; an Outlook Express id is not', async () => {
  const rat = mail({ body: PLAIN }).toString().replace('<20020820095800.1234@example.net>', '<000023b8700d$00003a16$00004696@example.net>');
  const r = await scan(Buffer.from(rat));
  assert.deepEqual(own(r), ['MSGID_RATWARE_ZERO']);
  const oe = mail({ body: PLAIN }).toString().replace('<20020820095800.1234@example.net>', '<001501c24845$8b0b1e40$0200a8c0@example.net>');
  assert.deepEqual(own(await scan(Buffer.from(oe))), []);
});

test('DATE_AFTER_RECEIVED: Date hours after the newest Received; within the allowance it is not', async () => {
  const ahead = mail({ body: PLAIN }).toString().replace('Date: Tue, 20 Aug 2002 09:58:00 +0000', 'Date: Tue, 20 Aug 2002 19:00:00 +0000');
  const r = await scan(Buffer.from(ahead));
  assert.deepEqual(own(r), ['DATE_AFTER_RECEIVED']);
  assert.deepEqual(symbol(r, 'DATE_AFTER_RECEIVED')?.options, ['9h']);
  assert.deepEqual(own(await scan(Buffer.from(ahead), meta(), { date_ahead_hours: 12 })), []);
});

test('REPLYTO_AT_FREEMAIL: a Reply-To at a free-mail service, also one added by configuration', async () => {
  const r = await scan(mail({ headers: ['Reply-To: offers2002@hotmail.com'], body: PLAIN }));
  assert.deepEqual(own(r), ['REPLYTO_AT_FREEMAIL']);
  assert.deepEqual(symbol(r, 'REPLYTO_AT_FREEMAIL')?.options, ['hotmail.com']);
  const own1 = mail({ headers: ['Reply-To: desk@example.com'], body: PLAIN });
  assert.deepEqual(own(await scan(own1)), []);
  assert.deepEqual(own(await scan(own1, meta(), { freemail_domains: ['Example.com'] })), ['REPLYTO_AT_FREEMAIL']);
});

test('REPLYTO_AT_FREEMAIL: a list server on a free-mail provider\'s subdomain is no mailbox (MSN Groups post)', async () => {
  // An MSN Groups post as the list delivered it (hard-ham-1/00176 of the development split): the
  // member writes from Hotmail, the list puts its own address at groups.msn.com in Reply-To.
  const post = Buffer.from([
    'Received: from groups.msn.com (tk2dcpuba04.msn.com [65.54.195.216]) by mx.example.org (8.11.6/8.11.6) with ESMTP id g7CFjgb22724; Mon, 12 Aug 2002 16:45:43 +0100',
    'Received: from mail pickup service by groups.msn.com with Microsoft SMTPSVC; Mon, 12 Aug 2002 08:44:52 -0700',
    'Message-Id: <OneIncomeLiving-1412@groups.msn.com>',
    'X-Loop: notifications@groups.msn.com',
    'Reply-To: "One Income Living" <OneIncomeLiving@groups.msn.com>',
    'From: "joyful" <abcusa88@hotmail.com>',
    'To: "One Income Living" <OneIncomeLiving@groups.msn.com>',
    'Subject: Re: Hi! I\'m new here.',
    'Date: Mon, 12 Aug 2002 08:44:52 -0700',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=iso-8859-1',
    '',
    'Welcome to the group! We cook from scratch and save a lot that way.',
    '',
  ].join('\r\n'));
  assert.deepEqual(own(await scan(post)), []);
  // The provider's own mailbox domain still counts, whatever its case.
  const direct = Buffer.from(post.toString('latin1').replace('<OneIncomeLiving@groups.msn.com>\r\nFrom', '<OneIncomeLiving@MSN.com>\r\nFrom'), 'latin1');
  const r = await scan(direct);
  assert.deepEqual(own(r), ['REPLYTO_AT_FREEMAIL']);
  assert.deepEqual(symbol(r, 'REPLYTO_AT_FREEMAIL')?.options, ['msn.com']);
});

test('text rules: consent claim, opt-out, toll-free number, remove list, disclaimer, earnings', async () => {
  const body = [
    'You are receiving this because you signed up to receive offers from our partners.',
    'I made $3,000 last month working two hours a day.',
    'Call 1-888-555-0199 today.',
    'This is not spam. To opt out, or to be removed from our mailing list, reply to this message.',
  ].join('\n');
  assert.deepEqual(own(await scan(mail({ body }))), [
    'BODY_CONSENT_CLAIM', 'BODY_EARN_DOLLARS', 'BODY_OPT_OUT', 'BODY_REMOVE_LIST', 'BODY_SPAM_DISCLAIMER', 'BODY_TOLL_FREE',
  ]);
});

test('BODY_SALES_PITCH grows with the number of different stock phrases', async () => {
  const three = 'Act now! This is a limited time special offer.';
  assert.deepEqual(own(await scan(mail({ body: three }))), []);
  const four = `${three} Order now.`;
  const r4 = await scan(mail({ body: four }));
  assert.deepEqual(symbol(r4, 'BODY_SALES_PITCH')?.options, ['4']);
  const six = `${four} Satisfaction guaranteed, risk-free.`;
  const r6 = await scan(mail({ body: six }));
  assert.ok((symbol(r6, 'BODY_SALES_PITCH')?.score ?? 0) > (symbol(r4, 'BODY_SALES_PITCH')?.score ?? 0));
  assert.equal(symbol(r6, 'BODY_SALES_PITCH')?.score, 1.0);
});

test('BODY_ADVANCE_FEE needs several fraud themes; one alone is ordinary', async () => {
  const scam = [
    'I am Dr. Peter Okon, an accountant with the ministry of finance.',
    'We need a foreign partner to help us transfer the sum of US$25.5 million out of the country.',
    'You will keep 20% of the total sum. Treat this as strictly confidential.',
  ].join('\n');
  const r = await scan(mail({ body: scam }));
  assert.ok(symbol(r, 'BODY_ADVANCE_FEE'), 'advance-fee text');
  // The Rspamd suite's advance-fee message is caught too.
  assert.ok(symbol(await scan(testMessage('advance_fee_fraud.eml')), 'BODY_ADVANCE_FEE'));
  const one = 'Please transfer the money for the team dinner to my account by Friday.';
  assert.ok(!symbol(await scan(mail({ body: one })), 'BODY_ADVANCE_FEE'));
});

test('BODY_SHOUTING: a long text mostly in capitals; a short capital line is not', async () => {
  const shout = 'SPECIAL OFFER FOR ALL OUR VALUED CUSTOMERS. '.repeat(8);
  const r = await scan(mail({ body: shout }));
  assert.ok(symbol(r, 'BODY_SHOUTING'));
  assert.ok(!symbol(await scan(mail({ body: `NOTE: ${PLAIN}` })), 'BODY_SHOUTING'));
});

test('BODY_SHOUTING: the share of capitals counts letters of any script, as the option shows', async () => {
  // 30 upper-case and 20 lower-case letters a line: 60 %, in ASCII and in accented Latin text.
  const ascii = `${'ABCDEFGHIJ KLMNOPQRST UVWXYZABCD abcdefghij klmnopqrst. 1234 !!\n'.repeat(5)}`;
  assert.deepEqual(symbol(await scan(mail({ body: ascii })), 'BODY_SHOUTING')?.options, ['60%']);
  const accented = `${'ÀÉÎÕÜÇABCD ÑÅØÆEFGHIJ KLMNOPQRST àéîõüçabcd ñåøæefghij. 1234 !!\n'.repeat(5)}`;
  const r = await scan(mail({ body: accented, type: 'text/plain; charset=utf-8' }));
  assert.deepEqual(symbol(r, 'BODY_SHOUTING')?.options, ['60%']);
  // 20 upper-case letters of 50 a line: 40 % is not over the share.
  const calm = `${'ABCDEFGHIJ KLMNOPQRST abcdefghij klmnopqrst uvwxyzabcd.\n'.repeat(5)}`;
  assert.ok(!symbol(await scan(mail({ body: calm })), 'BODY_SHOUTING'));
});

test('subject rules: a dollar amount and the ADV: label', async () => {
  assert.deepEqual(own(await scan(mail({ subject: 'ADV: Cell phone clips $1.95', body: PLAIN }))), ['SUBJ_ADV_LABEL', 'SUBJ_MONEY']);
  assert.deepEqual(own(await scan(mail({ subject: 'Advice on the budget', body: PLAIN }))), []);
});

test('HTML_ONLY_NO_MUA: HTML-only without X-Mailer or User-Agent; a named client clears it', async () => {
  const html = { type: 'text/html; charset=us-ascii', body: '<html><body><p>Notes from Monday</p></body></html>' };
  assert.deepEqual(own(await scan(mail(html))), ['HTML_ONLY_NO_MUA']);
  assert.deepEqual(own(await scan(mail({ ...html, headers: ['X-Mailer: Microsoft Outlook Express 6.00.2600.0000'] }))), []);
});

test('RCVD_HELO_BARE: first external hop greeted with an IP literal; skipped when the MTA gives the HELO', async () => {
  const bare = mail({ body: PLAIN }).toString().replace('from relay.example.net (relay.example.net [192.0.2.25])', 'from [192.0.2.25] (unknown [192.0.2.25])');
  const r = await scan(Buffer.from(bare));
  assert.deepEqual(own(r), ['RCVD_HELO_BARE']);
  assert.deepEqual(own(await scan(Buffer.from(bare), meta({ helo: 'relay.example.net' }))), []);
  // A private relay is skipped: the first public hop is the one judged.
  const local = mail({ body: PLAIN }).toString().replace('from relay.example.net (relay.example.net [192.0.2.25])', 'from PC (pc.lan [10.0.0.5])');
  assert.deepEqual(own(await scan(Buffer.from(local))), []);
});

test('the Rspamd suite ham message is not judged bulk mail', async () => {
  assert.deepEqual(own(await scan(testMessage('ham.eml'))), []);
});

test('BODY_CONSENT_CLAIM: "you opted in" is a claim; prose about opting in is not', async () => {
  const claim = 'You are receiving this email because you have opted-in to receive offers from our partners.';
  assert.ok(symbol(await scan(mail({ body: claim })), 'BODY_CONSENT_CLAIM'));
  const prose = 'The article says readers would have "opted in" to receive campaign news, which nobody checked.';
  assert.ok(!symbol(await scan(mail({ body: prose })), 'BODY_CONSENT_CLAIM'));
});

test('BODY_SPAM_DISCLAIMER: one-time mailing and no-removal claims; a list operator describing its list is not', async () => {
  for (const body of ['This is a one-time mailing, so no removal is necessary.', 'This is NOT spam! Read on.']) {
    assert.ok(symbol(await scan(mail({ body })), 'BODY_SPAM_DISCLAIMER'), body);
  }
  const list = 'All mailing lists hosted here are opt-in. This is not a spam list; you confirmed your subscription.';
  assert.ok(!symbol(await scan(mail({ body: list })), 'BODY_SPAM_DISCLAIMER'));
});

test('BODY_ADDRESS_SOURCE and BODY_GENERIC_SALUTATION: a stranger explains where it found you', async () => {
  const body = 'Dear Sir / Madam,\nI found your email address in an online business directory and would like to offer our services.';
  assert.deepEqual(own(await scan(mail({ body }))), ['BODY_ADDRESS_SOURCE', 'BODY_GENERIC_SALUTATION']);
  for (const greeting of ['Dear Friend,', 'Dear Sir or Madam,', 'Dear Valued Customer,']) {
    assert.ok(symbol(await scan(mail({ body: `${greeting}\n${PLAIN}` })), 'BODY_GENERIC_SALUTATION'), greeting);
  }
  // A named reader, and a found address of something else, are ordinary.
  const named = 'Dear Sir Terry,\nI got your address book export working; the contact list is attached.';
  assert.deepEqual(own(await scan(mail({ body: named }))), []);
});

test('BODY_ADVANCE_FEE: the added themes (your country, modalities, the total sum, ATTN: opening) count', async () => {
  const scam = [
    'ATTN: THE PRESIDENT',
    'I wish to invest the funds in your country. We will discuss the modalities of the transfer',
    'and your share of the total sum when you reply.',
  ].join('\n');
  assert.ok(symbol(await scan(mail({ body: scam })), 'BODY_ADVANCE_FEE'));
  const trip = 'Attn: we land in your country on Monday; the total sum for the hotel is in the sheet.';
  assert.ok(!symbol(await scan(mail({ body: trip })), 'BODY_ADVANCE_FEE'));
});

test('BODY_STOCK_TOUT: several stock-touting themes; one investor phrase is not', async () => {
  const tout = 'For Immediate Release. Cal-Bay (Stock Symbol: CBYI) is now quoted on the OTCBB and analysts say Strong Buy.';
  assert.deepEqual(symbol(await scan(mail({ body: tout })), 'BODY_STOCK_TOUT')?.options, ['4']);
  const news = 'Our share price fell again after the quarterly results; the board meets on Friday.';
  assert.ok(!symbol(await scan(mail({ body: news })), 'BODY_STOCK_TOUT'));
});

test('BODY_EXCLAIM: a run of three exclamation marks; one or two are not', async () => {
  assert.ok(symbol(await scan(mail({ body: 'Order today and save!!! Limited stock.' })), 'BODY_EXCLAIM'));
  assert.ok(!symbol(await scan(mail({ body: 'Great news! We won!! See you at the party.' })), 'BODY_EXCLAIM'));
});

test('SUBJ_ADV_LABEL: the Japanese and Korean legal labels, MIME-encoded and as raw bytes', async () => {
  // 未承諾広告※ as UTF-8 encoded-word.
  const jp = `=?UTF-8?B?${Buffer.from('未承諾広告※ご案内').toString('base64')}?=`;
  assert.ok(symbol(await scan(mail({ subject: jp, body: PLAIN })), 'SUBJ_ADV_LABEL'));
  // The same label in ISO-2022-JP, which the header decoder leaves as JIS bytes.
  const jis = '=?ISO-2022-JP?B?GyRCTCQ+NUJ6OS05cCIoGyhC?=';
  assert.ok(symbol(await scan(mail({ subject: jis, body: PLAIN })), 'SUBJ_ADV_LABEL'));
  // [광고] as raw EUC-KR bytes in an unencoded Subject.
  const euckr = Buffer.concat([
    Buffer.from(mail({ subject: 'XX', body: PLAIN }).toString('latin1').split('Subject: XX')[0] + 'Subject: [', 'latin1'),
    Buffer.from([0xb1, 0xa4, 0xb0, 0xed]),
    Buffer.from('] Best 5' + mail({ subject: 'XX', body: PLAIN }).toString('latin1').split('Subject: XX')[1], 'latin1'),
  ]);
  assert.ok(symbol(await scan(euckr), 'SUBJ_ADV_LABEL'));
  assert.ok(!symbol(await scan(mail({ subject: '広告の件', body: PLAIN })), 'SUBJ_ADV_LABEL'));
});

test('DATE_NO_TZ: a Date without a zone; a zone given only as a comment is still a zone', async () => {
  const bare = mail({ body: PLAIN }).toString().replace('Date: Tue, 20 Aug 2002 09:58:00 +0000', 'Date: Tue, 20 Aug 2002 09:58:00');
  assert.deepEqual(own(await scan(Buffer.from(bare))), ['DATE_NO_TZ']);
  const comment = mail({ body: PLAIN }).toString().replace('Date: Tue, 20 Aug 2002 09:58:00 +0000', 'Date: Tue, 20 Aug 2002 09:58:00 (GMT)');
  assert.deepEqual(own(await scan(Buffer.from(comment))), []);
});

test('HTML_NO_ROOT: an HTML fragment; a whole document is not', async () => {
  const headers = ['X-Mailer: Mozilla 4.7 [en] (Win98; I)'];
  const frag = { type: 'text/html; charset=us-ascii', headers, body: '<p>Click <a href="http://example.com/">here</a> for the offer</p>' };
  assert.deepEqual(own(await scan(mail(frag))), ['HTML_NO_ROOT']);
  assert.deepEqual(own(await scan(mail({ ...frag, body: `<html><body>${frag.body}</body></html>` }))), []);
});

test('XPRIO_NO_MUA: X-Priority with no client named; counted once with MISSING_MIMEOLE and HTML_ONLY_NO_MUA', async () => {
  assert.deepEqual(own(await scan(mail({ headers: ['X-Priority: 3'], body: PLAIN }))), ['XPRIO_NO_MUA']);
  assert.deepEqual(own(await scan(mail({ headers: ['X-Priority: 3', 'X-Mailer: Microsoft Outlook Express 6.00.2600.0000'], body: PLAIN }))), []);
  // X-MSMail-Priority without X-MimeOLE is MISSING_MIMEOLE's (header_regexps) sign of the same gap.
  assert.deepEqual(own(await scan(mail({ headers: ['X-Priority: 3', 'X-MSMail-Priority: Normal'], body: PLAIN }))), []);
  const html = { type: 'text/html; charset=us-ascii', body: '<html><body><p>Offer</p></body></html>' };
  assert.deepEqual(own(await scan(mail({ ...html, headers: ['X-Priority: 3'] }))), ['HTML_ONLY_NO_MUA']);
  assert.deepEqual(own(await scan(mail({ ...html, headers: ['X-MSMail-Priority: Normal'] }))), []);
});

test('DATE_AFTER_RECEIVED leaves a Date ahead of the scan clock to DATE_IN_FUTURE', async () => {
  const future = new Date(Date.now() + 30 * 24 * 3_600_000).toUTCString().replace('GMT', '+0000');
  const msg = mail({ body: PLAIN }).toString().replace('Date: Tue, 20 Aug 2002 09:58:00 +0000', `Date: ${future}`);
  assert.deepEqual(own(await scan(Buffer.from(msg))), []);
});
