// Property tests of the header-level parsers in src/message/: the header block, Received
// values, dates, addresses (header lists and envelope paths), RFC 2047 encoded words and
// Content-Type parameters. Random and structured inputs never throw (these parsers are
// documented never to), stay within their caps, cost bounded CPU, and round-trip where a
// round trip is defined.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { makeAddress, parseAddressList, parseEnvelopeAddress } from '../../src/message/addresses.js';
import { parseContentType, parseParams } from '../../src/message/content-type.js';
import { decodeEncodedWords, encodedWordBudget } from '../../src/message/encoded-words.js';
import { parseHeaderBlock } from '../../src/message/header-list.js';
import { MAX_CONTENT_PARAMS, MAX_ENCODED_WORDS, MAX_HEADERS, MAX_RECEIVED_TOKENS } from '../../src/message/limits.js';
import { parseMailDate, stripTrailingComment } from '../../src/message/mail-date.js';
import { normaliseIp, parseReceived } from '../../src/message/parse-received.js';
import { forAddress } from '../../src/modules/received/check.js';
import { BLANKS, CALL_CPU_MS, cheap, check, mailText, parserBytes, parserInput, repeated } from './property-helpers.js';

const RECEIVED_TOKENS = ['from ', 'by ', 'with ', 'id ', 'for ', 'via ', '[', ']', '(', ')', '[IPv6:', '192.0.2.1', '2001:db8::1', ';', 'helo=', ' for <', '>', 'ESMTPSA', 'using TLS'];

test('parseReceived: any value parses without throwing, in bounded CPU, to fields taken from it', () => {
  check(400, fc.property(parserInput(RECEIVED_TOKENS, 300), (value) => {
    const hop = cheap('parseReceived', CALL_CPU_MS, () => parseReceived(value));
    assert.equal(hop.raw, value);
    for (const f of [hop.fromHelo, hop.by, hop.id, hop.for]) if (f !== undefined) assert.equal(typeof f, 'string');
    if (hop.fromIp !== undefined) assert.ok(ipaddr.isValid(hop.fromIp), hop.fromIp);
    if (hop.timestamp !== undefined) assert.ok(!Number.isNaN(hop.timestamp.getTime()));
    assert.equal(typeof hop.unparsed, 'boolean');
  }));
});

test('parseReceived: blanks of every kind between the clauses read like spaces', () => {
  const blank = fc.constantFrom(...BLANKS.filter((b) => b !== '\r' && b !== '\n'));
  check(200, fc.property(fc.array(blank, { minLength: 1, maxLength: 3 }).map((a) => a.join('')), fc.integer({ min: 0, max: 255 }), (sep, octet) => {
    const hop = parseReceived(`from a.example${sep}(a.example [192.0.2.${octet}])${sep}by b.example${sep}with${sep}ESMTPS${sep}id${sep}X1; Thu, 1 Jan 2026 00:00:00 +0000`);
    assert.equal(hop.fromHelo, 'a.example');
    assert.equal(hop.fromIp, `192.0.2.${octet}`);
    assert.equal(hop.by, 'b.example');
    assert.equal(hop.protocol, 'ESMTPS');
    assert.equal(hop.tls, true);
    assert.equal(hop.id, 'X1');
  }));
});

test('parseReceived: at most MAX_RECEIVED_TOKENS are read; more are flagged', () => {
  check(50, fc.property(fc.integer({ min: MAX_RECEIVED_TOKENS + 1, max: 1500 }), fc.constantFrom('x ', '() ', '[a] ', 'x\u00a0'), (n, unit) => {
    assert.equal(cheap('parseReceived', CALL_CPU_MS, () => parseReceived(`from a by b ${unit.repeat(n)}`)).truncated, true);
  }));
});

test('normaliseIp: what it returns is a valid address it returns again', () => {
  const ipish = fc.oneof(fc.ipV4(), fc.ipV6(), parserInput(['.', ':', '[', ']', 'IPv6:', '::ffff:', '%eth0', '1', '255'], 40));
  check(400, fc.property(ipish, (text) => {
    const ip = normaliseIp(text);
    if (ip === undefined) return;
    assert.ok(ipaddr.isValid(ip), ip);
    assert.equal(normaliseIp(ip), ip);
  }));
});

