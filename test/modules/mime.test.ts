import { test } from 'node:test';
import assert from 'node:assert/strict';
import { meta, metaFromRecorded, names, recordedCase, scanner, symbol, testMessage } from './helpers.js';

test('content types and MIME_TRACE of a multipart list message match Rspamd 3.4', async () => {
  const c = recordedCase('a13-urls-plain');
  const r = await (await scanner()).scan(c.message, metaFromRecorded(c));
  for (const s of ['MIME_GOOD', 'MIME_TRACE']) assert.deepEqual(symbol(r, s)?.options, c.symbols[s]!.options, s);
  assert.equal(symbol(r, 'MIME_GOOD')?.score, -0.1);
});

/** Attachment names from Rspamd's own test messages and what its mime_types tests expect. */
const ATTACHMENTS: Array<[string, string, string[], string[]]> = [
  ['exe_attm.eml', 'MIME_BAD_EXTENSION', ['exe'], ['MIME_DOUBLE_BAD_EXTENSION']],
  ['bad_ext.dotted_file_name.eml', 'MIME_BAD_EXTENSION', ['exe'], ['MIME_DOUBLE_BAD_EXTENSION']],
  ['next2last-doublebad.eml', 'MIME_DOUBLE_BAD_EXTENSION', ['.scr.xz'], ['MIME_BAD_EXTENSION']],
  ['next2last-digits_in_brackets.eml', 'MIME_BAD_EXTENSION', ['msi'], ['MIME_DOUBLE_BAD_EXTENSION']],
  ['next2last-digits_in_parens.eml', 'MIME_BAD_EXTENSION', ['msi'], ['MIME_DOUBLE_BAD_EXTENSION']],
  ['f.zip.gz.eml', 'MIME_ARCHIVE_IN_ARCHIVE', ['.zip.gz'], []],
];

for (const [file, sym, options, absent] of ATTACHMENTS) {
  test(`${file}: ${sym}`, async () => {
    const r = await (await scanner()).scan(testMessage(file), meta());
    assert.deepEqual(symbol(r, sym)?.options, options);
    for (const a of absent) assert.ok(!names(r).has(a), `${a} must not fire`);
    assert.ok(symbol(r, 'MIME_TRACE')?.options?.some((o) => o.endsWith(':-')), 'the part is traced as bad');
  });
}

test('split archive volumes are not archive-in-archive', async () => {
  const r = await (await scanner()).scan(testMessage('f.zip.001.eml'), meta());
  assert.ok(!names(r).has('MIME_ARCHIVE_IN_ARCHIVE'));
});

test('double extension weight takes the worse extension (scr = 4)', async () => {
  const r = await (await scanner()).scan(testMessage('next2last-doublebad.eml'), meta());
  assert.equal(symbol(r, 'MIME_DOUBLE_BAD_EXTENSION')?.score, 12);
});

test('raw input named .eml but declared text/plain is MIME_BAD_ATTACHMENT like Rspamd (r04)', async () => {
  const c = recordedCase('r04-rspamc-raw');
  const r = await (await scanner()).scan(c.message, { ...metaFromRecorded(c), raw: true, filename: 'lf-simple.eml', contentType: 'text/plain' });
  assert.deepEqual(symbol(r, 'MIME_BAD_ATTACHMENT')?.options, c.symbols['MIME_BAD_ATTACHMENT']!.options);
  assert.equal(symbol(r, 'MIME_BAD_ATTACHMENT')?.score, c.symbols['MIME_BAD_ATTACHMENT']!.score);
});

test('right-to-left override in a file name is MIME_BAD_UNICODE', async () => {
  const encoded = `=?UTF-8?B?${Buffer.from('invoice\u202Efdp.exe').toString('base64')}?=`;
  const msg = testMessage('exe_attm.eml').toString('latin1').replaceAll('hello_world.exe', encoded);
  const r = await (await scanner()).scan(Buffer.from(msg, 'latin1'), meta());
  assert.deepEqual(symbol(r, 'MIME_BAD_UNICODE')?.options, ['0x202ed after invoice']);
});

test('multipart/alternative without a text/plain part', async () => {
  const src = testMessage('alternative-related.eml');
  const r = await (await scanner()).scan(src, meta());
  const parts = src.toString('latin1');
  const hasPlain = /content-type:\s*text\/plain/i.test(parts);
  assert.equal(names(r).has('MIME_MA_MISSING_TEXT'), !hasPlain);
  assert.ok(!names(r).has('MIME_MA_MISSING_HTML'));
});

