// Property tests for the transport's parsers (src/http/): the incremental request parser (heads,
// Content-Length, chunked framing with extensions and trailers, close-delimited bodies, the
// legacy SPAMC/RSPAMC heads, pipelining), request targets, zstd framing with its output bound
// and dictionaries, and HTTP encryption (Key header, envelope, inner request and reply). Random
// and mutated-valid inputs end in a result or a coded error of the one status table, whatever
// the way the bytes are split into socket reads; valid inputs round-trip. Run counts and
// seed: test/helpers/property.ts (FC_NUM_RUNS, FC_SEED).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RequestParser, type ParsedRequest, type ParserLimits } from '../../src/http/request-parser.js';
import { parseHeadText, parseTarget } from '../../src/http/request-head.js';
import { selectInputDictionary, zstdCompress, zstdDecompressBounded } from '../../src/http/zstd.js';
import { serializeReplyHead, replyForError } from '../../src/http/reply.js';
import { ERROR_TABLE, MailsiftError } from '../../src/http/errors.js';
import { formatKeyHeader, parseKeyHeader } from '../../src/http/crypt/key-header.js';
import { openReplyBody, parseResponse, sealRequest, serializeInnerRequest } from '../../src/http/crypt/envelope.js';
import { HttpCryptServer } from '../../src/http/crypt/server-crypt.js';
import { generateKeypair, keyId } from '../../src/crypto/keypair.js';
import { base32Encode } from '../../src/core/base32.js';
import type { Reply } from '../../src/http/types.js';
import { parseV2Headers } from '../../src/protocol/parse-v2.js';
import { cpuMs, expectCoded, fcParams, mutated, noisyBytes, splitAt } from '../helpers/property.js';

const LIMITS: ParserLimits = { maxHeaderBytes: 2048, maxBodyBytes: 4096 };
/** A whole stream of a few KiB parses in well under a millisecond; this only catches blow-ups. */
const MAX_STREAM_CPU_MS = 250;

// ---------------------------------------------------------------------------------------------
// What a parse produced, in a comparable form.

interface Snapshot {
  method: string;
  path: string;
  query: Array<[string, string]>;
  raw: Array<[string, string]>;
  version: string;
  body: string;
  keepAlive: boolean;
  closeDelimited: boolean;
  legacy: string | undefined;
}

function snap(r: ParsedRequest): Snapshot {
  return {
    method: r.method,
    path: r.path,
    query: [...r.query],
    raw: r.headers.raw.map(([k, v]) => [k, v]),
    version: r.version,
    body: r.body.toString('latin1'),
    keepAlive: r.keepAlive,
    closeDelimited: r.closeDelimited,
    legacy: r.legacy,
  };
}

interface Transcript {
  requests: Snapshot[];
  /** 'end' when the stream ended cleanly, else the code thrown. */
  outcome: string;
}

/** Feeds the chunks as socket reads would arrive, takes every request, then the half-close. */
function transcript(chunks: Buffer[], limits: ParserLimits = LIMITS): Transcript {
  const p = new RequestParser(limits);
  const requests: Snapshot[] = [];
  const r = expectCoded(() => {
    for (const c of chunks) {
      p.feed(c);
      for (let req = p.next(); req; req = p.next()) requests.push(snap(req));
    }
    const last = p.end();
    if (last) requests.push(snap(last));
  });
  return { requests, outcome: r.ok ? 'end' : r.code };
}

// ---------------------------------------------------------------------------------------------
// Valid requests, with the parse each must give.

const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const tokenArb = fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength: 12 });
/** Names the parser gives meaning to; generated headers avoid them (each framing case adds its own). */
const RESERVED = new Set(['content-length', 'transfer-encoding', 'connection', 'expect']);
const headerNameArb = tokenArb.filter((n) => !RESERVED.has(n.toLowerCase()) && !n.toLowerCase().startsWith('q-'));
/** A value as sent: no CR/LF/NUL, no leading blank (the parser skips it); trailing blanks are kept. */
const headerValueArb = fc
  .string({ maxLength: 24, unit: fc.oneof(fc.constantFrom(...'abcXYZ019 \t:;,="\'/'.split('')), fc.constantFrom('é', 'ü', '☃', '😀')) })
  .filter((v) => v.length === 0 || (v[0] !== ' ' && v[0] !== '\t'));

