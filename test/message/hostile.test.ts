// Hostile and broken input, generated here: parseMessage must return (never throw or hang),
// stop at its named limits and say so in `anomalies`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { parseMessage } from '../../src/message/parse-message.js';
import { MAX_HEADER_LINE_BYTES, MAX_HEADERS, MAX_MIME_DEPTH, MAX_MIME_PARTS, MAX_URLS } from '../../src/message/limits.js';

// Far above what any of these inputs needs on a loaded 2-core machine; a hang or a
// quadratic blow-up would exceed it by orders of magnitude.
const HANG_GUARD_MS = 5000;

function timedParse(raw: Buffer) {
  const t0 = performance.now();
  const m = parseMessage(raw);
  const ms = performance.now() - t0;
  assert.ok(ms < HANG_GUARD_MS, `took ${ms.toFixed(0)} ms`);
  return m;
}

test('10 000 MIME parts: stops at MAX_MIME_PARTS', () => {
  let s = 'Subject: many\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n';
  for (let i = 0; i < 10_000; i++) s += `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`;
  s += '--b--\r\n';
  const m = timedParse(Buffer.from(s));
  assert.equal(m.parts.length, MAX_MIME_PARTS);
  assert.ok(m.anomalies.has('too_many_parts'));
  assert.equal(m.textParts[0]!.text, 'part 0');
  assert.equal(m.subject, 'many');
});

test('1 MiB header line: truncated to MAX_HEADER_LINE_BYTES, next header still parsed', () => {
  const m = timedParse(Buffer.from(`Subject: ${'a'.repeat(1 << 20)}\r\nFrom: a@example.com\r\n\r\nbody\r\n`));
  assert.ok(m.anomalies.has('header_too_long'));
  assert.equal(m.headers.first('subject')!.raw.length, MAX_HEADER_LINE_BYTES);
  assert.equal(m.from[0]!.address, 'a@example.com');
  assert.equal(m.textParts[0]!.text, 'body');
});

test('a million folded header lines and 200 000 headers', () => {
  const folded = timedParse(Buffer.from(`X-Long: ${'a b\r\n '.repeat(1 << 18)}\r\nSubject: after\r\n\r\nbody`));
  assert.ok(folded.anomalies.has('header_too_long'));
  assert.equal(folded.subject, 'after');
  const many = timedParse(Buffer.from(`${'X-A: b\r\n'.repeat(200_000)}\r\nbody`));
  assert.equal(many.headers.all.length, MAX_HEADERS);
  assert.ok(many.anomalies.has('too_many_headers'));
  assert.equal(many.textParts[0]!.text, 'body');
});

test('200-deep multipart nesting: stops at MAX_MIME_DEPTH', () => {
  let head = '';
  let tail = '';
  for (let i = 0; i < 200; i++) {
    head += `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n`;
    tail = `\r\n--b${i}--${tail}`;
  }
  const m = timedParse(Buffer.from(`${head}Content-Type: text/plain\r\n\r\ndeep${tail}`));
  assert.ok(m.anomalies.has('too_deep'));
  assert.equal(Math.max(...m.parts.map((p) => p.depth)), MAX_MIME_DEPTH);
});

test('200-deep message/rfc822 nesting', () => {
  const m = timedParse(Buffer.from(`${'Content-Type: message/rfc822\r\n\r\n'.repeat(200)}Subject: x\r\n\r\nbody`));
  assert.ok(m.anomalies.has('too_deep'));
  assert.ok(m.parts.every((p) => p.depth <= MAX_MIME_DEPTH));
});

test('binary garbage: no header block, scanned as one text part', () => {
  for (let i = 0; i < 3; i++) {
    const m = timedParse(randomBytes(1 << 20));
    assert.equal(m.parts.length >= 1, true);
    assert.ok(m.anomalies.has('no_headers') || m.headers.all.length > 0);
  }
  const nul = timedParse(Buffer.alloc(4096));
  assert.ok(nul.anomalies.has('no_headers'));
});

test('truncated and corrupt base64, broken quoted-printable', () => {
  const b64 = timedParse(Buffer.from('Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\naGVsbG8gd29ybGQ'));
  assert.ok(b64.anomalies.has('bad_base64'));
  assert.match(b64.textParts[0]!.text, /^hello worl/);
  const junk = timedParse(Buffer.from('Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\naGVs!!bG8=\r\n'));
  assert.ok(junk.anomalies.has('bad_base64'));
  const qp = timedParse(Buffer.from('Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nfoo=ZZbar=3D=\r\nbaz'));
  assert.ok(qp.anomalies.has('bad_qp'));
  assert.equal(qp.textParts[0]!.utf8, 'foo=ZZbar=baz');
  const unknown = timedParse(Buffer.from('Content-Type: text/plain\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nbody'));
  assert.ok(unknown.anomalies.has('bad_transfer_encoding'));
});

test('missing boundary parameter and boundary never present', () => {
  const missing = timedParse(Buffer.from('Content-Type: multipart/mixed\r\n\r\n--x\r\n\r\nhello\r\n--x--\r\n'));
  assert.ok(missing.anomalies.has('missing_boundary'));
  assert.equal(missing.textParts.length, 1);
  const absent = timedParse(Buffer.from('Content-Type: multipart/mixed; boundary=zz\r\n\r\n--x\r\n\r\nhello\r\n--x--\r\n'));
  assert.ok(absent.anomalies.has('boundary_not_found'));
  assert.match(absent.textParts[0]!.text, /hello/);
  const unclosed = timedParse(Buffer.from('Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nhello\r\n'));
  assert.ok(unclosed.anomalies.has('no_closing_boundary'));
  assert.equal(unclosed.textParts[0]!.text, 'hello');
});

test('boundary-like text everywhere and a URL flood stay bounded', () => {
  const spam = timedParse(Buffer.from(`Content-Type: multipart/mixed; boundary=b\r\n\r\n${'x--b\n--bb\n'.repeat(100_000)}`));
  assert.ok(spam.anomalies.has('boundary_not_found'));
  let urls = 'Content-Type: text/plain\r\n\r\n';
  for (let i = 0; i < 5000; i++) urls += `http://h${i}.example.com/ `;
  const flood = timedParse(Buffer.from(urls));
  assert.equal(flood.urls.length, MAX_URLS);
  assert.ok(flood.anomalies.has('too_many_urls'));
});

test('unknown charset falls back and is flagged; invalid UTF-8 is flagged', () => {
  const latin = Buffer.concat([Buffer.from('Content-Type: text/plain; charset=x-no-such\r\n\r\ncaf'), Buffer.from([0xe9])]);
  const m = timedParse(latin);
  assert.equal(m.textParts[0]!.text, 'café');
  assert.equal(m.textParts[0]!.badCharset, true);
  assert.ok(m.anomalies.has('bad_charset'));
  const utf = Buffer.concat([Buffer.from('Content-Type: text/plain; charset=utf-8\r\n\r\nok '), Buffer.from([0xff, 0xfe])]);
  assert.equal(timedParse(utf).textParts[0]!.badCharset, true);
});

test('empty input and header-only input', () => {
  const empty = timedParse(Buffer.alloc(0));
  assert.equal(empty.parts.length, 1);
  const headerOnly = timedParse(Buffer.from('Subject: only headers\r\nFrom: a@b.example\r\n'));
  assert.equal(headerOnly.subject, 'only headers');
  assert.equal(headerOnly.bodyOffset, headerOnly.raw.length);
});
