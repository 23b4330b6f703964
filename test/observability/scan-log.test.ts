// The scan log line: one info line per scan, from a real server on the shipped configuration,
// in JSON (fields) and in text (Rspamd's layout), and none for a scan that asks not to be logged
// (`Log: no`, the no_log flag, Settings or a settings rule setting no_log).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, runCli, type LogLine } from '../cli/run-cli.js';
import { httpCall, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { resolveLogFormat } from '../../src/observability/log.js';
import { createScanLogger, scanLogFields, scanLogText } from '../../src/observability/scan-log.js';
import { createScanObserver } from '../../src/observability/scan-observer.js';
import type { StatsRecorder } from '../../src/observability/stats-recorder.js';
import { emptyMeta, type ScanResult } from '../../src/plugin-api/index.js';

const MESSAGE_FILE = '/work/shared/fixtures/rspamd-test-messages/advance_fee_fraud.eml';
let message: Buffer;
let srv: ServerProcess;

before(async () => {
  message = await readFile(MESSAGE_FILE);
  // A settings rule that sets no_log for requests carrying X-Quiet: yes.
  srv = await startServerProcess(['settings:', '  quiet:', '    request_header: { X-Quiet: "yes" }', '    apply: { flags: [no_log] }'].join('\n'));
});

after(() => srv?.close());

const ENVELOPE = { IP: '192.0.2.1', User: 'bob', From: 'prince@nigeria-bank.com', Rcpt: 'a@example.net', 'Queue-Id': 'Q1' };

async function scan(port: number, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const r = await httpCall(port, 'POST', '/checkv2', message, headers);
  assert.equal(r.status, 200, r.body.toString());
  return JSON.parse(r.body.toString()) as Record<string, unknown>;
}

function scanLines(lines: LogLine[]): LogLine[] {
  return lines.filter((l) => l.tag === 'task' && l.msg === 'scan');
}

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${srv.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('JSON: one info line per scan with the envelope, verdict, symbols, size, time, DNS count, digest and recipients', async () => {
  const from = srv.lines.length;
  const reply = await scan(srv.normalPort, { ...ENVELOPE, 'Log-Tag': 'tag-json-1' });
  await until('the scan line', () => scanLines(srv.lines.slice(from)).length > 0);
  const [line, ...more] = scanLines(srv.lines.slice(from));
  assert.equal(more.length, 0, 'exactly one line');
  assert.equal(line!.level, 30, 'info');
  assert.equal(line!.logTag, 'tag-json-1');
  assert.equal(line!.messageId, 'advance-fee-test@example.com');
  assert.equal(line!.queueId, 'Q1');
  assert.equal(line!.ip, '192.0.2.1');
  assert.equal(line!.user, 'bob');
  assert.equal(line!.from, 'prince@nigeria-bank.com');
  assert.deepEqual(line!.rcpts, ['a@example.net']);
  assert.deepEqual(line!.mimeRcpts, ['recipient@example.com']);
  assert.equal(line!.action, reply.action);
  assert.equal(line!.score, reply.score);
  assert.equal(line!.requiredScore, reply.required_score);
  assert.equal(line!.isSpam, ['no action', 'greylist', 'soft reject'].includes(String(reply.action)) ? 'F' : 'T');
  const symbols = line!.symbols as Array<{ name: string; score: number; options?: string[] }>;
  const replySymbols = reply.symbols as Record<string, { score: number; options?: string[] }>;
  assert.deepEqual(symbols.map((s) => s.name).sort(), Object.keys(replySymbols).sort());
  for (const s of symbols) {
    assert.equal(s.score, replySymbols[s.name]!.score, s.name);
    assert.deepEqual(s.options, replySymbols[s.name]!.options, s.name);
  }
  const weights = symbols.map((s) => Math.abs(s.score));
  assert.deepEqual(weights, [...weights].sort((a, b) => b - a), 'heaviest symbols first');
  assert.equal(line!.size, message.length);
  assert.ok(typeof line!.timeMs === 'number' && line!.timeMs > 0);
  assert.ok(typeof line!.dnsRequests === 'number');
  assert.match(String(line!.digest), /^[0-9a-f]{32}$/);

  // The same message has the same digest; another message has another.
  const at = srv.lines.length;
  await scan(srv.normalPort, { 'Log-Tag': 'tag-json-2' });
  const other = await httpCall(srv.normalPort, 'POST', '/checkv2', Buffer.from('Subject: other\r\n\r\nbody\r\n'), { 'Log-Tag': 'tag-json-3' });
  assert.equal(other.status, 200);
  await until('two more scan lines', () => scanLines(srv.lines.slice(at)).length >= 2);
  const [again, third] = scanLines(srv.lines.slice(at));
  assert.equal(again!.digest, line!.digest);
  assert.notEqual(third!.digest, line!.digest);
  assert.equal(third!.messageId, 'undef');
  assert.equal(again!.queueId, undefined, 'what the request did not give is left out');
});

test('a request without an IP: the log line and the history row name the client the top Received header records', async () => {
  const relayed = Buffer.from(
    [
      'Received: from mail.sender.example.net (mail.sender.example.net [198.51.100.7]) by mx.example.org (Postfix) with ESMTP id 4F1A2B for <a@example.org>; Tue, 20 Aug 2002 09:58:00 +0000',
      'From: Sender <sender@sender.example.net>',
      'To: a@example.org',
      'Subject: relayed',
      'Message-ID: <relayed-client@sender.example.net>',
      'Date: Tue, 20 Aug 2002 09:57:00 +0000',
      '',
      'A message an MTA received from 198.51.100.7.',
      '',
    ].join('\r\n'),
  );
  const from = srv.lines.length;
  const r = await httpCall(srv.normalPort, 'POST', '/checkv2', relayed, { 'Log-Tag': 'tag-client' });
  assert.equal(r.status, 200);
  await until('the scan line', () => scanLines(srv.lines.slice(from)).some((l) => l.logTag === 'tag-client'));
  const line = scanLines(srv.lines.slice(from)).find((l) => l.logTag === 'tag-client')!;
  assert.equal(line.ip, '198.51.100.7');
  // History rows reach the store through the supervisor in batches: asked until it is there.
  type Row = { 'message-id'?: string; ip: string };
  let row: Row | undefined;
  for (let i = 0; i < 100 && !row; i++) {
    const history = await httpCall(srv.controllerPort, 'GET', '/history');
    row = (JSON.parse(history.body.toString()) as { rows: Row[] }).rows.find((x) => x['message-id'] === 'relayed-client@sender.example.net');
    if (!row) await new Promise((res) => setTimeout(res, 100));
  }
  assert.ok(row, 'the scan is in the history');
  assert.equal(row.ip, '198.51.100.7');
  // The reply itself carries no such field.
  assert.equal((JSON.parse(r.body.toString()) as Record<string, unknown>).clientIp, undefined);
});

test('Log: no, the no_log flag, Settings and a settings rule with no_log each suppress the line (and only theirs)', async () => {
  const from = srv.lines.length;
  await scan(srv.normalPort, { ...ENVELOPE, 'Log-Tag': 'quiet-1', Log: 'no' });
  await scan(srv.normalPort, { ...ENVELOPE, 'Log-Tag': 'quiet-2', Flags: 'no_log' });
  await scan(srv.normalPort, { ...ENVELOPE, 'Log-Tag': 'quiet-3', Settings: '{"flags": ["no_log"]}' });
  await scan(srv.normalPort, { ...ENVELOPE, 'Log-Tag': 'quiet-4', 'X-Quiet': 'yes' });
  await scan(srv.normalPort, { ...ENVELOPE, 'Log-Tag': 'loud-1', 'X-Quiet': 'no' });
  // The loud scan came last on the same process: once its line is out, the others would be too.
  await until('the loud scan line', () => scanLines(srv.lines.slice(from)).some((l) => l.logTag === 'loud-1'));
  const tags = scanLines(srv.lines.slice(from)).map((l) => l.logTag);
  assert.deepEqual(tags, ['loud-1']);
  // Nothing else at info level per scan: the scan line is the one.
  const otherInfo = srv.lines.slice(from).filter((l) => l.level === 30 && !(l.tag === 'task' && l.msg === 'scan'));
  assert.deepEqual(otherInfo.map((l) => l.msg), []);
});

test('text format: Rspamd\'s layout on one line, without key=value repeats', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-textlog-'));
  await cp(join(REPO_ROOT, 'conf'), join(dir, 'conf'), { recursive: true });
  await mkdir(join(dir, 'conf', 'local.d'), { recursive: true });
  const yaml = ['workers:', '  normal: { bind: "127.0.0.1:0" }', '  controller: { enabled: false }', 'logging: { level: info, format: text }', `data_dir: ${JSON.stringify(join(dir, 'data'))}`].join('\n');
  await writeFile(join(dir, 'conf', 'local.d', 'mailsift.yaml'), yaml);
  const run = runCli(['serve', '--single', '-c', join(dir, 'conf')]);
  try {
    let port = 0;
    const end = Date.now() + 90_000;
    while (!port) {
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(run.output());
      if (m) port = Number(m[1]);
      else if (Date.now() > end || run.child.exitCode !== null) throw new Error(`server did not start:\n${run.output()}`);
      else await new Promise((r) => setTimeout(r, 50));
    }
    const r = await httpCall(port, 'POST', '/checkv2', message, { ...ENVELOPE, Rcpt: 'a@example.net', 'Log-Tag': 'tag-text' });
    assert.equal(r.status, 200);
    const reply = JSON.parse(r.body.toString()) as { action: string; score: number; required_score: number };
    let line: string | undefined;
    while (!line) {
      line = run.output().split('\n').find((l) => l.includes('<tag-text>'));
      if (!line) await new Promise((res) => setTimeout(res, 20));
    }
    const isSpam = ['no action', 'greylist', 'soft reject'].includes(reply.action) ? 'F' : 'T';
    const head = `<tag-text> id: <advance-fee-test@example.com>, qid: <Q1>, ip: 192.0.2.1, user: bob, from: <prince@nigeria-bank.com>, (default: ${isSpam} (${reply.action}): [${reply.score.toFixed(2)}/${reply.required_score.toFixed(2)}] [`;
    assert.match(line, /^\d{4}-\d\d-\d\dT\S+Z INFO \d+ \[task\] /);
    assert.ok(line.includes(head), line);
    assert.match(line, /\]\), len: \d+, time: \d+\.\d\dms, dns req: \d+, (dns failed: \d+ <[^>]*>, )?digest: <[0-9a-f]{32}>, rcpts: <a@example\.net>, mime_rcpts: <recipient@example\.com>$/);
    assert.ok(line.includes(`len: ${message.length},`));
    assert.equal(run.output().split('\n').filter((l) => l.includes('[task]')).length, 1, 'one line for one scan');
  } finally {
    run.child.kill('SIGKILL');
    await run.exited;
    await rm(dir, { recursive: true, force: true });
  }
});