interface GenRequest {
  kind: 'http' | 'legacy';
  method: string;
  path: string;
  query: Array<[string, string]>;
  headers: Array<[string, string]>;
  /** An obs-folded continuation of the last header. */
  fold: string | undefined;
  version: 'HTTP/1.1' | 'HTTP/1.0';
  keepAliveHeader: 'keep-alive' | 'close' | undefined;
  framing: 'length' | 'chunked' | 'none';
  body: Buffer;
  chunkCuts: number[];
  chunkExt: boolean;
  trailers: Array<[string, string]>;
  lf: boolean;
  legacyToken: 'SPAMC/1.2' | 'RSPAMC/1.3';
  legacyVerb: 'SYMBOLS' | 'CHECK';
}

const genRequestArb: fc.Arbitrary<GenRequest> = fc.record({
  kind: fc.constantFrom<GenRequest['kind']>('http', 'http', 'http', 'legacy'),
  method: fc.constantFrom('GET', 'POST', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'PATCH'),
  path: fc.stringMatching(/^\/[A-Za-z0-9._~!$'()*+,;=:@\/-]{0,20}$/),
  query: fc.uniqueArray(fc.tuple(fc.stringMatching(/^q-[a-z0-9]{1,6}$/), fc.string({ maxLength: 10, unit: 'grapheme' })), { selector: ([k]) => k, maxLength: 3 }),
  headers: fc.array(fc.tuple(headerNameArb, headerValueArb), { maxLength: 5 }),
  fold: fc.option(fc.stringMatching(/^[a-z]{1,8}$/), { nil: undefined }),
  version: fc.constantFrom<GenRequest['version']>('HTTP/1.1', 'HTTP/1.0'),
  keepAliveHeader: fc.constantFrom<GenRequest['keepAliveHeader']>('keep-alive', 'close', undefined),
  framing: fc.constantFrom<GenRequest['framing']>('length', 'chunked', 'none'),
  body: fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u)),
  chunkCuts: fc.array(fc.nat(), { maxLength: 4 }),
  chunkExt: fc.boolean(),
  trailers: fc.array(fc.tuple(headerNameArb, headerValueArb.map((v) => v.trimEnd())), { maxLength: 2 }),
  lf: fc.boolean(),
  legacyToken: fc.constantFrom<GenRequest['legacyToken']>('SPAMC/1.2', 'RSPAMC/1.3'),
  legacyVerb: fc.constantFrom<GenRequest['legacyVerb']>('SYMBOLS', 'CHECK'),
});

