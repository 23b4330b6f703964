// `mailsift pw`: the password from -p, a pipe, or a no-echo terminal prompt asked twice
// (driven through a real pseudo-terminal with script(1)); `--check` exit statuses.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { verifyPassword } from '../../src/crypto/password.js';
import { run, type RunResult } from '../interop/run.js';
import { REPO_ROOT } from './run-cli.js';

const CLI = ['--import', 'tsx', 'src/cli/mailsift.ts'];
const cli = (args: string[], input?: string): Promise<RunResult> => run(process.execPath, [...CLI, ...args], input === undefined ? undefined : Buffer.from(input));

/** Runs `mailsift pw` on a pseudo-terminal, typing each answer when its prompt shows. */
function onTerminal(answers: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const cmd = [process.execPath, ...CLI, 'pw'].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let prompts = 0;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const seen = (out.match(/password: /g) ?? []).length;
      while (prompts < seen && prompts < answers.length) child.stdin.write(`${answers[prompts++]}\r`);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
    setTimeout(() => child.kill('SIGKILL'), 60_000).unref();
  });
}

const HASH = /\$(?:scrypt|1|2)\$\S+/;

test('pw hashes from -p, from a pipe and from a terminal; --check tells right from wrong', async () => {
  const hasScript = existsSync('/usr/bin/script');
  const known = '$2$15e364hh3thatg4wek4ow7n9ae5t6ij3$7mzjydqqb894eeskpczxiuc7yr3npbbikcmf3rgca5eh8phes8py'; // fixtures/controller: readpass
  const [piped, catena, right, wrong, empty, tty, mismatch] = await Promise.all([
    cli(['pw'], 'from a pipe\nsecond line ignored\n'),
    cli(['pw', '-t', 'catena', '-p', 'given on the command line']),
    cli(['pw', '--check', known, '-p', 'readpass']),
    cli(['pw', '--check', known], 'readpasx\n'),
    cli(['pw'], '\n'),
    hasScript ? onTerminal(['typed twice', 'typed twice']) : undefined,
    hasScript ? onTerminal(['typed once', 'typed otherwise']) : undefined,
  ]);

  assert.equal(piped.code, 0, piped.stderr);
  const pipedHash = piped.stdout.trim();
  assert.match(pipedHash, /^\$scrypt\$/);
  assert.equal(verifyPassword(pipedHash, 'from a pipe'), true);

  assert.equal(catena.code, 0, catena.stderr);
  assert.match(catena.stdout.trim(), /^\$2\$[a-z0-9]{32}\$[a-z0-9]{52}$/);
  assert.equal(verifyPassword(catena.stdout.trim(), 'given on the command line'), true);

  assert.deepEqual([right.code, right.stdout], [0, 'password correct\n']);
  assert.deepEqual([wrong.code, wrong.stdout], [1, 'password incorrect\n']);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /no password/);

  if (tty && mismatch) {
    assert.equal(tty.code, 0, tty.out);
    assert.doesNotMatch(tty.out, /typed twice/, 'the password is not echoed');
    const hash = HASH.exec(tty.out)?.[0];
    assert.ok(hash, tty.out);
    assert.equal(verifyPassword(hash, 'typed twice'), true);
    assert.equal(mismatch.code, 2, mismatch.out);
    assert.match(mismatch.out, /do not match/);
    assert.doesNotMatch(mismatch.out, HASH);
  }
});
