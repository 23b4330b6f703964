import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LineBuffer } from '../../src/observability/line-buffer.js';

const CHILD = fileURLToPath(new URL('./buffered-log-child.ts', import.meta.url));

function collector() {
  const chunks: string[] = [];
  return { chunks, out: { write: (c: string) => chunks.push(c) } };
}

test('lines wait and go out together, in order, after the flush interval', async () => {
  const c = collector();
  const b = new LineBuffer(c.out, 1000, 5);
  b.write('a\n');
  b.write('b\n');
  assert.equal(c.chunks.length, 0);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(c.chunks, ['a\nb\n']);
});

test('a batch never passes the byte cap; a longer line goes out alone, after what waited', () => {
  const c = collector();
  const b = new LineBuffer(c.out, 10, 60_000);
  b.write('1234\n');
  b.write('5678\n'); // 10 bytes: full
  b.write('é\n'); // 3 bytes: would pass the cap
  b.write(`${'x'.repeat(20)}\n`);
  b.write('z\n');
  b.unbuffer();
  assert.deepEqual(c.chunks, ['1234\n5678\n', 'é\n', `${'x'.repeat(20)}\n`, 'z\n']);
  // Direct from now on.
  b.write('y\n');
  assert.equal(c.chunks.at(-1), 'y\n');
});

function runChild(how: string, format = 'json'): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, how, format], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

const ENDINGS: Array<[string, number | null, NodeJS.Signals | null]> = [
  ['exit', 3, null],
  ['throw', 1, null],
  ['reject', 1, null],
  ['handled-crash', 1, null],
  ['natural', 0, null],
];

for (const [how, code, signal] of ENDINGS) {
  test(`every line logged before the process ends (${how}) reaches stdout, in order`, async () => {
    const r = await runChild(how);
    assert.deepEqual([r.code, r.signal], [code, signal]);
    const lines = r.out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string; i?: number });
    const scans = lines.filter((l) => l.i !== undefined).map((l) => l.i);
    assert.deepEqual(scans, Array.from({ length: 100 }, (_, i) => i));
    if (how === 'handled-crash') assert.equal(lines.at(-1)!.msg, 'worker crashed: boom');
  });
}

test('text format: lines before process.exit are not lost either', async () => {
  const r = await runChild('exit', 'text');
  const lines = r.out.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 100);
  assert.match(lines[99]!, / INFO \d+ \[task\] line 99 i=99 /);
});

test('a stopping process writes directly: a line logged after unbufferStdout survives a SIGKILL', async () => {
  const r = await runChild('stopping');
  assert.equal(r.signal, 'SIGKILL');
  const msgs = r.out.split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { msg: string }).msg);
  assert.equal(msgs.length, 101);
  assert.equal(msgs.at(-1), 'after unbuffer');
});
