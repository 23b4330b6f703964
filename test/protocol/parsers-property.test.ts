// Property tests for the scan-protocol parsers of src/protocol/: the Settings header (JSON and
// UCL), envelope values, v2 request headers and bodies (whole-body zstd, dictionaries), the
// /checkv3 multipart reader and its JSON/msgpack metadata, and the reply encoders read back by
// the client's decoder. Random and mutated-valid inputs may only end in a coded error, never
// pollute shared prototypes, and stay cheap; valid inputs round-trip through the encoder
// that exists for them. Run counts and seed: see test/helpers/property.ts (FC_NUM_RUNS, FC_SEED).

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encode as msgpackEncode } from '@msgpack/msgpack';
import { RequestHeaders, type Request } from '../../src/http/types.js';
import { zstdCompress } from '../../src/http/zstd.js';
import { parseSettingsValue } from '../../src/protocol/settings-parse.js';
import { parseClientIp, parseEnvelopePath, splitAddressList } from '../../src/protocol/envelope.js';
import { parseV2Headers } from '../../src/protocol/parse-v2.js';
import { decodeV2Request } from '../../src/protocol/decode-v2.js';
import { decodeV3Request } from '../../src/protocol/parse-v3.js';
import { boundaryFromContentType, MAX_FORM_PARTS, parseFormData } from '../../src/protocol/multipart.js';
import { emitJson, type ReplyValue } from '../../src/protocol/json-emit.js';
import { buildV2Reply } from '../../src/protocol/reply-v2.js';
import { buildV3Reply } from '../../src/protocol/render-v3.js';
import { renderRspamcText, renderSpamcText } from '../../src/protocol/render-text.js';
import { emptyMeta, SCAN_FLAGS, type ScanFlag, type ScanResult } from '../../src/core/scan-types.js';
import { buildV2Request, buildV3Request } from '../../src/client/request.js';
import { buildMultipart } from '../../src/client/multipart.js';
import { decodeReply } from '../../src/client/reply.js';
import type { ScanOptions } from '../../src/client/types.js';
import {
  cpuMs, expectCoded, fcParams, mutated, noisyBytes, objectPrototypeKeys, plainPrototypes,
} from '../helpers/property.js';

/** One parse of inputs this size costs well under a millisecond; this bound only catches blow-ups. */
const MAX_PARSE_CPU_MS = 250;

// ---------------------------------------------------------------------------------------------
// Generators.

/** Keys as UCL writes them bare, plus the names that reach JavaScript's prototype machinery. */
const keyArb = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_\-.]{0,11}$/) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty') },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

type SettingsValue = string | number | boolean | null | SettingsValue[] | { [k: string]: SettingsValue };

/** A settings document: the value shapes UCL and JSON share (no -0, no non-finite numbers). */
const settingsValueArb: fc.Arbitrary<SettingsValue> = fc.letrec<{ value: SettingsValue; object: { [k: string]: SettingsValue } }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ maxLength: 10, unit: 'grapheme' }),
    fc.integer({ min: -1e6, max: 1e6 }),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }).filter((d) => !Object.is(d, -0)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    tie('object'),
  ),
  object: fc.dictionary(keyArb, tie('value'), { maxKeys: 5 }),
})).object as fc.Arbitrary<SettingsValue>;