test('hostile values are escaped and bounded: a recipient cannot start a second line', () => {
  const meta = emptyMeta();
  meta.rcpt = ['x@y\nFAKE LINE', ...Array.from({ length: 60 }, (_, i) => `r${i}@example.net`)];
  meta.logTag = 'a\r\nb';
  meta.user = 'u'.repeat(10_000);
  const result: ScanResult = {
    isSkipped: false, score: 1.5, requiredScore: 15, action: 'no action', thresholds: [], groups: [], messages: {}, timeReal: 0.01, newline: '\n',
    symbols: [{ name: 'SYM\n', score: 1.5, metricScore: 1.5, groups: [], options: Array.from({ length: 30 }, (_, i) => `opt${i}\u2028`) }],
  };
  const f = scanLogFields({ result, meta, message: Buffer.from('To: m@example.org\n\nbody'), seconds: 0.0123 });
  const text = scanLogText(f, meta);
  assert.ok(!/[\r\n\u2028]/.test(text), text);
  assert.ok(text.startsWith('<a\\x0d\\x0ab> id: <undef>, user: uuu'));
  assert.ok(f.user!.length < 300);
  assert.equal(f.rcpts.length, 50);
  assert.ok(text.includes(',…+11>'), 'recipients past the cap are counted');
  assert.equal(f.symbols[0]!.options!.length, 10);
  assert.ok(text.includes('[1.50/15.00] [SYM\\x0a(1.50){opt0\\x2028;'), text);
  assert.ok(text.includes('time: 12.30ms'));
  assert.deepEqual(f.mimeRcpts, ['m@example.org']);
});