/** The request's bytes and the snapshot the parser must produce for it. */
function render(g: GenRequest, last: boolean): { bytes: Buffer; expect: Snapshot } {
  const nl = g.lf ? '\n' : '\r\n';
  const raw: Array<[string, string]> = [];
  const lines: string[] = [];
  const addHeader = (k: string, v: string): void => {
    lines.push(`${k}: ${v}`);
    raw.push([k, v]);
  };
  for (const [k, v] of g.headers) addHeader(k, v);
  if (g.fold !== undefined && lines.length > 0) {
    lines.push(` \t${g.fold}`);
    raw[raw.length - 1]![1] += ` ${g.fold}`;
  }
  if (g.kind === 'legacy') {
    addHeader('Content-length', String(g.body.length));
    const head = `${g.legacyVerb} ${g.legacyToken}${nl}${lines.map((l) => l + nl).join('')}${nl}`;
    return {
      bytes: Buffer.concat([Buffer.from(head, 'utf8'), g.body]),
      expect: { method: g.legacyVerb, path: '', query: [], raw, version: g.legacyToken, body: g.body.toString('latin1'), keepAlive: false, closeDelimited: false, legacy: g.legacyToken[0] === 'S' ? 'spamc' : 'rspamc' },
    };
  }
  if (g.keepAliveHeader) addHeader('Connection', g.keepAliveHeader);
  const keepAlive = g.version === 'HTTP/1.1' ? g.keepAliveHeader !== 'close' : g.keepAliveHeader === 'keep-alive';
  // Without framing an HTTP/1.0 body runs to EOF: only the last request of a stream may do that.
  const closeBody = g.framing === 'none' && g.version === 'HTTP/1.0' && !keepAlive && g.method !== 'GET' && g.method !== 'HEAD';
  let framing = g.framing;
  if (closeBody && !last) framing = 'length';
  let bodyBytes: Buffer;
  let body = g.body;
  if (framing === 'length') {
    addHeader('Content-Length', String(g.body.length));
    bodyBytes = g.body;
  } else if (framing === 'chunked') {
    addHeader('Transfer-Encoding', 'chunked');
    const pieces = splitAt(g.body, g.chunkCuts).filter((c) => c.length > 0);
    const parts: Buffer[] = [];
    for (const c of pieces) parts.push(Buffer.from(`${c.length.toString(16)}${g.chunkExt ? ';name=value' : ''}${nl}`), c, Buffer.from(nl));
    let trailer = `0${g.chunkExt ? ';last' : ''}${nl}`;
    for (const [k, v] of g.trailers) {
      trailer += `${k}: ${v}${nl}`;
      raw.push([k, v]);
    }
    parts.push(Buffer.from(trailer + nl, 'utf8'));
    bodyBytes = Buffer.concat(parts);
  } else {
    bodyBytes = closeBody ? g.body : Buffer.alloc(0);
    body = bodyBytes;
  }
  const qs = g.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const query: Array<[string, string]> = g.query.map(([k, v]) => [k, v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v]);
  // Query parameters become headers after the header block (and after trailers are added later).
  const queryRaw: Array<[string, string]> = query.map(([k, v]) => [k, v]);
  const trailerRaw = framing === 'chunked' ? raw.splice(raw.length - g.trailers.length, g.trailers.length) : [];
  const head = `${g.method} ${g.path}${qs ? `?${qs}` : ''} ${g.version}${nl}${lines.map((l) => l + nl).join('')}${nl}`;
  return {
    bytes: Buffer.concat([Buffer.from(head, 'utf8'), bodyBytes]),
    expect: {
      method: g.method,
      path: g.path,
      query,
      raw: [...raw, ...queryRaw, ...trailerRaw],
      version: g.version,
      body: body.toString('latin1'),
      keepAlive: closeBody && framing === 'none' ? false : keepAlive,
      closeDelimited: closeBody && framing === 'none',
      legacy: undefined,
    },
  };
}

function renderStream(gs: GenRequest[]): { bytes: Buffer; expect: Snapshot[] } {
  const out = gs.map((g, i) => render(g, i === gs.length - 1));
  return { bytes: Buffer.concat(out.map((o) => o.bytes)), expect: out.map((o) => o.expect) };
}

const validStreamArb = fc.array(genRequestArb, { minLength: 1, maxLength: 3 }).map(renderStream);
const ROOMY: ParserLimits = { maxHeaderBytes: 64 * 1024, maxBodyBytes: 1 << 20 };

// ---------------------------------------------------------------------------------------------

