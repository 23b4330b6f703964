// The real rspamc (Debian's rspamd package) against a mailsift worker: its requests must be
// understood and our replies must parse in it, in text, JSON and compressed modes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTIONS } from '../../src/core/scan-types.js';
import { startTestWorker, type TestWorker } from '../client/worker.js';
import { parseTextOutput, run } from './run.js';

const RSPAMC = '/usr/bin/rspamc';
const MESSAGES = '/work/shared/fixtures/scan/messages';
const skip = existsSync(RSPAMC) ? false : 'rspamc not installed (apt-get install rspamd; .ci/run does)';

let worker: TestWorker;

before(async () => {
  if (!skip) worker = await startTestWorker();
});
after(async () => {
  await worker?.close();
});

const rspamc = (args: string[]) => run(RSPAMC, ['-h', worker.server, ...args]);

test('GTUBE: rspamc prints a reject verdict with the GTUBE symbol', { skip }, async () => {
  const r = await rspamc([`${MESSAGES}/gtube.eml`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const v = parseTextOutput(r.stdout);
  assert.deepEqual(v.files, [`${MESSAGES}/gtube.eml`]);
  assert.equal(v.action, 'reject');
  assert.equal(v.spam, 'true');
  assert.ok(v.symbols.has('GTUBE'), r.stdout);
  assert.equal(v.messageId, 'GTUBE1.1010101@example.net');
});

test('envelope options (--ip/--from/--rcpt/--helo/--hostname/-u) are accepted and the verdict parses', { skip }, async () => {
  const r = await rspamc(['--ip', '203.0.113.5', '--from', 'alice@example.com', '--rcpt', 'bob@example.org', '--rcpt', 'carol@example.net',
    '--helo', 'helo.example.org', '--hostname', 'mail.example.org', '-u', 'alice', `${MESSAGES}/crlf-simple.eml`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const v = parseTextOutput(r.stdout);
  assert.ok((ACTIONS as readonly string[]).includes(v.action ?? ''), r.stdout);
  assert.ok(Number.isFinite(v.score) && Number.isFinite(v.required), r.stdout);
  assert.equal(v.messageId, 'fixture-crlf-1@example.com');
  const sum = [...v.symbols.values()].reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sum - v.score!) < 0.01 * Math.max(1, v.symbols.size), `symbol scores ${sum} do not add up to ${v.score}`);
});

test('-j: the JSON reply parses with the fields rspamc reads', { skip }, async () => {
  const r = await rspamc(['-j', `${MESSAGES}/crlf-simple.eml`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const obj = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.ok((ACTIONS as readonly string[]).includes(String(obj.action)));
  assert.equal(typeof obj.score, 'number');
  assert.equal(typeof obj.required_score, 'number');
  assert.equal(typeof obj.symbols, 'object');
  assert.equal(obj['message-id'], 'fixture-crlf-1@example.com');
});

test('-z: zstd request and compressed reply', { skip }, async () => {
  const r = await rspamc(['-z', `${MESSAGES}/gtube.eml`]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const v = parseTextOutput(r.stdout);
  assert.equal(v.action, 'reject');
  assert.ok(v.symbols.has('GTUBE'));
});

test('a directory of edge-case messages: one parsed verdict per file', { skip }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-interop-'));
  const names = ['badboundary.eml', 'bad_message.eml', 'empty_part.eml', 'exe_attm.eml', 'alternative-nested-rfc822.eml'];
  try {
    for (const n of names) await copyFile(`/work/shared/fixtures/rspamd-test-messages/${n}`, join(dir, n));
    const r = await rspamc(['-n', '3', dir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const blocks = r.stdout.split(/^(?=Results for file: )/m).filter((b) => b.startsWith('Results'));
    assert.equal(blocks.length, names.length, r.stdout);
    for (const b of blocks) {
      const v = parseTextOutput(b);
      assert.ok((ACTIONS as readonly string[]).includes(v.action ?? ''), b);
      assert.ok(Number.isFinite(v.score), b);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