test('stripTrailingComment and parseMailDate: the regexp they replace, without its quadratic cost', () => {
  const re = /\s*\([^)]*\)\s*$/;
  check(600, fc.property(parserInput(['(', ')', ' (UTC)', 'Thu, 1 Jan 2026 00:00:00 +0000'], 80), (text) => {
    assert.equal(cheap('stripTrailingComment', CALL_CPU_MS, () => stripTrailingComment(text)), text.length > 2000 ? stripTrailingComment(text) : text.replace(re, ''));
    const d = cheap('parseMailDate', CALL_CPU_MS, () => parseMailDate(text));
    if (d !== undefined) assert.ok(!Number.isNaN(d.getTime()));
  }));
  // A date with a zone comment reads as the date.
  check(200, fc.property(fc.date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true }), fc.constantFrom(' (UTC)', '(GMT)', ' \t(+0000) '), (date, comment) => {
    const whole = new Date(Math.floor(date.getTime() / 1000) * 1000);
    assert.equal(parseMailDate(whole.toUTCString() + comment)?.getTime(), whole.getTime());
  }));
});

test("forAddress: the Received 'for <…>' regexp it replaces, linear", () => {
  const re = /\sfor\s<(.*?)>/;
  check(600, fc.property(parserInput([' for <', 'for', '<', '>', '\n', '\u2028', 'a@b'], 60), (value) => {
    const got = cheap('forAddress', CALL_CPU_MS, () => forAddress(value));
    // The regexp itself is quadratic on long values: compare on the short ones.
    if (value.length < 3000) assert.equal(got, re.exec(value)?.[1]);
  }));
});

const HEADER_TOKENS = ['\r\n', '\n', '\r\n ', '\r\n\t', ': ', ':', 'Subject', 'From', 'To', 'Received', 'X-A', '=?utf-8?B?w6k=?=', '=?iso-8859-1?Q?caf=E9?=', '\r\n\r\n', '\n\n'];

test('parseHeaderBlock: any bytes give a block within the input and the caps, in bounded CPU', () => {
  check(400, fc.property(parserBytes(HEADER_TOKENS, 600), (buf) => {
    const block = cheap('parseHeaderBlock', CALL_CPU_MS, () => parseHeaderBlock(buf, 0, buf.length));
    assert.ok(block.bodyOffset >= 0 && block.bodyOffset <= buf.length);
    assert.ok(block.headers.length <= MAX_HEADERS);
    for (const h of block.headers) {
      assert.equal(h.key, h.name.toLowerCase());
      assert.ok(!h.value.includes('\n') && !h.value.includes('\r'), 'values are unfolded');
    }
  }));
});

test('parseHeaderBlock: generated headers read back as written', () => {
  const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/);
  const value = fc.stringMatching(/^[ -9;-~]{0,60}$/).map((v) => v.trim());
  check(300, fc.property(fc.array(fc.tuple(name, value), { minLength: 1, maxLength: 30 }), fc.constantFrom('\r\n', '\n'), fc.boolean(), (fields, nl, fold) => {
    const text = fields.map(([n, v]) => {
      const cut = v.indexOf(' ', 1);
      // Folding at a blank keeps the value once unfolded.
      const written = fold && cut > 0 ? `${v.slice(0, cut)}${nl}${v.slice(cut)}` : v;
      return `${n}: ${written}${nl}`;
    }).join('') + `${nl}body`;
    const buf = Buffer.from(text);
    const block = parseHeaderBlock(buf, 0, buf.length);
    assert.deepEqual(block.headers.map((h) => [h.name, h.value]), fields.map(([n, v]) => [n, v.trim()]));
    assert.equal(buf.toString('latin1', block.bodyOffset), 'body');
    assert.equal(block.newline, nl);
  }));
});

test('decodeEncodedWords: any value decodes without throwing; encoded text round-trips; the budget holds', () => {
  check(400, fc.property(parserInput(['=?', '?=', '?B?', '?Q?', 'utf-8', 'koi8-r', 'x-bogus', '*en', '_', '=E9', 'w6k='], 200), (value) => {
    const budget = encodedWordBudget();
    const text = cheap('decodeEncodedWords', CALL_CPU_MS, () => decodeEncodedWords(value, budget));
    assert.equal(typeof text, 'string');
    assert.ok(budget.left >= 0 && budget.left <= MAX_ENCODED_WORDS);
  }));
  const word = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 });
  check(300, fc.property(fc.array(word, { minLength: 1, maxLength: 8 }), fc.constantFrom('B', 'Q'), (words, enc) => {
    const encode = (w: string): string => {
      const bytes = Buffer.from(w, 'utf8');
      if (enc === 'B') return `=?utf-8?B?${bytes.toString('base64')}?=`;
      return `=?utf-8?Q?${[...bytes].map((b) => `=${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')}?=`;
    };
    // Adjacent words separated by blanks join (RFC 2047 §6.2).
    assert.equal(decodeEncodedWords(words.map(encode).join(' \r\n ')), words.join(''));
    assert.equal(decodeEncodedWords(`a ${encode(words[0]!)} b`), `a ${words[0]} b`);
  }));
});