test('the worker\'s line takes the MIME recipients from the history row, and they are the ones the line reads alone', () => {
  // 60 To/Cc addresses (past the cap of 50), one with a control character, a folded Cc.
  const to = Array.from({ length: 40 }, (_, i) => `<t${i}@example.net>`).join(', ');
  const cc = Array.from({ length: 20 }, (_, i) => `c${i}@example.org`).join(',\r\n ');
  const msg = Buffer.from(`From: a@example.com\r\nTo: ${to}, "x" <bad\x7fx@example.net>\r\nCc: ${cc}\r\nSubject: s\r\n\r\nbody\r\n`, 'latin1');
  const meta = emptyMeta();
  const result: ScanResult = {
    isSkipped: false, score: 0, requiredScore: 15, action: 'no action', thresholds: [], groups: [], messages: {}, timeReal: 0.01, newline: '\r\n', symbols: [],
  };
  const lines: Array<Record<string, unknown>> = [];
  const rows: Array<Record<string, unknown>> = [];
  const capture = { debug() {}, info: (_m: string, extra?: Record<string, unknown>) => void lines.push(extra ?? {}), warn() {}, error() {} };
  const recorder = { scan() {}, history: (row: Record<string, unknown>) => void rows.push(row) } as unknown as StatsRecorder;
  const observe = createScanObserver({ recorder, log: capture, scanLine: createScanLogger(capture, 'json', 'info') });
  observe({ result, meta, message: msg, startedAt: Date.now(), seconds: 0.01 });
  assert.equal(lines.length, 1);
  assert.equal(rows.length, 1);
  const alone = scanLogFields({ result, meta, message: msg, seconds: 0.01 });
  assert.equal(alone.mimeRcpts.length, 50);
  assert.ok(alone.mimeRcpts.includes('bad\\x7fx@example.net'), 'escaped');
  assert.deepEqual(lines[0]!.mimeRcpts, alone.mimeRcpts);
  assert.equal((rows[0]!.rcpt_mime as string[]).length, 50);
});

test('logging.format auto: text at a terminal, JSON otherwise', () => {
  assert.equal(resolveLogFormat('auto', { isTTY: true }), 'text');
  assert.equal(resolveLogFormat('auto', { isTTY: false }), 'json');
  assert.equal(resolveLogFormat('auto', {}), 'json');
  assert.equal(resolveLogFormat('text', {}), 'text');
  assert.equal(resolveLogFormat('json', { isTTY: true }), 'json');
});
