// Property tests of the body-level parsers in src/message/: transfer decoding, charset
// conversion, the MIME part tree and the whole parseMessage / makeRawMessage. Random bytes,
// generated MIME trees and mutations of them never throw, stay within the caps, cost bounded
// CPU, and a generated tree reads back as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeCharset, isKnownCharset, normaliseCharset } from '../../src/message/charset.js';
import { MAX_MIME_DEPTH, MAX_MIME_PARTS, MAX_URLS } from '../../src/message/limits.js';
import { makeRawMessage, parseMessage } from '../../src/message/parse-message.js';
import { decodeTransfer } from '../../src/message/transfer-decode.js';
import type { Message, MimePart } from '../../src/message/types.js';
import { CALL_CPU_MS, cheap, check, parserBytes, repeated, mailText } from './property-helpers.js';

const bytes = (max = 300) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));

test('decodeTransfer: base64 and quoted-printable written by an encoder decode to the bytes, without an anomaly', () => {
  check(300, fc.property(bytes(), fc.constantFrom('\r\n', '\n'), (data, nl) => {
    const b64 = Buffer.from(data.toString('base64').replace(/.{76}/g, `$&${nl}`));
    const d = decodeTransfer(b64, 'base64');
    assert.deepEqual(d.content, data);
    assert.equal(d.anomaly, undefined);
  }));
  const qpEncode = (data: Buffer, nl: string): Buffer => {
    let out = '';
    let line = 0;
    for (const b of data) {
      const lit = b >= 0x21 && b <= 0x7e && b !== 0x3d;
      const piece = lit ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, '0')}`;
      if (line + piece.length > 72) {
        out += `=${nl}`;
        line = 0;
      }
      out += piece;
      line += piece.length;
    }
    return Buffer.from(out, 'latin1');
  };
  check(300, fc.property(bytes(), fc.constantFrom('\r\n', '\n'), (data, nl) => {
    const d = decodeTransfer(qpEncode(data, nl), 'quoted-printable');
    assert.deepEqual(d.content, data);
    assert.equal(d.anomaly, undefined);
  }));
});

test('decodeTransfer: any bytes under any encoding name decode without throwing, no longer than they came', () => {
  const cte = fc.constantFrom('base64', 'quoted-printable', '7bit', '8bit', 'binary', '', 'x-uuencode', 'BASE64');
  check(400, fc.property(parserBytes(['=', '=\r\n', '=3D', '==', 'QUJD', '\r\n', '=\n', '= \r\n'], 600), cte, (raw, enc) => {
    const d = cheap('decodeTransfer', CALL_CPU_MS, () => decodeTransfer(raw, enc));
    assert.ok(d.content.length <= raw.length, `${enc}: ${d.content.length} > ${raw.length}`);
  }));
});

const LABELS = ['utf-8', 'UTF8', 'us-ascii', 'iso-8859-1', 'windows-1252', 'koi8-r', 'shift_jis', 'iso-2022-jp', 'euc-kr', 'gb2312', 'big5', 'utf-16', 'utf-16le', 'utf-7', 'x-mac-cyrillic', 'ks_c_5601-1987', 'unicode', 'iso-2022-kr', 'hz-gb-2312', '"utf-8"', ' UTF-8 ', 'x-no-such', '', 'default', 'replacement', '\u0000', 'utf-8\u00a0'];

test('decodeCharset: any bytes in any charset label convert without throwing; UTF-8 reads back', () => {
  check(500, fc.property(parserBytes([], 300), fc.oneof(fc.constantFrom(...LABELS), mailText(12)), (buf, label) => {
    const d = cheap('decodeCharset', CALL_CPU_MS, () => decodeCharset(buf, label));
    assert.equal(typeof d.text, 'string');
    assert.equal(typeof isKnownCharset(label), 'boolean');
    const n = normaliseCharset(label);
    assert.equal(n, n.trim());
    assert.equal(n, n.toLowerCase());
  }));
  check(300, fc.property(fc.string({ unit: 'grapheme', maxLength: 100 }), fc.constantFrom('utf-8', 'UTF-8', 'utf8'), (text, label) => {
    assert.deepEqual(decodeCharset(Buffer.from(text, 'utf8'), label), { text, bad: false });
  }));
});

/** The structural facts every parse must hold, whatever the input. */
function assertWellFormed(m: Message): void {
  assert.ok(m.parts.length >= 1 && m.parts.length <= MAX_MIME_PARTS);
  assert.equal(m.parts[0], m.root);
  assert.equal(new Set(m.parts.map((p) => p.id)).size, m.parts.length, 'part ids are unique');
  for (const p of m.parts) {
    assert.ok(p.depth >= 0 && p.depth <= MAX_MIME_DEPTH + 1);
    for (const c of p.children) assert.equal(c.parent, p);
  }
  for (const tp of m.textParts) assert.ok(m.parts.includes(tp.part));
  assert.ok(m.bodyOffset >= 0 && m.bodyOffset <= m.raw.length);
  assert.ok(m.urls.length <= MAX_URLS);
  for (const u of m.urls) assert.equal(typeof u.url, 'string');
}

const MIME_TOKENS = ['\r\n', '\r\n\r\n', '--', '--b', '--b--', 'Content-Type: multipart/mixed; boundary=b\r\n', 'Content-Type: message/rfc822\r\n', 'Content-Transfer-Encoding: base64\r\n', 'Content-Type: text/html\r\n', '<a href="http://x.example/">', 'http://', 'charset=', '=?utf-8?B?w6k=?='];

test('parseMessage and makeRawMessage: any bytes parse without throwing into a well-formed message, in bounded CPU', () => {
  check(400, fc.property(parserBytes(MIME_TOKENS, 800), (raw) => {
    assertWellFormed(cheap('parseMessage', CALL_CPU_MS, () => parseMessage(raw)));
    const rawMsg = cheap('makeRawMessage', CALL_CPU_MS, () => makeRawMessage(raw));
    assert.equal(rawMsg.parts.length, 1);
  }));
  check(80, fc.property(repeated(mailText(10, MIME_TOKENS), 3000), (text) => {
    assertWellFormed(cheap('parseMessage', CALL_CPU_MS * 2, () => parseMessage(Buffer.from(`Content-Type: multipart/mixed; boundary=b\r\n\r\n${text}`))));
  }));
});

/** A generated MIME tree: leaves with their bytes, multiparts with their children. */
type Node =
  | { kind: 'leaf'; type: string; cte: '7bit' | 'base64' | 'quoted-printable'; content: Buffer }
  | { kind: 'multi'; subtype: string; children: Node[] };

// Text leaves avoid `-` and line breaks at their ends, so no content can look like a delimiter
// and the CRLF before a delimiter is unambiguous.
const textContent = fc.array(fc.constantFrom(...'abc xyz.,;:!?0129\tABC'.split(''), '\r\n', 'é', 'ж'), { minLength: 1, maxLength: 80 })
  .map((a) => Buffer.from(`x${a.join('')}x`, 'utf8'));
const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.record({ kind: fc.constant('leaf' as const), type: fc.constantFrom('text/plain', 'text/html'), cte: fc.constantFrom('7bit' as const, 'quoted-printable' as const), content: textContent }),
  fc.record({ kind: fc.constant('leaf' as const), type: fc.constantFrom('application/octet-stream', 'image/png', 'text/plain'), cte: fc.constant('base64' as const), content: bytes(200) }),
);
const tree = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ kind: fc.constant('multi' as const), subtype: fc.constantFrom('mixed', 'alternative', 'related'), children: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
  ),
})).node;

function qp(content: Buffer): string {
  // Every byte escaped except letters and digits: simple and always valid.
  return [...content].map((b) => (/[A-Za-z0-9]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('').replace(/.{70}/g, '$&=\r\n');
}

function serialise(node: Node, counter: { n: number }): string {
  if (node.kind === 'leaf') {
    const body = node.cte === 'base64' ? node.content.toString('base64').replace(/.{76}/g, '$&\r\n') : node.cte === 'quoted-printable' ? qp(node.content) : node.content.toString('latin1');
    const charset = node.type.startsWith('text/') ? '; charset=utf-8' : '';
    return `Content-Type: ${node.type}${charset}\r\nContent-Transfer-Encoding: ${node.cte}\r\n\r\n${body}`;
  }
  const boundary = `bnd${counter.n++}_x`;
  const parts = node.children.map((c) => `--${boundary}\r\n${serialise(c, counter)}\r\n`).join('');
  return `Content-Type: multipart/${node.subtype}; boundary="${boundary}"\r\n\r\n${parts}--${boundary}--`;
}

function assertSame(node: Node, part: MimePart, path: string): void {
  if (node.kind === 'leaf') {
    assert.equal(part.contentType.type, node.type, path);
    assert.deepEqual(part.content, node.content, `${path}: content`);
    return;
  }
  assert.equal(part.contentType.type, `multipart/${node.subtype}`, path);
  assert.equal(part.children.length, node.children.length, `${path}: children`);
  node.children.forEach((c, i) => assertSame(c, part.children[i]!, `${path}.${i + 1}`));
}

test('parseMessage: a generated MIME tree reads back as written, part by part', () => {
  check(300, fc.property(tree, (root) => {
    // A single-part message's body runs to the end: no CRLF after it.
    const text = `From: a@example.com\r\nTo: b@example.org\r\nSubject: tree\r\nMIME-Version: 1.0\r\n${serialise(root, { n: 0 })}${root.kind === 'multi' ? '\r\n' : ''}`;
    const m = parseMessage(Buffer.from(text, 'latin1'));
    assertWellFormed(m);
    assert.deepEqual([...m.anomalies].filter((a) => a !== 'bad_charset'), [], [...m.anomalies].join(' '));
    assertSame(root, m.root, 'root');
  }));
});

test('parseMessage: mutations of a generated tree still parse, well formed, in bounded CPU', () => {
  const edit = fc.record({ at: fc.nat(), op: fc.constantFrom('flip', 'cut', 'dup', 'insert'), byte: fc.integer({ min: 0, max: 255 }), len: fc.integer({ min: 1, max: 40 }) });
  check(300, fc.property(tree, fc.array(edit, { minLength: 1, maxLength: 8 }), (root, edits) => {
    let buf = Buffer.from(`Subject: m\r\nMIME-Version: 1.0\r\n${serialise(root, { n: 0 })}\r\n`, 'latin1');
    for (const e of edits) {
      const at = e.at % (buf.length + 1);
      if (e.op === 'flip' && at < buf.length) buf[at] = e.byte;
      else if (e.op === 'cut') buf = Buffer.concat([buf.subarray(0, at), buf.subarray(at + e.len)]);
      else if (e.op === 'dup') buf = Buffer.concat([buf.subarray(0, at + e.len), buf.subarray(at)]);
      else buf = Buffer.concat([buf.subarray(0, at), Buffer.from([e.byte]), buf.subarray(at)]);
    }
    assertWellFormed(cheap('parseMessage', CALL_CPU_MS, () => parseMessage(buf)));
  }));
});
