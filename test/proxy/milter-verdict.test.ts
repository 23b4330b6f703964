// The verdict renderer (spec proxy-milter.md §4.9–§4.12) on results the fixtures do not
// cover: header index arithmetic with the quirk fixes, live header counts, DKIM placement,
// SMTP text safety, the reject variants, and the order-keeping JSON reader it relies on.

import { describe as suite, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { milterActions, milterOptions, type MilterOptions } from '../../src/proxy/milter/options.js';
import { JsonSyntaxError, MAX_JSON_DEPTH, parseOrderedJson, type JsonObject, type JsonValue } from '../../src/proxy/milter/ordered-json.js';
import { encodeReply, type MilterReply } from '../../src/proxy/milter/protocol.js';
import { readScanReply } from '../../src/proxy/milter/read-reply.js';
import { renderVerdict, withinGrant } from '../../src/proxy/milter/render-verdict.js';
import { fcParams } from '../helpers/property.js';
import { describe, splitFrames } from './milter-harness.js';

function result(json: string): JsonObject {
  return parseOrderedJson(json) as JsonObject;
}

function render(json: string, occurrences: Record<string, number> = {}, headerCount = 10, opts: Partial<MilterOptions> = {}, newBody?: Buffer): string[] {
  const input = { result: result(json), headerCount, headerOccurrences: new Map(Object.entries(occurrences)) };
  const v = renderVerdict(newBody ? { ...input, newBody } : input, milterOptions(opts));
  return lines(v.replies);
}

function lines(replies: MilterReply[]): string[] {
  return splitFrames(Buffer.concat(replies.map(encodeReply))).frames.map(describe);
}

suite('milter verdict: header indices', () => {
  it('a legacy string header counts for a later negative order (quirk 10 fixed)', () => {
    const got = render('{"action":"no action","milter":{"add_headers":{"A":"legacy","B":{"value":"b","order":-2}}}}', {}, 5);
    // Rspamd 3.4 would insert B at 5 (5 - 2 + 2) without counting A.
    assert.deepEqual(got, ['h A\\0legacy\\0', 'i 6 B\\0b\\0', 'a ']);
  });

  it('order beyond the header count inserts at 0; fractions truncate; `index` is the alias of `order`', () => {
    const got = render('{"action":"no action","milter":{"add_headers":{"A":{"value":"a","order":-7},"B":{"value":"b","order":3.9},"C":{"value":"c","index":2},"D":{"value":"d","order":"1"}}}}', {}, 5);
    assert.deepEqual(got, ['i 0 A\\0a\\0', 'i 3 B\\0b\\0', 'i 2 C\\0c\\0', 'h D\\0d\\0', 'a ']);
  });

  it('entries without a string value are skipped and do not count', () => {
    const got = render('{"action":"no action","milter":{"add_headers":{"A":{"value":1},"B":[{"value":"b1","order":-1},"x",{"value":"b2","order":-2}]}}}', {}, 3);
    assert.deepEqual(got, ['h B\\0b1\\0', 'i 4 B\\0b2\\0', 'a ']);
  });

  it('removals use live counts: N > 0, N < 0 from the end, 0 for all; names compare case-insensitively', () => {
    const got = render('{"action":"no action","milter":{"remove_headers":{"X-A":1,"x-a":1,"X-B":-1,"X-C":0,"X-None":0,"X-Float":1.5}}}', { 'x-a': 2, 'x-b': 3, 'x-c': 2, 'x-float': 1 });
    // X-A twice with N=1: the second deletion hits the header that moved up to index 1.
    assert.deepEqual(got, ['m 1 X-A\\0\\0', 'm 1 x-a\\0\\0', 'm 3 X-B\\0\\0', 'm 2 X-C\\0\\0', 'm 1 X-C\\0\\0', 'a ']);
  });

  it('a removal past the live count sends nothing (quirk 4 fixed: no stale indices)', () => {
    const got = render('{"action":"add header","milter":{"remove_headers":{"X-Spam":0}}}', { 'x-spam': 2 });
    // Rspamd 3.4 sends m 2 / m 1 twice: once for remove_headers, once for the add-header path.
    assert.deepEqual(got, ['m 2 X-Spam\\0\\0', 'm 1 X-Spam\\0\\0', 'm 1 X-Spam\\0Yes\\0', 'a ']);
  });

  it('keys are applied in document order, also keys that look like numbers', () => {
    const got = render('{"action":"no action","milter":{"remove_headers":{"X-B":0,"1":0},"add_headers":{"Z":"z","2":"two"}}}', { 'x-b': 1, '1': 1 });
    assert.deepEqual(got, ['m 1 X-B\\0\\0', 'm 1 1\\0\\0', 'h Z\\0z\\0', 'h 2\\0two\\0', 'a ']);
  });

  it('the block operations go out in Rspamd order whatever the key order of the block', () => {
    const got = render('{"action":"no action","milter":{"del_rcpt":["<d@x>"],"add_rcpt":["<a@x>",7],"change_from":"<f@x>","add_headers":{"H":"v"},"remove_headers":{"R":1}},"dkim-signature":"sig"}', { r: 1 });
    assert.deepEqual(got, ['m 1 R\\0\\0', 'h H\\0v\\0', 'e <f@x>\\0', '+ <a@x>\\0', '- <d@x>\\0', 'i 1 DKIM-Signature\\0sig\\0', 'a ']);
  });
});

suite('milter verdict: actions and texts', () => {
  it('DKIM inserts come before the ACCEPT in the spam_header path (quirk 5 fixed)', () => {
    const got = render('{"action":"add header","milter":{"spam_header":"Custom"},"dkim-signature":["s1",5,"s3"]}', { 'x-spam': 1 });
    assert.deepEqual(got, ['m 1 X-Spam\\0\\0', 'm 1 X-Spam\\0Custom\\0', 'i 1 DKIM-Signature\\0s1\\0', 'i 3 DKIM-Signature\\0s3\\0', 'a ']);
  });

  it('an object spam_header sets each named header; ignored unless the action is add header', () => {
    assert.deepEqual(render('{"action":"add header","milter":{"spam_header":{"X-A":"1","X-B":true}}}', { 'x-a': 1 }), ['m 1 X-A\\0\\0', 'm 1 X-A\\01\\0', 'm 1 X-B\\0true\\0', 'a ']);
    assert.deepEqual(render('{"action":"no action","milter":{"spam_header":"Custom"}}'), ['a ']);
  });

  it('SMTP texts: smtp_message, else the configured text; CR/LF flattened and % doubled', () => {
    assert.deepEqual(render('{"action":"reject","messages":{"smtp_message":"100% spam\\r\\nInjected: yes"}}'), ['y 554 5.7.1 100%% spam Injected: yes\\0']);
    assert.deepEqual(render('{"action":"reject","messages":{"smtp_message":""}}', {}, 1, { rejectMessage: 'Go away' }), ['y 554 5.7.1 Go away\\0']);
    assert.deepEqual(render('{"action":"reject"}'), ['y 554 5.7.1 Spam message rejected\\0']);
    assert.deepEqual(render('{"action":"soft reject"}'), ['y 451 4.7.1 Try again later\\0']);
    assert.deepEqual(render('{"action":"soft reject","messages":{"smtp_message":"Greylisted"}}'), ['y 451 4.7.1 Greylisted\\0']);
  });

  it('reject variants: discard_on_reject, quarantine_on_reject, and a block that overrides them for this message', () => {
    assert.deepEqual(render('{"action":"reject"}', {}, 1, { discardOnReject: true }), ['d ']);
    assert.deepEqual(render('{"action":"reject"}', {}, 1, { quarantineOnReject: true }), ['q Spam message quarantined\\0', 'a ']);
    assert.deepEqual(render('{"action":"reject","milter":{"reject":"other"}}', {}, 1, { discardOnReject: true }), ['y 554 5.7.1 Spam message rejected\\0']);
    assert.deepEqual(render('{"action":"reject","milter":{"reject":"discard"}}'), ['d ']);
    // A block flag only affects a reject.
    assert.deepEqual(render('{"action":"no action","milter":{"reject":"discard"}}'), ['a ']);
  });

  it('no_action turns any action into X-Rspamd-Action + ACCEPT (quirk 7 replicated), after REPLBODY', () => {
    assert.deepEqual(render('{"action":"rewrite subject","subject":"[SPAM] x","milter":{"no_action":true}}', {}, 1, {}, Buffer.from('new')), ['b new', 'h X-Rspamd-Action\\0rewrite subject\\0', 'a ']);
  });

  it('rewrite subject, greylist, custom, discard and quarantine actions', () => {
    assert.deepEqual(render('{"action":"rewrite subject","subject":"[SPAM] hi"}'), ['m 1 Subject\\0[SPAM] hi\\0', 'a ']);
    assert.deepEqual(render('{"action":"rewrite subject"}'), ['a ']);
    assert.deepEqual(render('{"action":"greylist"}'), ['a ']);
    const actions = milterActions({ junk: { threshold: 20 }, hold: { threshold: null, milter: 'quarantine' }, discard: { threshold: null, milter: 'discard' } });
    assert.deepEqual(render('{"action":"junk"}', {}, 1, { actions }), ['a ']);
    assert.deepEqual(render('{"action":"hold","messages":{"smtp_message":"Held"}}', {}, 1, { actions }), ['q Held\\0', 'a ']);
    assert.deepEqual(render('{"action":"discard"}', {}, 1, { actions }), ['d ']);
    assert.deepEqual(render('{"action":"discard"}'), ['t '], 'undeclared: TEMPFAIL like Rspamd');
  });

  it('frames the MTA did not grant are left out; a quarantine falls back to its ACCEPT', () => {
    const replies: MilterReply[] = [
      { kind: 'chgfrom', sender: '<a@b>' },
      { kind: 'addheader', name: 'X', value: 'y' },
      { kind: 'quarantine', reason: 'r' },
      { kind: 'accept' },
    ];
    const { replies: kept, dropped } = withinGrant(replies, 0x01);
    assert.deepEqual(lines(kept), ['h X\\0y\\0', 'a ']);
    assert.deepEqual(dropped, ['chgfrom', 'quarantine']);
  });

  it('a header value with a NUL ends at the NUL, as in Rspamd', () => {
    assert.deepEqual(lines([{ kind: 'addheader', name: 'X', value: 'a\0b' }]), ['h X\\0a\\0']);
  });
});

suite('milter verdict: reading the reply', () => {
  const json = Buffer.from('{"action":"no action"}');
  const reply = (headers: Array<[string, string]>, body: Buffer) => ({ status: 200, reason: 'OK', headers, body, upstream: 'u' });

  it('Message-Offset splits the JSON from the new body only when something follows it', () => {
    const withBody = readScanReply(reply([['Content-Type', 'application/json'], ['Message-Offset', String(json.length)]], Buffer.concat([json, Buffer.from('BODY')])));
    assert.ok(withBody.ok && withBody.newBody?.toString() === 'BODY');
    const atEnd = readScanReply(reply([['content-type', 'Application/JSON; charset=utf-8'], ['Message-Offset', String(json.length)]], json));
    assert.ok(atEnd.ok && atEnd.newBody === undefined);
    const bad = readScanReply(reply([['Content-Type', 'application/json'], ['Message-Offset', 'x']], json));
    assert.ok(bad.ok && bad.newBody === undefined);
  });

  it('keeps document order of index-like keys in the milter block (JSON.parse would not)', () => {
    const text = '{"symbols":{"2":{},"1":{}},"action":"no action","milter":{"add_headers":{"X-B":"b","10":"ten","2":"two"}}}';
    const r = readScanReply(reply([['Content-Type', 'application/json']], Buffer.from(text)));
    assert.ok(r.ok);
    const add = (r.result.get('milter') as JsonObject).get('add_headers') as JsonObject;
    assert.deepEqual([...add.keys()], ['X-B', '10', '2']);
    assert.equal(r.result.has('symbols'), false, 'parts the milter never reads are not kept');
    const plainOrder = readScanReply(reply([['Content-Type', 'application/json']], Buffer.from('{"action":"no action","milter":{"add_headers":{"X-B":"b","X-A":"a"}}}')));
    assert.ok(plainOrder.ok);
    assert.deepEqual([...((plainOrder.result.get('milter') as JsonObject).get('add_headers') as JsonObject).keys()], ['X-B', 'X-A']);
  });

  it('a JSON array or a text/plain reply is not a result', () => {
    assert.equal(readScanReply(reply([['Content-Type', 'application/json']], Buffer.from('[1]'))).ok, false);
    assert.equal(readScanReply(reply([['Content-Type', 'text/plain']], json)).ok, false);
  });
});

// ---------------------------------------------------------------------------------------

function plain(v: JsonValue): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  return v;
}