function uclString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** Renders a value in UCL's relaxed syntax: `key = value;`, `key { … }`, `[a, b]`. */
function toUcl(v: SettingsValue, bareKeys: boolean): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return uclString(v);
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map((x) => toUcl(x, bareKeys)).join(', ')}]`;
  return `{ ${uclMembers(v, bareKeys)} }`;
}

function uclMembers(o: { [k: string]: SettingsValue }, bareKeys: boolean): string {
  return Object.entries(o)
    .map(([k, val]) => {
      const key = bareKeys && /^[A-Za-z0-9_\-./@*]+$/.test(k) ? k : uclString(k);
      const isObj = val !== null && typeof val === 'object' && !Array.isArray(val);
      return isObj ? `${key} ${toUcl(val, bareKeys)}` : `${key} = ${toUcl(val, bareKeys)};`;
    })
    .join(' ');
}

/** JSON.parse-like build of a generated object, so `__proto__` is an own key as on the wire. */
function asParsed(v: SettingsValue): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

const hostArb = fc.domain().map((d) => d.toLowerCase());
const localArb = fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,10}[a-z0-9]$/).filter((s) => !s.includes('..'));
const addressArb = fc.tuple(localArb, hostArb).map(([l, d]) => `${l}@${d}`);
/** Printable header text without leading/trailing blanks (the parsers trim those). */
const headerTextArb = fc.stringMatching(/^[!-~]([ -~]{0,30}[!-~])?$/);

const scanFlagArb = fc.constantFrom<ScanFlag>(...SCAN_FLAGS);

const scanOptionsArb: fc.Arbitrary<ScanOptions> = fc.record(
  {
    ip: fc.oneof(fc.ipV4(), fc.ipV6()),
    from: fc.oneof(addressArb, fc.constant('')),
    rcpt: fc.array(addressArb, { minLength: 1, maxLength: 4 }),
    helo: headerTextArb,
    hostname: hostArb,
    user: headerTextArb,
    deliverTo: addressArb,
    queueId: headerTextArb,
    settingsId: headerTextArb,
    mtaTag: headerTextArb,
    mtaName: headerTextArb,
    logTag: fc.stringMatching(/^[a-z0-9]{1,20}$/),
    filename: fc.stringMatching(/^[a-z0-9._-]{1,20}$/),
    flags: fc.uniqueArray(scanFlagArb, { maxLength: 4 }),
    settings: fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), fc.oneof(fc.integer(), fc.boolean(), fc.string({ maxLength: 6 })), { maxKeys: 3, noNullPrototype: true }),
    passAll: fc.boolean(),
    extendedUrls: fc.boolean(),
    profile: fc.boolean(),
    compress: fc.boolean(),
    msgpack: fc.boolean(),
  },
  { requiredKeys: [] },
);

function canonicalIp(ip: string): string {
  const r = parseClientIp(ip);
  assert.ok(r !== undefined, `generated IP ${ip} must parse`);
  return r;
}

function requestFrom(path: string, pairs: Array<[string, string]>, body: Buffer): Request {
  const headers = new RequestHeaders();
  for (const [k, v] of pairs) headers.add(k, v);
  return { method: 'POST', path, query: new Map(), headers, body, version: 'HTTP/1.1', peer: { address: '127.0.0.1', port: 1 }, tls: false };
}

const DECODE_OPTS = { maxMessage: 1 << 20, dictionaries: {} };

// ---------------------------------------------------------------------------------------------

describe('Settings header (JSON and UCL)', () => {
  function parseChecked(text: string): Record<string, unknown> | undefined {
    const protoBefore = objectPrototypeKeys();
    let out: Record<string, unknown> | undefined;
    const ms = cpuMs(() => {
      out = parseSettingsValue(text);
    });
    assert.ok(ms < MAX_PARSE_CPU_MS, `parse took ${ms} ms of CPU`);
    assert.equal(objectPrototypeKeys(), protoBefore, 'Object.prototype changed');
    if (out !== undefined) {
      assert.equal(typeof out, 'object');
      assert.ok(plainPrototypes(out), 'an object of the result has a foreign prototype');
    }
    return out;
  }

  it('never throws, never touches a prototype, on random text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200, unit: 'binary' }), noisyBytes(300).map((b) => b.toString('latin1'))), (text) => {
        parseChecked(text);
      }),
      fcParams(400),
    );
  });

  it('never throws, never touches a prototype, on mutated UCL and JSON documents', () => {
    const doc = fc.tuple(settingsValueArb, fc.constantFrom('ucl-bare', 'ucl-quoted', 'ucl-braced', 'json')).map(([v, form]) => {
      const o = v as { [k: string]: SettingsValue };
      const text = form === 'json' ? JSON.stringify(o) : form === 'ucl-braced' ? toUcl(o, true) : uclMembers(o, form === 'ucl-bare');
      return Buffer.from(text, 'utf8');
    });
    fc.assert(
      fc.property(mutated(doc), (bytes) => {
        parseChecked(bytes.toString('utf8'));
      }),
      fcParams(400),
    );
  });

  it('round-trips a document written as JSON', () => {
    fc.assert(
      fc.property(settingsValueArb, (v) => {
        assert.deepEqual(parseChecked(JSON.stringify(v)), asParsed(v));
      }),
      fcParams(200),
    );
  });

  it('round-trips a document written in UCL (bare or quoted keys, top-level braces or not)', () => {
    fc.assert(
      fc.property(settingsValueArb, fc.boolean(), fc.boolean(), (v, bare, braced) => {
        const o = v as { [k: string]: SettingsValue };
        if (Object.keys(o).length === 0) return; // an empty value is "no settings"
        const text = braced ? toUcl(o, bare) : uclMembers(o, bare);
        const parsed = parseChecked(text);
        assert.deepEqual(parsed, asParsed(v), text);
      }),
      fcParams(300),
    );
  });

  it('regression: a `__proto__` key is an ordinary key and pollutes nothing', () => {
    for (const text of ['__proto__ { polluted = 1 }', '"__proto__" = 5; a = 1', 'a { __proto__ { x = 1 } }', 'a { b = 1 } a { __proto__ { y = 2 } }', '__proto__ = [1]']) {
      const out = parseChecked(text);
      assert.ok(out !== undefined, text);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(({} as Record<string, unknown>).x, undefined);
      assert.equal(({} as Record<string, unknown>).y, undefined);
    }
    assert.deepEqual(parseChecked('__proto__ { polluted = 1 }'), JSON.parse('{"__proto__":{"polluted":1}}'));
    assert.deepEqual(parseChecked('a { b = 1 } a { __proto__ { y = 2 } }'), JSON.parse('{"a":{"b":1,"__proto__":{"y":2}}}'));
  });
});

describe('envelope values', () => {
  it('parseClientIp, parseEnvelopePath and splitAddressList never throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 80, unit: 'binary' }), noisyBytes(120).map((b) => b.toString('latin1'))), (s) => {
        const ip = parseClientIp(s);
        assert.ok(ip === undefined || typeof ip === 'string');
        const a = parseEnvelopePath(s);
        assert.ok(a === undefined || typeof a === 'string');
        for (const item of splitAddressList(s)) assert.ok(item.length > 0 && item === item.trim());
      }),
      fcParams(500),
    );
  });

  it('client IPs in every form an MTA writes them read back to the same address', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.option(fc.integer({ min: 0, max: 65535 })), fc.boolean(), (ip, port, bracket) => {
        const text = bracket ? `[${ip}]${port === null ? '' : `:${port}`}` : port === null ? ip : `${ip}:${port}`;
        assert.equal(parseClientIp(text), ip.split('.').map(Number).join('.'));
      }),
      fcParams(200),
    );
    fc.assert(
      fc.property(fc.ipV6(), fc.option(fc.integer({ min: 0, max: 65535 })), (ip, port) => {
        const plain = canonicalIp(ip);
        assert.equal(parseClientIp(`[${ip}]${port === null ? '' : `:${port}`}`), plain);
        assert.equal(parseClientIp(`IPv6:${ip}`), plain);
      }),
      fcParams(200),
    );
  });

  it('recipient lists split back into their addresses', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(addressArb, addressArb.map((a) => `<${a}>`), fc.tuple(localArb, hostArb).map(([l, d]) => `"${l}, x"@${d}`)), { minLength: 1, maxLength: 5 }), (list) => {
        assert.deepEqual(splitAddressList(list.join(', ')), list);
      }),
      fcParams(200),
    );
  });
});

describe('v2 request headers and body', () => {
  it('parseV2Headers never throws on random header lists', () => {
    const names = fc.constantFrom('IP', 'From', 'Rcpt', 'Helo', 'Settings', 'Settings-ID', 'Flags', 'Pass', 'Log', 'Log-Tag', 'maxscore', 'softscore', 'Raw', 'URL-Format', 'TLS-Cipher', 'Deliver-To', 'Content-Type', 'X-Other');
    const value = fc.oneof(fc.string({ maxLength: 60, unit: 'grapheme' }), noisyBytes(80).map((b) => b.toString('latin1')));
    fc.assert(
      fc.property(fc.array(fc.tuple(names, value), { maxLength: 12 }), (pairs) => {
        const headers = new RequestHeaders();
        for (const [k, v] of pairs) headers.add(k, v);
        const meta = parseV2Headers(headers);
        for (const f of meta.flags) assert.ok((SCAN_FLAGS as readonly string[]).includes(f));
        assert.ok(meta.logTag === undefined || Buffer.byteLength(meta.logTag) <= 31, 'log tag cut to 31 bytes');
      }),
      fcParams(400),
    );
  });

  it('decodeV2Request only throws coded errors on random and mutated zstd bodies and headers', () => {
    const frame = fc.uint8Array({ maxLength: 400 }).map((u) => zstdCompress(Buffer.from(u)));
    const body = fc.oneof(noisyBytes(200), mutated(frame, 4), frame);
    const extra = fc.array(
      fc.oneof(
        fc.tuple(fc.constant('Compression'), fc.constantFrom('zstd', 'gzip', ' ZSTD ', '')),
        fc.tuple(fc.constant('Content-Encoding'), fc.constantFrom('zstd', 'gzip, zstd', 'identity')),
        fc.tuple(fc.constant('Dictionary'), fc.constantFrom('0', '1', 'x', '123456789012345678901234567890', '')),
      ),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(body, extra, (b, pairs) => {
        const r = expectCoded(() => decodeV2Request(requestFrom('/checkv2', pairs, b), 'v2', DECODE_OPTS));
        if (r.ok) assert.ok(r.value.message.length <= DECODE_OPTS.maxMessage);
      }),
      fcParams(300),
    );
  });

  it('a request the client builds decodes to the options it was built from', () => {
    fc.assert(
      fc.property(scanOptionsArb, fc.uint8Array({ maxLength: 300 }), (opts, msg) => {
        const message = Buffer.from(msg);
        const built = buildV2Request(message, opts);
        const sr = decodeV2Request(requestFrom(built.path, built.headers, built.body), 'v2', DECODE_OPTS);
        assertMetaMatches(sr.meta, opts);
        assert.ok(sr.message.equals(message));
        assert.equal(sr.want.msgpack, opts.msgpack === true);
        assert.equal(sr.want.compress, opts.compress === true || (opts.flags ?? []).includes('zstd'));
      }),
      fcParams(200),
    );
  });
});

function assertMetaMatches(meta: ReturnType<typeof emptyMeta>, opts: ScanOptions): void {
  if (opts.ip !== undefined) assert.equal(meta.ip, canonicalIp(opts.ip));
  if (opts.from !== undefined) assert.equal(meta.from, opts.from);
  assert.deepEqual(meta.rcpt, opts.rcpt ?? []);
  assert.equal(meta.helo, opts.helo);
  assert.equal(meta.hostname, opts.hostname);
  assert.equal(meta.user, opts.user);
  assert.equal(meta.deliverTo, opts.deliverTo);
  assert.equal(meta.queueId, opts.queueId);
  assert.equal(meta.settingsId, opts.settingsId);
  assert.equal(meta.mtaTag, opts.mtaTag);
  assert.equal(meta.mtaName, opts.mtaName);
  assert.equal(meta.logTag, opts.logTag);
  assert.equal(meta.brokenEnvelope, false);
  if (opts.settings !== undefined) assert.deepEqual(meta.settings, opts.settings);
  for (const f of opts.flags ?? []) assert.ok(meta.flags.has(f as ScanFlag), `flag ${f}`);
  if (opts.passAll) assert.equal(meta.pass, 'all');
  if (opts.extendedUrls) assert.equal(meta.urlFormat, 'extended');
}

describe('/checkv3 multipart and metadata', () => {
  const boundaryArb = fc.stringMatching(/^[A-Za-z0-9'()+_,.\/:=?-]{1,40}$/);

  it('boundaryFromContentType and parseFormData only throw ERR_V3_BAD_MULTIPART on random and mutated bodies', () => {
    const validForm = fc
      .tuple(fc.array(fc.record({ name: fc.constantFrom('metadata', 'message', 'x'), body: fc.uint8Array({ maxLength: 40 }) }), { maxLength: 4 }))
      .map(([parts]) => buildMultipart('b0undary', parts.map((p) => ({ name: p.name, contentType: 'application/octet-stream', body: Buffer.from(p.body) }))));
    const allowed = new Set(['ERR_V3_BAD_MULTIPART']);
    fc.assert(
      fc.property(fc.oneof(noisyBytes(300), mutated(validForm, 8, ['--b0undary', '--b0undary--', '\r\n', '\n', '\r\n\r\n', 'Content-Disposition: form-data; name="', '"', ';'])), fc.oneof(fc.constant('b0undary'), boundaryArb), (body, boundary) => {
        const r = expectCoded(() => parseFormData(body, boundary), allowed);
        if (r.ok) assert.ok(r.value.length >= 1 && r.value.length <= MAX_FORM_PARTS + 1);
      }),
      fcParams(400),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 120, unit: 'binary' }), (ct) => {
        const b = boundaryFromContentType(ct);
        assert.ok(b === undefined || (b.length > 0 && b.length <= 200));
      }),
      fcParams(300),
    );
  });

  it('parts written by the client read back with their names, types, encodings and bodies', () => {
    const partArb = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/),
      filename: fc.option(fc.stringMatching(/^[a-z0-9._-]{1,12}$/), { nil: undefined }),
      contentType: fc.constantFrom('application/json', 'application/msgpack', 'application/octet-stream', 'text/plain'),
      contentEncoding: fc.option(fc.constantFrom('zstd', 'identity'), { nil: undefined }),
      body: fc.uint8Array({ maxLength: 120 }).map((u) => Buffer.from(u)),
    });
    fc.assert(
      fc.property(boundaryArb, fc.array(partArb, { minLength: 1, maxLength: MAX_FORM_PARTS }), (boundary, parts) => {
        // A body that contains its own delimiter at a line start cannot be framed; the client's boundaries are random.
        if (parts.some((p) => p.body.includes(`--${boundary}`))) return;
        const outgoing = parts.map((p) => ({ ...p, ...(p.filename === undefined ? {} : { filename: p.filename }) }));
        const read = parseFormData(buildMultipart(boundary, outgoing.map(({ contentEncoding, filename, ...rest }) => ({ ...rest, ...(contentEncoding ? { contentEncoding } : {}), ...(filename !== undefined ? { filename } : {}) }))), boundary);
        assert.equal(read.length, parts.length);
        parts.forEach((p, i) => {
          const r = read[i]!;
          assert.equal(r.name, p.name);
          assert.equal(r.filename, p.filename);
          assert.equal(r.contentType, p.contentType);
          assert.equal(r.encoding, p.contentEncoding);
          assert.ok(r.body.equals(p.body), `part ${i} body`);
        });
        assert.equal(boundaryFromContentType(`multipart/form-data; boundary=${boundary}`), boundary);
        assert.equal(boundaryFromContentType(`multipart/form-data; boundary="${boundary}"`), boundary);
      }),
      fcParams(200),
    );
  });

  it('decodeV3Request only throws coded errors on random metadata (JSON, msgpack) and mutated forms', () => {
    const metaValue = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ from: fc.anything(), rcpt: fc.anything(), ip: fc.anything(), settings: fc.anything(), tls: fc.anything(), mta: fc.anything(), flags: fc.anything(), headers: fc.anything() }, { requiredKeys: [] }),
    );
    const form = fc.tuple(metaValue, fc.boolean(), fc.uint8Array({ maxLength: 200 }), fc.boolean()).map(([meta, msgpack, msg, zstd]) => {
      let metaBody: Buffer;
      try {
        metaBody = msgpack ? Buffer.from(msgpackEncode(meta)) : Buffer.from(JSON.stringify(meta) ?? 'null');
      } catch {
        metaBody = Buffer.from('{}'); // fc.anything() can hold values msgpack cannot encode (symbols, functions)
      }
      const parts = [
        { name: 'metadata', contentType: msgpack ? 'application/msgpack' : 'application/json', body: metaBody },
        { name: 'message', contentType: 'application/octet-stream', body: zstd ? zstdCompress(Buffer.from(msg)) : Buffer.from(msg), ...(zstd ? { contentEncoding: 'zstd' } : {}) },
      ];
      return buildMultipart('b0undary', parts);
    });
    fc.assert(
      fc.property(fc.oneof(form, mutated(form, 6)), fc.constantFrom('multipart/form-data; boundary=b0undary', 'multipart/form-data', 'text/plain; boundary="b0undary"'), (body, ct) => {
        const protoBefore = objectPrototypeKeys();
        const r = expectCoded(() => decodeV3Request(requestFrom('/checkv3', [['Content-Type', ct]], body), DECODE_OPTS));
        assert.equal(objectPrototypeKeys(), protoBefore);
        if (r.ok) {
          assert.ok(r.value.message.length <= DECODE_OPTS.maxMessage);
          for (const [k, v] of r.value.meta.requestHeaders) assert.ok(typeof k === 'string' && v.every((x) => typeof x === 'string'));
        }
      }),
      fcParams(300),
    );
  });

  it('a v3 request the client builds decodes to the options it was built from', () => {
    fc.assert(
      fc.property(scanOptionsArb, fc.uint8Array({ minLength: 1, maxLength: 300 }), (opts, msg) => {
        const message = Buffer.from(msg);
        const built = buildV3Request(message, opts);
        const sr = decodeV3Request(requestFrom(built.path, built.headers, built.body), DECODE_OPTS);
        assertMetaMatches(sr.meta, opts);
        assert.ok(sr.message.equals(message));
        assert.equal(sr.meta.filename, opts.filename);
        assert.equal(sr.want.msgpack, opts.msgpack === true);
      }),
      fcParams(200),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Encoders read back.

/** Strings a result carries: module text, but also header text copied from the message. */
const replyStringArb = fc.oneof(fc.string({ maxLength: 20, unit: 'grapheme' }), noisyBytes(30).map((b) => b.toString('latin1')));
const scoreArb = fc.oneof(fc.integer({ min: -100, max: 100 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1000, max: 1000 }));

const scanResultArb: fc.Arbitrary<ScanResult> = fc.record({
  isSkipped: fc.boolean(),
  score: scoreArb,
  requiredScore: scoreArb,
  action: fc.oneof(fc.constantFrom('reject', 'no action', 'add header', 'rewrite subject', 'greylist', 'soft reject'), replyStringArb),
  subject: fc.option(replyStringArb, { nil: undefined }),
  thresholds: fc.constant<Array<[string, number]>>([]),
  symbols: fc.uniqueArray(
    fc.record({ name: fc.oneof(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,15}$/), replyStringArb, fc.constant('__proto__')), score: scoreArb, metricScore: scoreArb, options: fc.option(fc.array(replyStringArb, { maxLength: 3 }), { nil: undefined }), description: fc.option(replyStringArb, { nil: undefined }), groups: fc.constant<string[]>([]) }),
    { selector: (s) => s.name, maxLength: 6 },
  ),
  groups: fc.constant<ScanResult['groups']>([]),
  messages: fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), replyStringArb, { maxKeys: 3 }),
  messageId: fc.option(replyStringArb, { nil: undefined }),
  timeReal: fc.double({ noNaN: true, noDefaultInfinity: true, min: 0, max: 100 }),
  rewritten: fc.option(fc.uint8Array({ maxLength: 100 }).map((u) => Buffer.from(u)), { nil: undefined }),
  newline: fc.constant<'\r\n'>('\r\n'),
}).map((r) => {
  const out: ScanResult = { ...r };
  for (const k of Object.keys(out) as Array<keyof ScanResult>) if (out[k] === undefined) delete out[k];
  return out;
});

/** What JSON.parse gives back for a value emitJson wrote: numbers as Rspamd's format rounds them. */
function emittedAs(v: ReplyValue): unknown {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return null;
    const n = Number.isInteger(v) ? v : Number(v.toFixed(6));
    return n === 0 ? 0 : n;
  }
  if (v === undefined) return null;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(emittedAs);
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) defineOwn(o, k, emittedAs(x));
  return o;
}

describe('reply encoders read back', () => {
  it('emitJson writes valid JSON that parses to the value (numbers in Rspamd format)', () => {
    const replyValueArb: fc.Arbitrary<ReplyValue> = fc.letrec<{ v: ReplyValue }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string({ maxLength: 12, unit: 'binary' }),
        fc.double(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 6, unit: 'binary' }), tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(replyValueArb, (v) => {
        const text = emitJson(v);
        const back = emittedAs(v);
        const parsed = JSON.parse(text) as unknown;
        assert.deepEqual(normaliseZero(parsed), back);
      }),
      fcParams(300),
    );
  });

  it('v2 and v3 replies, in every negotiated form, decode in the client to the same result', () => {
    fc.assert(
      fc.property(scanResultArb, fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean(), (result, msgpack, compress, bodyBlock, v3) => {
        const meta = emptyMeta();
        if (bodyBlock) meta.flags.add('body_block');
        const want = { layout: 'v2' as const, msgpack, compress, multipartType: 'multipart/form-data' as const };
        const reply = v3 ? buildV3Reply(result, meta, want) : buildV2Reply(result, meta, want, {});
        const headers: Record<string, string> = { 'content-type': reply.contentType ?? '' };
        for (const [k, v] of reply.headers ?? []) headers[k.toLowerCase()] = v;
        const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
        if (msgpack && result.symbols.some((s) => s.name === '__proto__')) {
          // @msgpack/msgpack refuses the key `__proto__` (its guard against prototype pollution).
          assert.throws(() => decodeReply(200, headers, body), { code: 'MAILSIFT_CLIENT_BAD_REPLY' });
          return;
        }
        const decoded = decodeReply(200, headers, body);
        assert.equal(decoded.resultFormat, msgpack ? 'msgpack' : 'json');
        assert.equal(decoded.result.action, result.action);
        assert.deepEqual(Object.keys(decoded.result.symbols ?? {}).sort(), result.symbols.map((s) => s.name).sort());
        if (msgpack) assert.equal(normaliseZero(decoded.result.score), normaliseZero(result.score)); // msgpack writes -0 as the integer 0
        else assert.equal(normaliseZero(decoded.result.score), emittedAs(result.score));
        const expectBlock = result.rewritten !== undefined && (v3 || bodyBlock);
        if (expectBlock) assert.ok(decoded.rewritten?.equals(result.rewritten!), 'rewritten message');
        else assert.equal(decoded.rewritten, undefined);
      }),
      fcParams(200),
    );
  });

  it('regression: a symbol named `__proto__` is a key of the reply like any other', () => {
    const result: ScanResult = {
      isSkipped: false, score: 1, requiredScore: 15, action: 'no action', thresholds: [], groups: [], messages: {}, timeReal: 0, newline: '\r\n',
      symbols: [{ name: '__proto__', score: 1, metricScore: 1, groups: [] }, { name: 'OTHER', score: 0, metricScore: 0, groups: [] }],
    };
    const json = JSON.parse(buildV2Reply(result, emptyMeta(), { layout: 'v2', msgpack: false, compress: false }, {}).body.toString()) as { symbols: object };
    assert.deepEqual(Object.keys(json.symbols), ['__proto__', 'OTHER']);
  });

  it('legacy text replies keep one field per line whatever the result strings hold', () => {
    fc.assert(
      fc.property(scanResultArb, (result) => {
        const rspamc = renderRspamcText(result).toString('utf8');
        assert.ok(rspamc.endsWith('\r\n'));
        const lines = rspamc.slice(0, -2).split('\r\n');
        const subjectLines = result.action === 'rewrite subject' && result.subject !== undefined ? 1 : 0;
        // Message-ID only when the result has one, as Rspamd's renderer.
        const midLines = result.messageId !== undefined ? 1 : 0;
        assert.equal(lines.length, 3 + midLines + subjectLines + result.symbols.length + Object.keys(result.messages).length, JSON.stringify(rspamc));
        for (const l of lines) assert.doesNotMatch(l, /[\r\n]/);
        const spamc = renderSpamcText(result);
        const sep = spamc.indexOf('\r\n\r\n');
        const head = spamc.subarray(0, sep).toString('latin1');
        const len = Number(/Content-length: (\d+)/.exec(head)?.[1]);
        assert.equal(spamc.length - (sep + 4), len);
        assert.equal(head.split('\r\n').length, 3);
        const tail = spamc.subarray(sep + 4).toString('utf8');
        if (result.symbols.length > 0) assert.equal(tail.split('\r\n').length, 2, JSON.stringify(tail));
      }),
      fcParams(300),
    );
  });
});

function normaliseZero(v: unknown): unknown {
  if (typeof v === 'number') return v === 0 ? 0 : v;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(normaliseZero);
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) defineOwn(o, k, normaliseZero(x));
  return o;
}

/** Sets an own data property, as JSON.parse does, even for the key `__proto__`. */
function defineOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}
