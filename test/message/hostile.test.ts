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

/** CPU (µs) `fn` used in this process, with its result. */
function cpuOf<T>(fn: () => T): { value: T; us: number } {
  const before = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(before);
  return { value, us: used.user + used.system };
}

/** Far above what the capped parse needs on a loaded machine; the uncapped parse took several times this. */
const CAPPED_PARSE_CPU_US = 1_500_000;

test('a To: of 100 000 addresses and 128 To: headers of 4 000 each stop at the address caps', async () => {
  const { MAX_HEADER_ADDRESSES } = await import('../../src/message/limits.js');
  const many = Array.from({ length: 100_000 }, (_, i) => `u${i}@example${i % 50}.com`).join(', ');
  const one = cpuOf(() => parseMessage(Buffer.from(`From: a@example.com\r\nTo: ${many}\r\nSubject: t\r\n\r\nhello\r\n`)));
  // The header line itself is cut at MAX_HEADER_LINE_BYTES first; what is left still exceeds the address cap.
  assert.equal(one.value.to.length, MAX_HEADER_ADDRESSES);
  assert.equal(one.value.to[0]!.address, 'u0@example0.com');
  assert.ok(one.value.anomalies.has('too_many_addresses'));
  const field = `To: ${Array.from({ length: 4000 }, (_, i) => `u${i}@e.com`).join(', ')}\r\n`;
  const wide = cpuOf(() => parseMessage(Buffer.from(`${field.repeat(128)}\r\nx`)));
  assert.equal(wide.value.to.length, MAX_HEADER_ADDRESSES);
  assert.ok(wide.us < CAPPED_PARSE_CPU_US, `${wide.us} µs (1.5 s before the caps)`);
  // Junk that yields no address is bounded by the characters handed to the parser.
  const junk = cpuOf(() => parseMessage(Buffer.from(`${`To: ${'<<<'.repeat(20_000)}\r\n`.repeat(128)}\r\nx`)));
  assert.ok(junk.value.anomalies.has('too_many_addresses'));
  assert.ok(junk.us < CAPPED_PARSE_CPU_US, `${junk.us} µs`);
  const fine = parseMessage(Buffer.from('From: a@example.com\r\nTo: b@example.org, c@example.org\r\nCc: d@example.org\r\n\r\nx'));
  assert.ok(!fine.anomalies.has('too_many_addresses'));
});

test('encoded words past MAX_ENCODED_WORDS stay as written, and the message says so', async () => {
  const { MAX_ENCODED_WORDS } = await import('../../src/message/limits.js');
  const words = '=?koi8-r?B?YQ==?= =?windows-1251?Q?b?= '.repeat(1500);
  const r = cpuOf(() => parseMessage(Buffer.from(`Subject: =?utf-8?Q?caf=C3=A9?=\r\n${`X-E: ${words}\r\n`.repeat(128)}\r\nx`)));
  assert.equal(r.value.subject, 'café', 'the first words are decoded');
  assert.ok(r.value.anomalies.has('too_many_encoded_words'));
  const last = r.value.headers.get('x-e').at(-1)!.value;
  assert.ok(last.startsWith('=?koi8-r?B?YQ==?='), 'a later header keeps its words as written');
  assert.ok(r.us < CAPPED_PARSE_CPU_US, `${r.us} µs (0.6 s before the cap)`);
  const few = parseMessage(Buffer.from(`Subject: ${'=?utf-8?Q?a?= '.repeat(MAX_ENCODED_WORDS - 1)}\r\n\r\nx`));
  assert.ok(!few.anomalies.has('too_many_encoded_words'));
  assert.equal(few.subject, 'a'.repeat(MAX_ENCODED_WORDS - 1));
});

test('Content-Type with thousands of parameters: the first MAX_CONTENT_PARAMS are read', async () => {
  const { MAX_CONTENT_PARAMS } = await import('../../src/message/limits.js');
  const params = Array.from({ length: 4000 }, (_, i) => `p${i}*${i}=x`).join('; ');
  const m = parseMessage(Buffer.from(`Content-Type: multipart/mixed; boundary="b"; ${params}\r\n\r\n--b\r\n\r\nhello\r\n--b--\r\n`));
  assert.ok(m.anomalies.has('too_many_params'));
  assert.equal(m.textParts[0]!.text, 'hello', 'the boundary, an early parameter, still works');
  assert.ok(Object.keys(m.root.contentType.params).length <= MAX_CONTENT_PARAMS);
  const quoted = parseMessage(Buffer.from('Content-Type: text/plain; name="a;b\\"c"; charset=utf-8\r\n\r\nx'));
  assert.equal(quoted.root.contentType.params['name'], 'a;b"c');
  assert.equal(quoted.root.contentType.params['charset'], 'utf-8');
  assert.ok(!quoted.anomalies.has('too_many_params'));
});