test('HTML-only message and a broken boundary', async () => {
  const s = await scanner();
  const html = await s.scan(testMessage('mixed-related-html-only.eml'), meta());
  assert.ok(names(html).has('MIME_HTML_ONLY'));
  // An unterminated multipart still yields its parts: the GIF is traced as neutral.
  const broken = await s.scan(testMessage('badboundary.eml'), meta());
  assert.deepEqual(symbol(broken, 'MIME_TRACE')?.options, ['0:+', '1:~']);
  assert.ok(!names(broken).has('MIME_HTML_ONLY'));
  const plain = await s.scan(testMessage('exe_attm.eml'), meta());
  assert.ok(!names(plain).has('MIME_HTML_ONLY'));
});

test('multipart declared without a boundary is BROKEN_CONTENT_TYPE', async () => {
  const msg = Buffer.from(
    'From: a@example.com\r\nTo: b@example.org\r\nSubject: x\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed\r\n\r\nbody\r\n',
  );
  const r = await (await scanner()).scan(msg, meta());
  assert.ok(symbol(r, 'BROKEN_CONTENT_TYPE')?.options?.includes('missing_boundary'));
});

test('nesting beyond the parser depth limit is MIME_LIMITS_EXCEEDED, and broken base64 is MIME_BAD_ENCODING', async () => {
  const { MAX_MIME_DEPTH } = await import('../../src/message/limits.js');
  let body = 'Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not*base64@@@\r\n';
  for (let i = 0; i < MAX_MIME_DEPTH + 2; i++) {
    body = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${body}--b${i}--\r\n`;
  }
  const msg = Buffer.from(`From: a@example.com\r\nTo: b@example.org\r\nSubject: deep\r\nMIME-Version: 1.0\r\n${body}`);
  const r = await (await scanner()).scan(msg, meta());
  assert.ok(symbol(r, 'MIME_LIMITS_EXCEEDED')?.options?.includes('too_deep'));
  const shallow = Buffer.from(
    'From: a@example.com\r\nTo: b@example.org\r\nSubject: b64\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not*base64@@@\r\n',
  );
  const bad = await (await scanner()).scan(shallow, meta());
  assert.ok(symbol(bad, 'MIME_BAD_ENCODING')?.options?.includes('bad_base64'));
  assert.ok(!names(bad).has('MIME_LIMITS_EXCEEDED'));
});

test('MIME_LIMITS_EXCEEDED counts a tenth when the URL cap is the only limit reached', async () => {
  const { MAX_URLS } = await import('../../src/message/limits.js');
  const links = Array.from({ length: MAX_URLS + 5 }, (_, i) => `http://host${i}.example.com/page`).join('\r\n');
  const msg = Buffer.from(`From: a@example.com\r\nTo: b@example.org\r\nSubject: link digest\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n${links}\r\n`);
  const r = await (await scanner()).scan(msg, meta());
  const hit = symbol(r, 'MIME_LIMITS_EXCEEDED');
  assert.deepEqual(hit?.options, ['too_many_urls']);
  assert.equal(hit?.score, 0.1);
});

test('the message caps added for issue 17 are MIME_LIMITS_EXCEEDED options; size caps alone count a tenth', async () => {
  const { MAX_HTML_BYTES, MAX_RECEIVED_CHARS, MAX_HEADER_ADDRESSES } = await import('../../src/message/limits.js');
  const head = 'From: a@example.com\r\nSubject: caps\r\nMIME-Version: 1.0\r\n';
  const html = Buffer.from(`${head}To: b@example.org\r\nContent-Type: text/html\r\n\r\n<p>${'x '.repeat(MAX_HTML_BYTES)}</p>\r\n`);
  const r1 = await (await scanner()).scan(html, meta());
  // Its rendered text is also longer than the URL scan reads: both are size caps.
  assert.deepEqual(new Set(symbol(r1, 'MIME_LIMITS_EXCEEDED')?.options), new Set(['html_too_long', 'url_scan_truncated']));
  assert.equal(symbol(r1, 'MIME_LIMITS_EXCEEDED')?.score, 0.1);
  const to = Array.from({ length: MAX_HEADER_ADDRESSES + 1 }, (_, i) => `u${i}@example.org`).join(', ');
  const longHop = `Received: from a.example (${'c'.repeat(MAX_RECEIVED_CHARS)}) by b.example; Thu, 1 Jan 2026 00:00:00 +0000\r\n`;
  const r2 = await (await scanner()).scan(Buffer.from(`${longHop}${head}To: ${to}\r\nContent-Type: text/plain\r\n\r\nhi\r\n`), meta());
  const hit = symbol(r2, 'MIME_LIMITS_EXCEEDED');
  assert.deepEqual(new Set(hit?.options), new Set(['too_many_addresses', 'received_too_long']));
  assert.equal(hit?.score, 1);
});
