import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitMbox } from '../../src/cli/mail-inputs.js';

test('mbox: split on From lines, separators dropped, >From unquoted', () => {
  const box = 'From a@x Mon Jan  1 00:00:00 2024\nSubject: one\n\nbody\n>From here on\n\nFrom b@x Mon Jan  1 00:00:01 2024\nSubject: two\n\nFrom-like text stays\n';
  const msgs = splitMbox(Buffer.from(box)).map((b) => b.toString());
  assert.deepEqual(msgs, ['Subject: one\n\nbody\nFrom here on\n\n', 'Subject: two\n\nFrom-like text stays\n']);
});
