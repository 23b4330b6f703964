import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { addresses } from '../../src/observability/history-row.js';

// The expression the linear scanner replaced: kept here as the oracle for ordinary headers.
function addressesByRegexp(value: string): string[] {
  const out: string[] = [];
  const re = /<([^<>\s]+@[^<>\s]+)>|([^\s<>,;:"()]+@[^\s<>,;:"()]+)/g;
  for (let m = re.exec(value); m; m = re.exec(value)) out.push((m[1] ?? m[2])!);
  return out;
}

test('history addresses: the usual header shapes', () => {
  assert.deepEqual(addresses('"Doe, Jane" <jane@example.com>, bob@example.org'), ['jane@example.com', 'bob@example.org']);
  assert.deepEqual(addresses('undisclosed-recipients:;'), []);
  assert.deepEqual(addresses('a@b (comment) <c@d>'), ['a@b', 'c@d']);
  assert.deepEqual(addresses('<@>, <x@>, @y'), []);
  assert.deepEqual(addresses('a@b, c@d, e@f', 2), ['a@b', 'c@d']);
});

test('history addresses: same answers as the old expression on address-like text', () => {
  const alphabet = fc.constantFrom('a', 'b', '@', '<', '>', ',', ';', ':', '"', '(', ')', ' ', '\t', '.', 'x');
  fc.assert(
    fc.property(fc.array(alphabet, { maxLength: 60 }).map((a) => a.join('')), (s) => {
      assert.deepEqual(addresses(s, Infinity), addressesByRegexp(s));
    }),
    { numRuns: 3000 },
  );
});

test('history addresses: a 48 KB token without @ costs linear time (fuzz finding v2-slow-s1726)', () => {
  // The regexp retried every start inside the token: ~2 s of CPU per scan for this header.
  const header = 'Bob'.repeat(16 * 1024) + 'b';
  const before = process.cpuUsage();
  for (let i = 0; i < 20; i++) assert.deepEqual(addresses(header), []);
  const { user, system } = process.cpuUsage(before);
  assert.ok(user + system < 500_000, `20 passes took ${(user + system) / 1000} ms of CPU`);
});

test('history addresses: many short tokens without @ stay linear too', () => {
  // 24 000 two-byte tokens: a search for `@` to the end of the value per token was quadratic.
  const header = 'a '.repeat(24_000);
  const before = process.cpuUsage();
  for (let i = 0; i < 20; i++) assert.deepEqual(addresses(header), []);
  const { user, system } = process.cpuUsage(before);
  assert.ok(user + system < 500_000, `20 passes took ${(user + system) / 1000} ms of CPU`);
});
