import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encode } from '@msgpack/msgpack';
import { jsonShapeProblem, msgpackShapeProblem } from '../../src/protocol/metadata-shape.js';

// The pre-decode shape checks of /checkv3 metadata: never throw on any bytes, and never refuse
// what a client sends (values of ordinary depth), in either encoding.
test('metadata shape: ordinary values pass in JSON and msgpack', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
      assert.equal(jsonShapeProblem(Buffer.from(JSON.stringify(v) ?? 'null')), undefined);
      assert.equal(msgpackShapeProblem(encode(v)), undefined);
    }),
    { numRuns: 2000 },
  );
});

test('metadata shape: arbitrary bytes never throw', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 512 }), (b) => {
      jsonShapeProblem(b);
      msgpackShapeProblem(b);
    }),
    { numRuns: 5000 },
  );
});

test('metadata shape: depth and container counts are found wherever they sit', () => {
  const deep = { a: [1, { b: 2 }] } as unknown;
  let nested: unknown = deep;
  for (let i = 0; i < 70; i++) nested = [nested];
  assert.match(msgpackShapeProblem(encode(nested)) ?? '', /deeper than 64/);
  assert.match(jsonShapeProblem(Buffer.from(JSON.stringify(nested))) ?? '', /deeper than 64/);
  const many = { rcpt: Array.from({ length: 10_001 }, () => ({})) };
  assert.match(msgpackShapeProblem(encode(many)) ?? '', /more than 10000/);
  assert.match(jsonShapeProblem(Buffer.from(JSON.stringify(many))) ?? '', /more than 10000/);
  const rcpts = { rcpt: Array.from({ length: 50_000 }, (_, i) => `user${i}@example.com`) };
  assert.equal(msgpackShapeProblem(encode(rcpts)), undefined);
  assert.equal(jsonShapeProblem(Buffer.from(JSON.stringify(rcpts))), undefined);
});
