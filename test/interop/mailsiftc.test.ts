// mailsiftc end to end against a real worker: rspamc-style text, -j, directories, stdin, v3,
// -m, exit codes; and its text output agrees line for line with the real rspamc's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTIONS } from '../../src/core/scan-types.js';
import { startTestWorker, type TestWorker } from '../client/worker.js';
import { mailsiftc, parseTextOutput, run } from './run.js';

const MESSAGES = '/work/shared/fixtures/scan/messages';
const GTUBE = `${MESSAGES}/gtube.eml`;
const CRLF = `${MESSAGES}/crlf-simple.eml`;

let worker: TestWorker;
before(async () => { worker = await startTestWorker(); });
after(async () => { await worker?.close(); });

test('human output: Results/Action/Spam/Score/Symbol lines', async () => {
  const r = await mailsiftc(['-h', worker.server, GTUBE]);
  assert.equal(r.code, 0, r.stderr);
  const v = parseTextOutput(r.stdout);
  assert.deepEqual(v.files, [GTUBE]);
  assert.equal(v.action, 'reject');
  assert.equal(v.spam, 'true');
  assert.ok(v.symbols.has('GTUBE'));
  assert.ok(Number.isFinite(v.score) && Number.isFinite(v.required));
  assert.match(r.stdout, /^\[Metric: default\]$/m);
});

test('-j prints the JSON the server sent', async () => {
  const r = await mailsiftc(['-h', worker.server, '-j', '--ip', '203.0.113.5', '--from', 'alice@example.com', '--rcpt', 'bob@example.org', '--rcpt', 'carol@example.net', CRLF]);
  assert.equal(r.code, 0, r.stderr);
  const obj = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.ok((ACTIONS as readonly string[]).includes(String(obj.action)));
  assert.equal(obj['message-id'], 'fixture-crlf-1@example.com');
});

test('v3 with msgpack and zstd (-3 --msgpack -z) gives the same verdict as v2', async () => {
  const v2 = parseTextOutput((await mailsiftc(['-h', worker.server, GTUBE])).stdout);
  const r = await mailsiftc(['-h', worker.server, '-3', '--msgpack', '-z', '--rcpt', 'bob@example.org', GTUBE]);
  assert.equal(r.code, 0, r.stderr);
  const v3 = parseTextOutput(r.stdout);
  assert.equal(v3.action, v2.action);
  assert.deepEqual([...v3.symbols.keys()].sort(), [...v2.symbols.keys()].sort());
});

test('directories are scanned recursively, results in file order, with -n parallelism', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsiftc-dir-'));
  try {
    await copyFile(GTUBE, join(dir, 'a-gtube.eml'));
    await copyFile(CRLF, join(dir, 'b-crlf.eml'));
    await copyFile(`${MESSAGES}/lf-simple.eml`, join(dir, 'c-lf.eml'));
    const r = await mailsiftc(['-h', worker.server, '-n', '3', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(parseTextOutput(r.stdout).files, ['a-gtube.eml', 'b-crlf.eml', 'c-lf.eml'].map((n) => join(dir, n)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('stdin is scanned when no file is given', async () => {
  const r = await mailsiftc(['-h', worker.server], await readFile(GTUBE));
  assert.equal(r.code, 0, r.stderr);
  const v = parseTextOutput(r.stdout);
  assert.deepEqual(v.files, ['stdin']);
  assert.equal(v.action, 'reject');
});

test('-m prints the message with the verdict headers after the original headers', async () => {
  const r = await mailsiftc(['-h', worker.server, '-m', GTUBE]);
  assert.equal(r.code, 0, r.stderr);
  const original = await readFile(GTUBE, 'utf8');
  const [headers] = r.stdout.split(/\r?\n\r?\n/);
  assert.match(headers!, /^X-Spam-Action: reject$/m);
  assert.match(headers!, /^X-Spam: yes$/m);
  assert.ok(r.stdout.startsWith(original.slice(0, original.search(/\r?\n\r?\n/))), 'original headers come first');
  assert.ok(r.stdout.includes('XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X'), 'body kept');
});

test('a refused connection exits non-zero and says why', async () => {
  const spare = net.createServer();
  await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
  const port = (spare.address() as net.AddressInfo).port;
  await new Promise<void>((r) => spare.close(() => r()));
  const r = await mailsiftc(['-h', `127.0.0.1:${port}`, GTUBE]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /ECONNREFUSED/);
});

test('its text output matches the real rspamc line for line (timing aside)', { skip: existsSync('/usr/bin/rspamc') ? false : 'rspamc not installed' }, async () => {
  for (const file of [GTUBE, `${MESSAGES}/lf-simple.eml`]) {
    const ours = await mailsiftc(['-h', worker.server, file]);
    const theirs = await run('/usr/bin/rspamc', ['-h', worker.server, file]);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.match(ours.stdout, /^Action: /m);
    const strip = (s: string) => s.replace(/^(Results for file: .*) \([\d.]+ seconds\)$/m, '$1');
    assert.equal(strip(ours.stdout), strip(theirs.stdout));
  }
});
