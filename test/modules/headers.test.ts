import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureMessage, meta, metaFromRecorded, names, recordedCase, scanner, symbol } from './helpers.js';
import { HEADERS_SYMBOLS } from '../../src/modules/headers/symbols.js';
import { RECEIVED_SYMBOLS } from '../../src/modules/received/symbols.js';
import { MIME_SYMBOLS } from '../../src/modules/mime/symbols.js';

/** Symbols of these modules that do not depend on DNS (ONCE_RECEIVED and RDNS_* do: they need the PTR name). */
const COMPARABLE = new Set(
  [...Object.keys(HEADERS_SYMBOLS), ...Object.keys(RECEIVED_SYMBOLS), ...Object.keys(MIME_SYMBOLS)].filter(
    (s) => !['ONCE_RECEIVED', 'ONCE_RECEIVED_STRICT', 'DIRECT_TO_MX', 'RDNS_NONE', 'RDNS_DNSFAIL'].includes(s),
  ),
);

/** Cases whose symbols our header/mime/received modules must reproduce exactly. */
const CASES = ['a03-checkv2-envelope', 'a10-flags-groups', 'a38-settings-rewrite-subject', 'b14-virus-symbol'];

for (const name of CASES) {
  test(`same header, MIME and Received symbols as Rspamd 3.4 for ${name}`, async () => {
    const c = recordedCase(name);
    const r = await (await scanner()).scan(c.message, metaFromRecorded(c));
    const ours = [...names(r)].filter((s) => COMPARABLE.has(s)).sort();
    const theirs = Object.keys(c.symbols).filter((s) => COMPARABLE.has(s)).sort();
    assert.deepEqual(ours, theirs);
    for (const s of theirs) {
      const mine = symbol(r, s)!;
      assert.equal(mine.description, c.symbols[s]!.description, `${s} description`);
      // DATE_IN_PAST counts hours since the recording; every other option is stable.
      if (s !== 'DATE_IN_PAST') assert.deepEqual(mine.options ?? [], c.symbols[s]!.options ?? [], `${s} options`);
    }
  });
}

const crlf = fixtureMessage('crlf-simple.eml').toString('latin1');
const edit = (fn: (s: string) => string): Buffer => Buffer.from(fn(crlf), 'latin1');

test('missing Date, Message-ID, From, To and Subject', async () => {
  const msg = edit((s) => s.replace(/^(Date|Message-ID|From|To|Subject):.*\r\n/gim, ''));
  const got = names(await (await scanner()).scan(msg, meta()));
  for (const s of ['MISSING_DATE', 'MISSING_MID', 'MISSING_FROM', 'MISSING_TO', 'MISSING_SUBJECT']) assert.ok(got.has(s), s);
  for (const s of ['FROM_HAS_DN', 'RCPT_COUNT_ONE', 'INVALID_DATE']) assert.ok(!got.has(s), s);
});

test('several From addresses and repeated unique headers', async () => {
  const msg = edit((s) =>
    s
      .replace('From: Alice <alice@example.com>', 'From: Alice <alice@example.com>, Eve <eve@example.net>')
      .replace('Subject: fixture message with CRLF\r\n', 'Subject: fixture message with CRLF\r\nSubject: again\r\n'),
  );
  const r = await (await scanner()).scan(msg, meta());
  assert.deepEqual(symbol(r, 'MULTIPLE_FROM')?.options, ['alice@example.com', 'eve@example.net']);
  const uniq = symbol(r, 'MULTIPLE_UNIQUE_HEADERS');
  assert.deepEqual(uniq?.options, ['Subject']);
  // Weight 0.7 for Subject: 0.7 × 7.0.
  assert.ok(Math.abs(uniq!.score - 4.9) < 1e-9);
});

