// The small decoders on their own: encoded words, RFC 2231 parameters, charsets, and the
// transfer encodings, checked against Node's own encoders and iconv-lite's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { decodeCharset } from '../../src/message/charset.js';
import { parseContentType, parseParams } from '../../src/message/content-type.js';
import { decodeEncodedWords } from '../../src/message/encoded-words.js';
import { decodeTransfer } from '../../src/message/transfer-decode.js';
import { collapseWhitespace, renderHtml } from '../../src/message/html-text.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { rspamdMessage } from './fixtures.js';

const RUSSIAN = 'Съешь же ещё этих мягких французских булок, да выпей чаю';

test('encoded words: B and Q, adjacent words joined, split multi-byte characters', () => {
  const utf8 = Buffer.from(RUSSIAN);
  const half = 21; // splits inside a two-byte character
  const split = `=?utf-8?B?${utf8.subarray(0, half).toString('base64')}?= =?utf-8?B?${utf8.subarray(half).toString('base64')}?=`;
  assert.equal(decodeEncodedWords(split), RUSSIAN);
  assert.equal(decodeEncodedWords('=?iso-8859-1?Q?Universit=E9_de_Nantes?='), 'Université de Nantes');
  assert.equal(decodeEncodedWords('Re: =?UTF-8?Q?caf=C3=A9?= ok'), 'Re: café ok');
  assert.equal(decodeEncodedWords('=?utf-8*en?Q?hi?='), 'hi');
  assert.equal(decodeEncodedWords('no words here'), 'no words here');
});

test('koi8-r, windows-1251, iso-8859-5 encoded words and bodies', () => {
  for (const cs of ['koi8-r', 'windows-1251', 'iso-8859-5']) {
    const bytes = iconv.encode(RUSSIAN, cs);
    assert.equal(decodeEncodedWords(`=?${cs}?B?${bytes.toString('base64')}?=`), RUSSIAN, cs);
    const decoded = decodeCharset(bytes, cs.toUpperCase());
    assert.equal(decoded.text, RUSSIAN);
    assert.equal(decoded.bad, false);
    // The same text as a QP body of a message.
    const qp = [...bytes].map((b) => (b > 0x7e || b === 0x3d ? `=${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b))).join('');
    const m = parseMessage(Buffer.from(`Subject: t\r\nContent-Type: text/plain; charset="${cs}"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${qp}\r\n`));
    assert.equal(m.textParts[0]!.text, RUSSIAN, cs);
  }
});

test('RFC 2231: continuations and charset-tagged file names', () => {
  const p = parseParams(`attachment; filename*0*=utf-8''%E2%82%AC%20rates; filename*1=".txt"`);
  assert.equal(p.value, 'attachment');
  assert.equal(p.params['filename'], '€ rates.txt');
  const ct = parseContentType('Text/HTML; Charset="UTF-8"; name="a;b.html"');
  assert.deepEqual(ct, { type: 'text/html', params: { charset: 'UTF-8', name: 'a;b.html' } });
  assert.equal(parseContentType('garbage').invalid, true);
  assert.equal(parseContentType(undefined).type, 'text/plain');
  // The real message carries a UTF-8 file name as an encoded word inside the quoted parameter.
  const fname = parseMessage(rspamdMessage('fname.eml')).parts[1]!;
  assert.equal(fname.filename, '[삼성생명]2020.08.14 데일리 경제뉴스.pdf');
});

test('base64 and quoted-printable round trips', () => {
  const data = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) & 0xff));
  const b64 = Buffer.from(data.toString('base64').replace(/.{76}/g, '$&\r\n'));
  const out = decodeTransfer(b64, 'base64');
  assert.deepEqual(out.content, data);
  assert.equal(out.anomaly, undefined);
  const qp = decodeTransfer(Buffer.from('a=3Db=\r\nc =C3=A9=\nd'), 'quoted-printable');
  assert.equal(qp.content.toString('utf8'), 'a=bc éd');
  assert.equal(qp.anomaly, undefined);
  assert.equal(decodeTransfer(Buffer.from('x'), 'x-weird').anomaly, 'bad_transfer_encoding');
});

test('HTML rendering: hidden elements, block breaks, entities, unbalanced markup', () => {
  const ok = renderHtml('<html><head><title>T</title><style>p{}</style></head><body><p>One&nbsp;&amp;\r\ntwo<p>Three<br>four<script>var x = "<b>";</script></body></html>');
  assert.equal(ok.text, 'One & two\nThree\nfour');
  assert.equal(ok.facts.unbalanced, false, 'implied </p> is normal HTML');
  assert.ok(ok.facts.tags.has('script') && ok.facts.tags.has('br'));
  const broken = renderHtml('<div><b>bold</div> <a href="http://x.example">link');
  assert.equal(broken.facts.unbalanced, true);
  assert.deepEqual(broken.facts.links, [{ href: 'http://x.example', text: 'link' }]);
});

test('ISO-2022-JP (which iconv-lite lacks) in encoded words and bodies', () => {
  // 未承諾広告 ("unsolicited advertisement") in JIS X 0208 between the ESC $ B / ESC ( B shifts.
  const jis = Buffer.from('\x1b$BL$>5Bz9-9p\x1b(B', 'latin1');
  assert.deepEqual(decodeCharset(jis, 'ISO-2022-JP'), { text: '未承諾広告', bad: false });
  const m = parseMessage(Buffer.from(`Subject: =?ISO-2022-JP?B?${jis.toString('base64')}?= sale\r\nContent-Type: text/plain; charset=iso-2022-jp\r\n\r\n${jis.toString('latin1')}\r\n`, 'latin1'));
  assert.equal(m.subject, '未承諾広告 sale');
  assert.equal(m.textParts[0]?.text.trim(), '未承諾広告');
  // A subject folded into two ISO-2022-JP words, each shifting back to ASCII: decoded word by
  // word (joined, the decoder refused the back-to-back shifts and the JIS bytes were left as text).
  const two = parseMessage(Buffer.from(`Subject: =?iso-2022-jp?B?${jis.toString('base64')}?=\r\n\t=?iso-2022-jp?B?${jis.toString('base64')}?=\r\n\r\nx\r\n`, 'latin1'));
  assert.equal(two.subject, '未承諾広告未承諾広告');
  // A label no decoder knows still falls back and says so.
  assert.equal(decodeCharset(Buffer.from('abc'), 'x-no-such-charset').bad, true);
});

test('collapseWhitespace: blank runs become one space, line-break runs one newline, ends trimmed', () => {
  assert.equal(collapseWhitespace('  a  b\tc\u00a0d e \r\n\n  f \n g\n'), 'a b c d e\nf\ng');
  assert.equal(collapseWhitespace('one two\nthree'), 'one two\nthree');
  assert.equal(collapseWhitespace('x \u00a0\n\u00a0 \n\ty'), 'x\ny');
  assert.equal(collapseWhitespace(' \t\r\n '), '');
});

test('a charset label is trimmed inside its quotes too (found by the body property test)', async () => {
  const { normaliseCharset, decodeCharset } = await import('../../src/message/charset.js');
  assert.equal(normaliseCharset("' UTF-8 '"), 'utf-8');
  assert.equal(normaliseCharset("'\te"), 'e');
  assert.deepEqual(decodeCharset(Buffer.from('café'), '" utf-8"'), { text: 'café', bad: false });
});
