// Property tests for the controller's reply writer (src/workers/controller/json.ts): whatever
// value a family hands it, renderJson writes valid JSON that reads back to that value (doubles
// in Rspamd's format), and error replies keep their reason phrase on one line. The controller's
// request bodies are read with JSON.parse where each family needs them (config-edit.ts,
// maps.ts, ...); json.ts itself holds no reader. Run counts and seed: test/helpers/property.ts.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { controllerError, dbl, Double, formatDouble, renderJson } from '../../src/workers/controller/json.js';
import { serializeReplyHead } from '../../src/http/reply.js';
import { fcParams } from '../helpers/property.js';

type Value = string | number | boolean | null | Double | Value[] | { [k: string]: Value };

const valueArb: fc.Arbitrary<Value> = fc.letrec<{ v: Value }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ maxLength: 12, unit: 'binary' }),
    fc.double(),
    fc.integer(),
    fc.double().map(dbl),
    fc.integer().map(dbl),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6, unit: 'binary' }), fc.constant('__proto__')), tie('v'), { maxKeys: 4 }),
  ),
})).v;

/** What JSON.parse must give back for a rendered value. */
function expected(v: Value): unknown {
  if (v instanceof Double) return Number.isFinite(v.value) ? zero(Number(formatDouble(v.value))) : null;
  if (typeof v === 'number') return Number.isFinite(v) ? zero(v) : null;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(expected);
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) Object.defineProperty(o, k, { value: expected(x), enumerable: true, writable: true, configurable: true });
  return o;
}

function zero(n: number): number {
  return n === 0 ? 0 : n;
}

function normalise(v: unknown): unknown {
  if (typeof v === 'number') return zero(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(normalise);
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) Object.defineProperty(o, k, { value: normalise(x), enumerable: true, writable: true, configurable: true });
  return o;
}

describe('controller JSON replies', () => {
  it('renderJson writes valid JSON that reads back to the value', () => {
    fc.assert(
      fc.property(valueArb, (v) => {
        const text = renderJson(v);
        assert.deepEqual(normalise(JSON.parse(text)), expected(v), text);
      }),
      fcParams(400),
    );
  });

  it('doubles keep their decimal form: one decimal when integral within int32, six otherwise', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const s = formatDouble(d);
        if (Number.isInteger(d) && Math.abs(d) <= 2147483647) assert.match(s, /^-?\d+\.0$/);
        else if (Math.abs(d) < 1e21) assert.match(s, /^-?\d+\.\d{6}$/);
        assert.ok(Math.abs(Number(s) - d) <= 5e-7 * Math.max(1, Math.abs(d)));
      }),
      fcParams(300),
    );
  });

  it('an error reply keeps its reason phrase on one line, whatever the text', () => {
    fc.assert(
      fc.property(fc.integer({ min: 200, max: 599 }), fc.string({ maxLength: 80, unit: 'binary' }), (status, text) => {
        const reply = controllerError(status, text);
        const head = serializeReplyHead(reply, Buffer.byteLength(reply.body as string), false, 'mailsift');
        const lines = head.split('\r\n');
        assert.match(lines[0]!, new RegExp(`^HTTP/1\\.1 ${status} [\\x20-\\x7e]*$`));
        if (status === 204 || status === 304) {
          // No body may follow these (RFC 9110 §6.4.1): no Content-Length/Type, nothing to send.
          assert.equal(lines.length, 6, JSON.stringify(head));
          assert.equal(reply.body, '');
          return;
        }
        assert.equal(lines.length, 8, JSON.stringify(head));
        // Whatever the text (quotes, backslashes, control characters), the body is JSON with
        // one key carrying exactly that text: request data cannot add keys.
        assert.deepEqual(JSON.parse(reply.body as string), { error: text });
        // The ordinary texts keep Rspamd 3.4's bytes (the text between the quotes, unescaped).
        if (!/["\\\x00-\x1f]/.test(text)) assert.equal(reply.body, `{"error":"${text}"}`);
      }),
      fcParams(300),
    );
  });
});