test('Date in the future and unparsable Date', async () => {
  const future = new Date(Date.now() + 5 * 3600 * 1000).toUTCString().replace('GMT', '+0000');
  const s = await scanner();
  const r = await s.scan(edit((x) => x.replace(/^Date:.*$/m, `Date: ${future}`)), meta());
  const opt = Number(symbol(r, 'DATE_IN_FUTURE')?.options?.[0]);
  assert.ok(opt === 4 || opt === 5, `hours ahead, got ${opt}`);
  assert.ok(!names(r).has('DATE_IN_PAST'));
  const bad = await s.scan(edit((x) => x.replace(/^Date:.*$/m, 'Date: not a date at all')), meta());
  assert.ok(names(bad).has('INVALID_DATE'));
});

test('From display name checks and envelope comparison', async () => {
  const s = await scanner();
  const title = await s.scan(edit((x) => x.replace('From: Alice <', 'From: Mr  Alice <')), meta({ from: 'bounce@example.net' }));
  assert.deepEqual(symbol(title, 'FROM_NAME_HAS_TITLE')?.options, ['mr']);
  assert.ok(names(title).has('FROM_NAME_EXCESS_SPACE'));
  assert.deepEqual(symbol(title, 'FROM_NEQ_ENVFROM')?.options, ['alice@example.com', 'bounce@example.net']);
  const bare = await s.scan(edit((x) => x.replace('From: Alice <alice@example.com>', 'From: alice@example.com')), meta());
  assert.ok(names(bare).has('FROM_NO_DN'));
  assert.ok(!names(bare).has('FROM_HAS_DN'));
});

test('recipient count and envelope match', async () => {
  const msg = edit((x) => x.replace('To: Bob <bob@example.org>', 'To: Bob <bob@example.org>, carol@example.net, Recipients <list@example.net>'));
  const r = await (await scanner()).scan(msg, meta({ rcpt: ['bob@example.org'] }));
  assert.deepEqual(symbol(r, 'RCPT_COUNT_THREE')?.options, ['3']);
  assert.ok(names(r).has('TO_DN_SOME'));
  assert.ok(names(r).has('TO_DN_RECIPIENTS'));
  assert.ok(names(r).has('TO_MATCH_ENVRCPT_SOME'));
  assert.ok(!names(r).has('TO_MATCH_ENVRCPT_ALL'));
});

test('8-bit body declared 7bit and MIME headers without MIME-Version', async () => {
  const msg = Buffer.concat([
    edit((x) =>
      x
        .replace('MIME-Version: 1.0\r\n', '')
        .replace('Content-Type: text/plain; charset=utf-8', 'Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 7bit'),
    ),
    Buffer.from([0xe9, 0x74, 0xe9, 0x0d, 0x0a]),
  ]);
  const r = await (await scanner()).scan(msg, meta());
  assert.ok(names(r).has('MISSING_MIME_VERSION'));
  assert.deepEqual(symbol(r, 'R_BAD_CTE_7BIT')?.options, ['7bit']);
  // The same bytes with no Content-Transfer-Encoding at all are taken as 8bit (fixture a91).
  const c = recordedCase('a91-bad-json-not-mime');
  const garbage = await (await scanner()).scan(c.message, metaFromRecorded(c));
  assert.ok(!names(garbage).has('R_BAD_CTE_7BIT'));
  assert.ok(!names(garbage).has('BROKEN_HEADERS'));
  assert.ok(names(garbage).has('R_MISSING_CHARSET'));
  assert.ok(c.symbols['R_MISSING_CHARSET'] && !c.symbols['BROKEN_HEADERS']);
});

test('subject in capitals and a fake reply', async () => {
  const r = await (await scanner()).scan(edit((x) => x.replace('Subject: fixture message with CRLF', 'Subject: Re: FREE MONEY NOW')), meta());
  assert.deepEqual(symbol(r, 'SUBJ_ALL_CAPS')?.options, ['14']);
  assert.ok(names(r).has('FAKE_REPLY'));
});