describe('request parser', () => {
  it('valid request streams round-trip, however the bytes are split', () => {
    fc.assert(
      fc.property(validStreamArb, fc.array(fc.nat(), { maxLength: 12 }), ({ bytes, expect }, cuts) => {
        const t = transcript(splitAt(bytes, cuts), ROOMY);
        assert.equal(t.outcome, 'end');
        assert.deepEqual(t.requests, expect);
      }),
      fcParams(200),
    );
  });

  it('random and mutated streams end in requests or a coded error, the same for every split', () => {
    const streams = fc.oneof(
      { weight: 1, arbitrary: noisyBytes(600) },
      { weight: 3, arbitrary: mutated(validStreamArb.map((s) => s.bytes), 6) },
    );
    fc.assert(
      fc.property(streams, fc.array(fc.nat(), { minLength: 1, maxLength: 16 }), (bytes, cuts) => {
        let whole: Transcript | undefined;
        const ms = cpuMs(() => {
          whole = transcript([bytes]);
        });
        assert.ok(ms < MAX_STREAM_CPU_MS, `parse took ${ms} ms of CPU`);
        const split = transcript(splitAt(bytes, cuts));
        assert.deepEqual(split, whole, 'a different split gave a different parse');
        const bytewise = transcript(splitAt(bytes, Array.from({ length: Math.min(bytes.length, 64) }, (_, i) => i)));
        assert.deepEqual(bytewise, whole, 'a byte-at-a-time start gave a different parse');
        for (const r of whole!.requests) assert.ok(r.body.length <= LIMITS.maxBodyBytes);
      }),
      fcParams(300),
    );
  });

  it('limits hold for every split: header block, body, chunk-size line, trailers', () => {
    const big = fc.record({
      part: fc.constantFrom('header', 'body-length', 'body-chunked', 'chunk-ext', 'trailer'),
      size: fc.integer({ min: 1, max: 6000 }),
    }).map(({ part, size }) => {
      const pad = 'x'.repeat(size);
      switch (part) {
        case 'header':
          return Buffer.from(`POST /checkv2 HTTP/1.1\r\nX-Pad: ${pad}\r\nContent-Length: 0\r\n\r\n`);
        case 'body-length':
          return Buffer.from(`POST /checkv2 HTTP/1.1\r\nContent-Length: ${size}\r\n\r\n${pad}`);
        case 'body-chunked':
          return Buffer.from(`POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n${size.toString(16)}\r\n${pad}\r\n0\r\n\r\n`);
        case 'chunk-ext':
          return Buffer.from(`POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;${pad}\r\na\r\n0\r\n\r\n`);
        default:
          return Buffer.from(`POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-T: ${pad}\r\n\r\n`);
      }
    });
    fc.assert(
      fc.property(big, fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const whole = transcript([bytes]);
        assert.deepEqual(transcript(splitAt(bytes, cuts)), whole);
        assert.deepEqual(transcript(splitAt(bytes, Array.from({ length: bytes.length }, (_, i) => i))), whole);
        for (const r of whole.requests) assert.ok(r.body.length <= LIMITS.maxBodyBytes);
      }),
      fcParams(60),
    );
  });

  it('regression: a chunk-size line longer than its cap is refused whether or not it arrives in one read', () => {
    const bytes = Buffer.from(`POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(5000)}\r\na\r\n0\r\n\r\n`);
    assert.deepEqual(transcript([bytes], ROOMY), { requests: [], outcome: 'ERR_BAD_CHUNK' });
    assert.deepEqual(transcript(splitAt(bytes, [100, 4500]), ROOMY), { requests: [], outcome: 'ERR_BAD_CHUNK' });
  });

  it('regression: a folded header reads the same in the walk over raw headers and in lookups', () => {
    const req = parseHeadText('POST /checkv2 HTTP/1.1\r\nRcpt: a@example.com,\r\n  b@example.net\r\nX-Long: one\r\n\ttwo');
    assert.deepEqual(req.headers.raw, [['Rcpt', 'a@example.com, b@example.net'], ['X-Long', 'one two']]);
    assert.deepEqual(parseV2Headers(req.headers).rcpt, ['a@example.com', 'b@example.net']);
  });

  it('regression: trailers are decoded as UTF-8, like the header block', () => {
    const bytes = Buffer.from('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: é☃\r\n\r\n', 'utf8');
    assert.deepEqual(transcript([bytes]).requests[0]?.raw, [['Transfer-Encoding', 'chunked'], ['X-T', 'é☃']]);
  });

  it('feeding a header block one byte at a time costs linear CPU, not quadratic', () => {
    const byteAtATime = (padKiB: number): number => {
      const head = Buffer.from(`POST /checkv2 HTTP/1.1\r\nX-Pad: ${'a'.repeat(padKiB * 1024)}\r\nContent-Length: 0\r\n\r\n`);
      const p = new RequestParser({ maxHeaderBytes: 64 * 1024, maxBodyBytes: 1024 });
      let got: ParsedRequest | undefined;
      const ms = cpuMs(() => {
        for (let i = 0; i < head.length; i++) {
          p.feed(head.subarray(i, i + 1));
          got = p.next() ?? got;
        }
      });
      assert.equal(got?.path, '/checkv2');
      return ms;
    };
    byteAtATime(8); // warm-up: compile the parser's paths before measuring
    const ms = byteAtATime(60);
    // Copying the buffered head on every read was ~1.9 GB of copying here (~700 ms of CPU);
    // appending into a growing store is a few tens of ms.
    assert.ok(ms < 250, `byte-at-a-time head took ${ms} ms of CPU`);
  });

  it('request heads and targets only throw coded errors', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200, unit: 'binary' }), noisyBytes(300).map((b) => b.toString('utf8'))), (text) => {
        expectCoded(() => parseHeadText(text));
        expectCoded(() => parseTarget(text));
      }),
      fcParams(500),
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('zstd framing', () => {
  const DECODE_CODES = new Set(['ERR_DECOMPRESSION', 'ERR_BODY_TOO_LARGE']);

  it('random and mutated frames decode or end in ERR_DECOMPRESSION / ERR_BODY_TOO_LARGE, never past the bound', () => {
    const frames = fc.array(fc.uint8Array({ maxLength: 1000 }).map((u) => zstdCompress(Buffer.from(u))), { minLength: 1, maxLength: 3 }).map((fs) => Buffer.concat(fs));
    fc.assert(
      fc.property(fc.oneof(noisyBytes(200), mutated(frames, 5, ['\x28\xb5\x2f\xfd', '\x00', '\xff', '\x50\x2a\x4d\x18'])), fc.integer({ min: 0, max: 4096 }), (input, limit) => {
        const r = expectCoded(() => zstdDecompressBounded(input, limit), DECODE_CODES);
        if (r.ok) assert.ok(r.value.length <= limit);
      }),
      fcParams(250),
    );
  });

  it('frames round-trip, concatenated or not, and the bound is exact', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 3000 }), { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 10000 }), (inputs, limit) => {
        const plain = Buffer.concat(inputs.map((u) => Buffer.from(u)));
        const framed = Buffer.concat(inputs.map((u) => zstdCompress(Buffer.from(u))));
        const r = expectCoded(() => zstdDecompressBounded(framed, limit), DECODE_CODES);
        if (plain.length <= limit) {
          assert.ok(r.ok && r.value.equals(plain));
        } else {
          assert.deepEqual(r, { ok: false, code: 'ERR_BODY_TOO_LARGE' });
        }
      }),
      fcParams(200),
    );
  });

  it('the Dictionary header is numeric and names the configured dictionary, or a coded error', () => {
    const dicts = { input: { id: 4242, data: Buffer.from('dictionary bytes') } };
    const allowed = new Set(['ERR_DICTIONARY_NON_NUMERIC', 'ERR_DICTIONARY_UNDEFINED', 'ERR_DICTIONARY_MISMATCH']);
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 30, unit: 'binary' }), fc.nat().map(String), fc.constant(' 4242 ')), fc.boolean(), (header, configured) => {
        const r = expectCoded(() => selectInputDictionary(header, configured ? dicts : {}), allowed);
        if (r.ok) assert.equal(r.value, dicts.input.data);
      }),
      fcParams(300),
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('HTTP encryption', () => {
  const server = generateKeypair();
  const crypt = new HttpCryptServer({ keypair: server });
  // X25519 in pure JS costs milliseconds: a few client keys serve every run (the server caches
  // their shared keys as it does for a proxy that reuses its key).
  const clients = Array.from({ length: 4 }, () => generateKeypair());
  const clientArb = fc.constantFrom(...clients);
  const CRYPT_CODES = new Set(Object.keys(ERROR_TABLE).filter((c) => c.startsWith('ERR_CRYPT_')));

  function parseOuter(bytes: Buffer): ParsedRequest[] {
    const t: ParsedRequest[] = [];
    const p = new RequestParser(ROOMY);
    p.feed(bytes);
    for (let r = p.next(); r; r = p.next()) t.push(r);
    const last = p.end();
    if (last) t.push(last);
    return t;
  }

  it('the Key header parses from anything without throwing, and its own rendering reads back', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 120, unit: 'binary' }), fc.string({ maxLength: 120, unit: fc.constantFrom(...'ybndrfg8ejkmcpqxot1uwisza345h769=') })), (value) => {
        const k = parseKeyHeader(value);
        if (k) {
          assert.ok(k.shortId === undefined || k.shortId.length === 5);
          assert.ok(k.peerKey === undefined || k.peerKey.length === 32);
        }
      }),
      fcParams(500),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 5, maxLength: 64 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (id, pk) => {
        const k = parseKeyHeader(formatKeyHeader(id, pk));
        assert.ok(k?.shortId && Buffer.from(k.shortId).equals(Buffer.from(id.subarray(0, 5))));
        assert.ok(k.peerKey && Buffer.from(k.peerKey).equals(Buffer.from(pk)));
      }),
      fcParams(200),
    );
  });

  const innerArb = fc.record({
    method: fc.option(fc.constantFrom('GET', 'POST'), { nil: undefined }),
    path: fc.stringMatching(/^\/[a-z0-9]{0,12}$/),
    headers: fc.array(fc.tuple(headerNameArb, headerValueArb.map((v) => v.trim())), { maxLength: 4 }),
    body: fc.uint8Array({ maxLength: 400 }),
  });

  it('a sealed request opens to the inner request it was made from, and the sealed reply opens back', () => {
    fc.assert(
      fc.property(innerArb, clientArb, fc.option(fc.stringMatching(/^[a-z]{1,10}\.example$/), { nil: undefined }), fc.integer({ min: 200, max: 599 }), fc.uint8Array({ maxLength: 300 }), (inner, client, host, status, replyBody) => {
        const sealed = sealRequest(serializeInnerRequest(inner), server.publicKey, { clientKeypair: client, ...(host !== undefined ? { host, keepAlive: true } : {}) });
        const outer = parseOuter(sealed.bytes);
        assert.equal(outer.length, 1);
        const u = crypt.unwrap(outer[0]!, '192.0.2.1', ROOMY);
        assert.equal(u.kind, 'opened');
        if (u.kind !== 'opened') return;
        const method = inner.method ?? (inner.body.length > 0 ? 'POST' : 'GET');
        assert.equal(u.inner.method, method);
        assert.equal(u.inner.path, inner.path);
        assert.ok(u.inner.body.equals(Buffer.from(inner.body)));
        const sent = u.inner.headers.raw.filter(([k]) => !/^content-(length|type)$/i.test(k));
        assert.deepEqual(sent, inner.headers.filter(([k]) => !/^(content-(length|type)|connection)$/i.test(k)));
        const reply: Reply = { status, contentType: 'application/json', headers: [['X-R', 'v']], body: Buffer.from(replyBody) };
        const wrapped = crypt.wrap(reply, u.session, false, 'mailsift-test');
        const plain = openReplyBody(sealed.nm, wrapped.body as Buffer);
        assert.ok(plain, 'the reply opens with the shared key');
        const parsed = parseResponse(plain);
        assert.ok(parsed);
        assert.equal(parsed.status, status);
        // 1xx, 204 and 304 replies end at their head (RFC 9110): the body is not sent.
        const bodiless = status < 200 || status === 204 || status === 304;
        assert.ok(parsed.body.equals(bodiless ? Buffer.alloc(0) : Buffer.from(replyBody)));
        assert.equal(parsed.headers['x-r'], 'v');
      }),
      fcParams(30),
    );
  });

  it('mutated sealed requests and random Key headers are refused with a crypt code, never a throw', () => {
    const sealed = fc.sample(innerArb, { numRuns: 8, seed: 17 }).map((inner, i) => sealRequest(serializeInnerRequest(inner), server.publicKey, { clientKeypair: clients[i % clients.length]! }).bytes);
    const shortId = base32Encode(keyId(server.publicKey).subarray(0, 5));
    // Random public keys from a small pool (each new one costs an X25519), some of low order.
    const keys = [...Array.from({ length: 6 }, (_, i) => Buffer.alloc(32, i * 41 + 7)), Buffer.alloc(32), Buffer.from([1, ...Array(31).fill(0)])];
    const keyValue = fc.oneof(
      fc.string({ maxLength: 80, unit: 'binary' }),
      fc.constantFrom(...keys).map((pk) => `${shortId}=${base32Encode(pk)}`),
      fc.constantFrom(...keys).map((pk) => `${base32Encode(pk).slice(0, 8)}=${base32Encode(pk)}`),
    );
    const randomOuter = fc.tuple(keyValue, fc.uint8Array({ maxLength: 200 })).map(([key, body]) =>
      Buffer.concat([Buffer.from(`POST /post HTTP/1.1\r\nKey: ${key.replace(/[\r\n]/g, '')}\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1'), Buffer.from(body)]),
    );
    fc.assert(
      fc.property(fc.oneof(mutated(fc.constantFrom(...sealed), 4), randomOuter), (bytes) => {
        const parsed = expectCoded(() => parseOuter(bytes));
        if (!parsed.ok) return;
        for (const outer of parsed.value) {
          const u = crypt.unwrap(outer, '192.0.2.1', ROOMY);
          if (u.kind === 'rejected') {
            assert.ok(CRYPT_CODES.has(u.error.code), u.error.code);
            const reply = u.session ? crypt.wrap(replyForError(u.error), u.session, false, 'x') : replyForError(u.error);
            assert.ok(reply.status === 200 || reply.status === 400);
          } else if (u.kind === 'opened') {
            assert.ok(u.inner.body.length <= ROOMY.maxBodyBytes);
          }
        }
      }),
      fcParams(200),
    );
  });

  it('parseResponse reads any bytes without throwing, and every reply head it is given back', () => {
    fc.assert(
      fc.property(fc.oneof(noisyBytes(300), mutated(fc.constant(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: y\r\n\r\nok')), 6)), (bytes) => {
        const r = parseResponse(bytes);
        if (r) {
          assert.ok(r.status >= 0 && r.status <= 999);
          assert.ok(r.body.length <= bytes.length);
        }
      }),
      fcParams(400),
    );
    const replyArb = fc.record({
      status: fc.integer({ min: 100, max: 599 }),
      reason: fc.option(fc.string({ maxLength: 40, unit: 'binary' }), { nil: undefined }),
      // Reply heads go out as latin1: the values the server puts there are ASCII.
      headers: fc.array(fc.tuple(headerNameArb, fc.stringMatching(/^[!-~]([ -~]{0,20}[!-~])?$/)), { maxLength: 4 }),
      body: fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u)),
    });
    fc.assert(
      fc.property(replyArb, fc.boolean(), (reply, keepAlive) => {
        const head = serializeReplyHead({ ...reply, contentType: 'text/plain' }, reply.body.length, keepAlive, 'mailsift-test');
        const r = parseResponse(Buffer.concat([Buffer.from(head, 'latin1'), reply.body]));
        assert.ok(r, JSON.stringify(head));
        assert.equal(r.status, reply.status);
        assert.ok(r.body.equals(reply.body));
        assert.equal(r.headers['connection'], keepAlive ? 'keep-alive' : 'close');
        for (const [k, v] of reply.headers) {
          const got = r.headers[k.toLowerCase()];
          assert.ok(got === v || (Array.isArray(got) && got.includes(v)), `${k}: ${v}`);
        }
      }),
      fcParams(200),
    );
    // Header names are the peer's: `__proto__` (twice) and `constructor` are headers like the
    // others, and the record is not re-parented (it was, to an array, by the second `__proto__`).
    const odd = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\n__proto__: a\r\n__proto__: b\r\nconstructor: c\r\nContent-Length: 0\r\n\r\n'));
    assert.ok(odd);
    assert.deepEqual(Object.keys(odd.headers), ['__proto__', 'constructor', 'content-length']);
    assert.deepEqual(odd.headers['__proto__'], ['a', 'b']);
    assert.equal(odd.headers['constructor'], 'c');
    assert.equal(Object.getPrototypeOf(odd.headers), null);
  });
});

describe('error replies', () => {
  it('every code of the table renders a JSON error reply with its status; anything else is a 500', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...Object.keys(ERROR_TABLE)), fc.string({ maxLength: 20 })), fc.string({ maxLength: 60, unit: 'binary' }), (code, message) => {
        const reply = replyForError(new MailsiftError(code, message));
        const entry = ERROR_TABLE[code];
        assert.equal(reply.status, entry ? entry.status : 500);
        const body = JSON.parse(reply.body as string) as { error: string; error_domain: string };
        assert.equal(body.error, entry ? message : 'internal error');
        const head = serializeReplyHead(reply, Buffer.byteLength(reply.body as string), false, 'x');
        // Status line, 5 headers (Connection, Server, Date, Content-Length, Content-Type), blank line, '';
        // a 204 has neither Content-Length nor Content-Type (it carries no body).
        assert.equal(head.split('\r\n').length, reply.status === 204 ? 6 : 8, JSON.stringify(head));
      }),
      fcParams(300),
    );
  });
});