test('parseParams / parseContentType: any value parses within MAX_CONTENT_PARAMS; simple parameters round-trip', () => {
  check(400, fc.property(parserInput([';', '=', '"', '*0', '*1*', "utf-8''", '%E2%82%AC', 'boundary', 'charset', 'name', 'text/plain', 'multipart/mixed'], 200), (value) => {
    const p = cheap('parseParams', CALL_CPU_MS, () => parseParams(value));
    assert.ok(Object.keys(p.params).length <= MAX_CONTENT_PARAMS + 1);
    const ct = parseContentType(value);
    assert.match(ct.type, /^[^/\s]+\/[^/\s]+$/);
  }));
  const token = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
  const pvalue = fc.stringMatching(/^[ -!#-:<-[\]-~]{0,30}$/);
  check(300, fc.property(fc.uniqueArray(fc.tuple(token, pvalue), { selector: ([k]) => k, maxLength: 10 }), (params) => {
    const header = `text/plain${params.map(([k, v]) => `; ${k}="${v}"`).join('')}`;
    const ct = parseContentType(header);
    assert.equal(ct.type, 'text/plain');
    // Quoted, a value keeps its blanks.
    for (const [k, v] of params) assert.equal(ct.params[k], v, k);
  }));
});

test('parseAddressList and makeAddress: any list parses; generated mailboxes read back', () => {
  check(400, fc.property(parserInput(['@', '<', '>', ',', ';', ':', '"', 'a@b.example', 'Name <x@y.example>', 'group:', '=?utf-8?B?w6k=?='], 150), (value) => {
    for (const a of cheap('parseAddressList', CALL_CPU_MS, () => parseAddressList(value))) {
      assert.equal(typeof a.address, 'string');
      assert.equal(a.domain, a.domain.toLowerCase());
    }
    const m = makeAddress(value);
    assert.equal(m.domain, m.domain.toLowerCase());
  }));
  const local = fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,15}$/).filter((l) => !l.includes('..') && !l.endsWith('.'));
  const domain = fc.stringMatching(/^[a-z0-9]{1,10}\.(?:example|test|org)$/);
  check(300, fc.property(fc.array(fc.tuple(local, domain), { minLength: 1, maxLength: 12 }), (boxes) => {
    const got = parseAddressList(boxes.map(([l, d], i) => (i % 2 ? `"User ${i}" <${l}@${d}>` : `${l}@${d}`)).join(', '));
    assert.deepEqual(got.map((a) => a.address), boxes.map(([l, d]) => `${l}@${d}`));
  }));
});

test('parseEnvelopeAddress: any path parses or is refused; a dot-atom path read once reads the same again', () => {
  check(500, fc.property(parserInput(['<', '>', '@', '"', '\\', '[', ']', '.', ':', ',', 'a@b.example', '@r1,@r2:'], 80), (value) => {
    const a = cheap('parseEnvelopeAddress', CALL_CPU_MS, () => parseEnvelopeAddress(value));
    if (a === undefined || a.address === '') return;
    assert.equal(a.domain, a.domain.toLowerCase());
    assert.equal(a.address, `${a.local}@${a.domain}`);
    if (!/["\\\s]/.test(a.local)) assert.equal(parseEnvelopeAddress(`<${a.address}>`)?.address, a.address);
  }));
});

test('headers of mail-character soup cost bounded CPU even repeated thousands of times', () => {
  check(60, fc.property(repeated(mailText(10, HEADER_TOKENS), 3000), (text) => {
    const buf = Buffer.from(`Subject: ${text}\r\nDate: ${text}\r\nTo: ${text}\r\nContent-Type: text/plain; ${text}\r\n\r\nx`);
    const block = cheap('parseHeaderBlock', CALL_CPU_MS, () => parseHeaderBlock(buf, 0, buf.length));
    for (const h of block.headers) {
      cheap('parseMailDate', CALL_CPU_MS, () => parseMailDate(h.value));
      cheap('parseAddressList', CALL_CPU_MS, () => parseAddressList(h.value));
      cheap('parseParams', CALL_CPU_MS, () => parseParams(h.value));
      cheap('parseReceived', CALL_CPU_MS, () => parseReceived(h.value));
    }
  }));
});