test('header-only input without a blank line is BROKEN_HEADERS', async () => {
  const c = recordedCase('a92-header-only-message');
  const r = await (await scanner()).scan(c.message, metaFromRecorded(c));
  assert.ok(names(r).has('BROKEN_HEADERS'));
  assert.ok(c.symbols['BROKEN_HEADERS']);
  const ok = await (await scanner()).scan(fixtureMessage('crlf-simple.eml'), meta());
  assert.ok(!names(ok).has('BROKEN_HEADERS'));
});

test('raw input (Raw: yes) is all body: header rules stay quiet except MISSING_FROM, as in Rspamd (a50)', async () => {
  const c = recordedCase('a50-raw-yes');
  const r = await (await scanner()).scan(c.message, { ...metaFromRecorded(c), raw: true, filename: 'doc.txt' });
  const ours = [...names(r)].filter((s) => COMPARABLE.has(s) && s !== 'MIME_GOOD' && s !== 'MIME_TRACE').sort();
  const theirs = Object.keys(c.symbols).filter((s) => COMPARABLE.has(s) && s !== 'MIME_TRACE').sort();
  assert.deepEqual(ours, theirs);
  assert.ok(ours.includes('MISSING_FROM'));
});

test('display-name and Reply-To spoofing', async () => {
  const s = await scanner();
  const neq = await s.scan(edit((x) => x.replace('From: Alice <', 'From: "support@bank.example" <')), meta());
  assert.deepEqual(symbol(neq, 'FROM_NEQ_DISPLAY_NAME')?.options, ['example.com', 'bank.example']);
  const spoof = await s.scan(
    edit((x) => x.replace('From: Alice <', 'From: "support@bank.example" <').replace('To: Bob <bob@example.org>', 'To: Bob <bob@bank.example>')),
    meta(),
  );
  assert.deepEqual(symbol(spoof, 'SPOOF_DISPLAY_NAME')?.options, ['example.com', 'bank.example']);
  assert.ok(!names(spoof).has('FROM_NEQ_DISPLAY_NAME'));
  const rt = edit((x) => x.replace('To: Bob <bob@example.org>', 'To: Bob <bob@example.org>\r\nReply-To: <collect@elsewhere.example>'));
  const r1 = await s.scan(rt, meta({ rcpt: ['carol@example.com'] }));
  assert.deepEqual(symbol(r1, 'SPOOF_REPLYTO')?.options, ['example.com', 'elsewhere.example']);
  const r2 = await s.scan(rt, meta({ rcpt: ['carol@example.net'] }));
  assert.ok(!names(r2).has('SPOOF_REPLYTO'), 'only when the envelope recipients include the From domain');
});

test('read-receipt address, undisclosed recipients and header-name case', async () => {
  const s = await scanner();
  const mdn = edit((x) => x.replace('X-Spam: yes', 'X-Spam: yes\r\nDisposition-Notification-To: <track@tracker.example>'));
  assert.ok(names(await s.scan(mdn, meta({ from: 'alice@example.com' }))).has('HEADER_FORGED_MDN'));
  const okMdn = edit((x) => x.replace('X-Spam: yes', 'X-Spam: yes\r\nDisposition-Notification-To: <alice@example.com>'));
  assert.ok(!names(await s.scan(okMdn, meta({ from: 'alice@example.com' }))).has('HEADER_FORGED_MDN'));
  const undisclosed = await s.scan(edit((x) => x.replace('To: Bob <bob@example.org>', 'To: undisclosed-recipients:;')), meta());
  assert.ok(names(undisclosed).has('R_UNDISC_RCPT'));
  const mv = await s.scan(edit((x) => x.replace('MIME-Version: 1.0', 'Mime-Version: 1.0')), meta());
  assert.ok(names(mv).has('MV_CASE'));
  assert.ok(!names(await s.scan(fixtureMessage('crlf-simple.eml'), meta())).has('MV_CASE'));
});
