// Scan lines to stdout are written in batches (src/observability/log.ts): a real child process
// logs through createLogger to a pipe. Every line arrives, in order; the lines logged just before
// the process ends (process.exit, an uncaught exception) are not lost; a burst of scan lines
// leaves in far fewer writes than lines, while any other line is written at once, after the scan
// lines that were waiting.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const LOG_MODULE = fileURLToPath(new URL('../../src/observability/log.ts', import.meta.url));

/**
 * Runs `body` in a child with `log` made by createLogger (JSON to stdout). `writes`: the child's
 * calls of process.stdout.write, counted in the child and reported on its stderr at exit.
 */
function runChild(body: string): Promise<{ chunks: string[]; code: number | null; writes: number }> {
  const script = [
    `let writes = 0;`,
    `const write = process.stdout.write.bind(process.stdout);`,
    `process.stdout.write = (...a) => { writes++; return write(...a); };`,
    `const { createLogger } = await import(${JSON.stringify(LOG_MODULE)});`,
    `const log = createLogger();`,
    // After the logger's own exit handler: it counts the final flush too.
    `process.on('exit', () => process.stderr.write('writes=' + writes + '\\n'));`,
    body,
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: string[] = [];
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => chunks.push(c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ chunks, code, writes: Number(/writes=(\d+)/.exec(err)?.[1] ?? NaN) })));
}

function messages(chunks: string[]): string[] {
  return chunks
    .join('')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
}

describe('log lines on stdout', () => {
  it('arrive in order, scan lines in fewer writes than lines, the last ones written at process.exit', async () => {
    const { chunks, code, writes } = await runChild(`
      const task = log.child('task');
      for (let i = 0; i < 200; i++) task.info('line ' + i);
      // A pause longer than a batch, so the second burst is a write of its own.
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 200; i < 400; i++) task.info('line ' + i);
      task.info('last');
      process.exit(3);
    `);
    assert.equal(code, 3);
    assert.deepEqual(messages(chunks), [...Array.from({ length: 400 }, (_, i) => `line ${i}`), 'last']);
    // Two bursts of 200 lines (about 13 KiB each, under a batch's 32 KiB): one write each.
    assert.equal(writes, 2, `${writes} writes for 401 lines`);
  });

  it('writes any other line at once, behind the scan lines that were waiting', async () => {
    const { chunks, writes } = await runChild(`
      const task = log.child('task');
      task.info('scan 1');
      task.info('scan 2');
      log.warn('a warning');
      log.child('engine').info('a start-up line');
      task.info('scan 3');
    `);
    assert.deepEqual(messages(chunks), ['scan 1', 'scan 2', 'a warning', 'a start-up line', 'scan 3']);
    // The two scan lines and the warning in one write, the start-up line in its own, scan 3 at exit.
    assert.equal(writes, 3);
  });

  it('keeps the line logged just before an uncaught exception ends the process', async () => {
    const { chunks, code } = await runChild(`
      log.error('about to fail', { why: 'test' });
      setTimeout(() => { throw new Error('boom'); }, 0);
    `);
    assert.equal(code, 1);
    assert.deepEqual(messages(chunks), ['about to fail']);
  });
});