test('HTML over the per-part and per-message caps is not rendered, and the message says so', async () => {
  const { MAX_HTML_BYTES, MAX_HTML_BYTES_PER_MESSAGE } = await import('../../src/message/limits.js');
  const big = parseMessage(Buffer.from(`Content-Type: text/html\r\n\r\n<p>start</p>${'<b>x</b>'.repeat(MAX_HTML_BYTES / 4)}<p>end</p>`));
  assert.ok(big.anomalies.has('html_too_long'));
  assert.match(big.textParts[0]!.text, /^start/);
  assert.doesNotMatch(big.textParts[0]!.text, /end$/);
  const body = `<p>part</p>${'<i>y</i>'.repeat((MAX_HTML_BYTES - 16) / 8)}`;
  const parts = Math.ceil(MAX_HTML_BYTES_PER_MESSAGE / body.length) + 2;
  let s = 'Content-Type: multipart/mixed; boundary="b"\r\n\r\n';
  for (let i = 0; i < parts; i++) s += `--b\r\nContent-Type: text/html\r\n\r\n${body}\r\n`;
  const r = cpuOf(() => parseMessage(Buffer.from(`${s}--b--\r\n`)));
  assert.ok(r.value.anomalies.has('html_too_long'));
  assert.equal(r.value.textParts.at(-1)!.text, '', 'the last parts are past the message budget');
  assert.match(r.value.textParts[0]!.text, /^part/);
  assert.ok(!parseMessage(Buffer.from('Content-Type: text/html\r\n\r\n<p>hi</p>')).anomalies.has('html_too_long'));
});

test('text past the URL-scan caps is not searched, and the message says so', async () => {
  const { MAX_URL_SCAN_CHARS, MAX_URL_SCAN_CHARS_PER_MESSAGE } = await import('../../src/message/limits.js');
  const long = parseMessage(Buffer.from(`Content-Type: text/plain\r\n\r\nhttp://first.example.com/ ${'a '.repeat(MAX_URL_SCAN_CHARS / 2)} http://late.example.com/`));
  assert.ok(long.anomalies.has('url_scan_truncated'));
  assert.deepEqual(long.urls.map((u) => u.host), ['first.example.com']);
  const body = `${'w http://x.example.net/p '.repeat(MAX_URL_SCAN_CHARS / 26)}\r\n`;
  const parts = Math.ceil(MAX_URL_SCAN_CHARS_PER_MESSAGE / body.length) + 1;
  let s = 'Subject: see http://subject.example.org/\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n';
  for (let i = 0; i < parts; i++) s += `--b\r\nContent-Type: text/plain\r\n\r\n${body}http://part${i}.example.com/\r\n`;
  const m = parseMessage(Buffer.from(`${s}--b--\r\n`));
  assert.ok(m.anomalies.has('url_scan_truncated'));
  const hosts = new Set(m.urls.map((u) => u.host));
  assert.ok(hosts.has('part0.example.com'));
  assert.ok(!hosts.has(`part${parts - 1}.example.com`), 'the last part is past the message budget');
  assert.ok(hosts.has('subject.example.org'), 'the subject is scanned whatever the body used');
});

test('a <meta charset> in HTML is found per tag: a head of thousands of <meta stays cheap', () => {
  const koi = parseMessage(Buffer.concat([
    Buffer.from('Content-Type: text/html\r\n\r\n<html><head><META http-equiv="Content-Type" content="text/html; charset=koi8-r"></head><body>'),
    Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]),
    Buffer.from('</body></html>'),
  ]));
  assert.equal(koi.textParts[0]!.charset, 'koi8-r');
  assert.equal(koi.textParts[0]!.text, 'Привет');
  let s = 'Content-Type: multipart/mixed; boundary="b"\r\n\r\n';
  for (let i = 0; i < 1000; i++) s += `--b\r\nContent-Type: text/html\r\n\r\n${'<meta '.repeat(400)}\r\n`;
  const r = cpuOf(() => parseMessage(Buffer.from(`${s}--b--\r\n`)));
  assert.equal(r.value.textParts.length, 1000);
  assert.ok(r.us < CAPPED_PARSE_CPU_US, `${r.us} µs`);
});

test('more Received headers than MAX_RECEIVED_HOPS: the message says so', async () => {
  const { MAX_RECEIVED_HOPS } = await import('../../src/message/limits.js');
  const hop = 'Received: from a.example (a.example [192.0.2.1]) by b.example with ESMTP; Thu, 1 Jan 2026 00:00:00 +0000\r\n';
  assert.ok(parseMessage(Buffer.from(`${hop.repeat(MAX_RECEIVED_HOPS + 1)}\r\nx`)).anomalies.has('too_many_received'));
  assert.ok(!parseMessage(Buffer.from(`${hop.repeat(MAX_RECEIVED_HOPS)}\r\nx`)).anomalies.has('too_many_received'));
});

test('a bare CR inside a header value is dropped like a fold (found by the header property test)', () => {
  const m = parseMessage(Buffer.from('Received:1\r: \r\nSubject: a\rb\r\n\r\nx'));
  assert.equal(m.headers.first('received')!.value, '1:');
  assert.equal(m.subject, 'ab');
});
