// Hostile messages through the whole scan path over a real socket: 10 000 MIME parts and
// deeply nested multiparts each get a verdict within the task deadline, and the worker keeps
// serving afterwards.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exchange, parseReply, postV2, startRealWorker } from '../protocol/harness.js';

/** Scan deadline (8 s) plus transport slack: a reply later than this is a hang. */
const VERDICT_BUDGET_MS = 12_000;

function manyParts(n: number): Buffer {
  let s = 'From: a@example.com\r\nTo: b@example.org\r\nSubject: parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n';
  for (let i = 0; i < n; i++) s += `--b\r\nContent-Type: text/plain\r\n\r\npart ${i} http://example${i % 50}.com/\r\n`;
  return Buffer.from(s + '--b--\r\n');
}

function nested(depth: number): Buffer {
  let s = 'From: a@example.com\r\nTo: b@example.org\r\nSubject: nested\r\nMIME-Version: 1.0\r\n';
  for (let i = 0; i < depth; i++) s += `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`;
  s += 'Content-Type: text/plain\r\n\r\ndeep\r\n';
  for (let i = depth - 1; i >= 0; i--) s += `--n${i}--\r\n`;
  return Buffer.from(s);
}

describe('hostile messages', () => {
  let port = 0;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker();
    port = w.port;
    close = w.close;
  });
  after(() => close());

  for (const [label, msg] of [['10 000 MIME parts', manyParts(10_000)], ['multiparts nested 2 000 deep', nested(2_000)]] as const) {
    it(`${label}: a verdict within the deadline, then /ping still answers`, { timeout: 30_000 }, async () => {
      const started = Date.now();
      const { data } = await exchange(port, postV2('/checkv2', [], msg), { timeoutMs: VERDICT_BUDGET_MS });
      const r = parseReply(data);
      assert.equal(r.status, 200);
      assert.ok(Date.now() - started < VERDICT_BUDGET_MS);
      const json = JSON.parse(r.body.toString()) as { action: string };
      assert.equal(typeof json.action, 'string');
      const ping = parseReply((await exchange(port, Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n'))).data);
      assert.equal(ping.body.toString(), 'pong\r\n');
    });
  }
});