suite('ordered JSON reader', () => {
  it('reads what JSON.parse reads, to the same values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const text = JSON.stringify(v);
        assert.deepEqual(plain(parseOrderedJson(text)), JSON.parse(text));
      }),
      fcParams(300),
    );
  });

  it('refuses what JSON.parse refuses, and accepts what it accepts (mutated texts)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.nat(), fc.constantFrom('', '"', '{', '}', ',', ':', '\\', '0', '-', '.', 'e', ' ', '\u0001', 'u', 'n'), (v, at, ins) => {
        const base = JSON.stringify(v) ?? 'null';
        const i = at % (base.length + 1);
        const text = base.slice(0, i) + ins + base.slice(i + (ins === '' ? 1 : 0));
        let expected: unknown;
        try {
          expected = JSON.parse(text);
        } catch {
          assert.throws(() => parseOrderedJson(text), JsonSyntaxError, text);
          return;
        }
        assert.deepEqual(plain(parseOrderedJson(text)), expected);
      }),
      fcParams(1000),
    );
  });

  it('keeps object keys in document order, including index-like keys', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(fc.string({ maxLength: 4 }), fc.nat({ max: 99 }).map(String)), { maxLength: 8 }), (keys) => {
        const text = `{${keys.map((k, i) => `${JSON.stringify(k)}:${i}`).join(',')}}`;
        const m = parseOrderedJson(text) as JsonObject;
        assert.deepEqual([...m.keys()], keys);
      }),
      fcParams(300),
    );
  });

  it('refuses nesting deeper than MAX_JSON_DEPTH instead of recursing without bound', () => {
    const deep = '['.repeat(MAX_JSON_DEPTH + 2) + ']'.repeat(MAX_JSON_DEPTH + 2);
    assert.throws(() => parseOrderedJson(deep), /nesting too deep/);
    const ok = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
    assert.doesNotThrow(() => parseOrderedJson(ok));
    assert.throws(() => parseOrderedJson('['.repeat(100_000)), /nesting too deep/);
  });
});
