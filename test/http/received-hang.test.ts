// Issue 17, item 1, on the real path: a Received header holding a blank the tokeniser stopped
// words at but did not skip (NBSP, VT, FF, U+1680, U+2000–200A, U+2028/9, U+202F, U+205F,
// U+3000, U+FEFF) made a worker spin to ~5 GB and never answer, and killed the controller on
// /learnspam. A real server in a child process gets the reproducer with each of them,
// on /checkv2 and on /learnspam, and must answer every one.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { httpCall, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/** Far above a scan of this small message on a loaded machine; the hang never answered at all. */
const REPLY_TIMEOUT_MS = 20_000;

const BLANKS: Array<[string, string]> = [
  ['VT', '\u000b'], ['FF', '\u000c'], ['NBSP', '\u00a0'], ['U+1680', '\u1680'],
  ...Array.from({ length: 11 }, (_, i): [string, string] => [`U+${(0x2000 + i).toString(16).toUpperCase()}`, String.fromCharCode(0x2000 + i)]),
  ['U+2028', '\u2028'], ['U+2029', '\u2029'], ['U+202F', '\u202f'], ['U+205F', '\u205f'], ['U+3000', '\u3000'], ['U+FEFF', '\ufeff'],
];

/**
 * The reproducer with `blank` (UTF-8 encoded) where it had NBSP, and a body of enough
 * words for the Bayes classifier to learn it (fewer than 11 tokens is a 204 refusal).
 */
function reproducer(blank: string, n: number): Buffer {
  return Buffer.from(
    `Received: from mail.example.com${blank}(mail.example.com [192.0.2.1]) by mx.example.net; Thu, 1 Jan 2026 00:00:00 +0000\r\n` +
      `From: a@example.com\r\nSubject: hi\r\nMessage-ID: <hang-${n}@example.com>\r\n\r\n` +
      `hello ${n}, this message carries enough ordinary words for the statistics to learn from it\r\n`,
    'utf8',
  );
}

describe('a Received header with any blank of \\s', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServerProcess();
  });
  after(() => srv.close());

  it('/checkv2 answers a scan result for each blank, and the worker stays alive', { timeout: 300_000 }, async () => {
    for (const [i, [label, blank]] of BLANKS.entries()) {
      const r = await httpCall(srv.normalPort, 'POST', '/checkv2', reproducer(blank, i), {}, REPLY_TIMEOUT_MS);
      assert.equal(r.status, 200, `${label}: ${r.body.toString()}`);
      const json = JSON.parse(r.body.toString()) as { action: string; symbols: Record<string, unknown> };
      assert.equal(typeof json.action, 'string', label);
      // The hop was read: one Received header, counted.
      assert.ok('RCVD_COUNT_ONE' in json.symbols, `${label}: ${Object.keys(json.symbols).join(' ')}`);
    }
    assert.ok(srv.alive(), srv.output());
    assert.equal((await httpCall(srv.normalPort, 'GET', '/ping')).body.toString().trim(), 'pong');
  });

  it('/learnspam on the controller learns each and answers', { timeout: 300_000 }, async () => {
    for (const [i, [label, blank]] of BLANKS.entries()) {
      const r = await httpCall(srv.controllerPort, 'POST', '/learnspam', reproducer(blank, i), {}, REPLY_TIMEOUT_MS);
      assert.equal(r.status, 200, `${label}: ${r.body.toString()}`);
      assert.deepEqual(JSON.parse(r.body.toString()), { success: true }, label);
    }
    assert.ok(srv.alive(), srv.output());
    assert.equal((await httpCall(srv.controllerPort, 'GET', '/ping')).body.toString().trim(), 'pong');
  });
});
