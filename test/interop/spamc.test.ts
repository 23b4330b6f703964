// The real spamc (Debian's spamc package, SpamAssassin 4.0.1's client) against a mailsift normal
// worker: exit codes and output of every mode a mail setup uses. With the default
// `legacy_compat: spamd`, `spamc -c` exits 1 on GTUBE and 0 on ham, -R/-r print the report,
// -y the symbols, the default mode and --headers return the message with X-Spam headers, -K
// pings. With `legacy_compat: rspamd` (set in local.d/mailsift.yaml, read by the real config
// loader) spamc must print and exit exactly as it did against Rspamd 3.4
// (shared/fixtures/spamc/direct/*/client-output.txt and client-rc.txt).
// Debian's spamc is built without zlib, so `-z` is refused by spamc itself (exit 64): the
// `Compress: zlib` path is tested with a hand-built request in test/protocol/legacy-spamc.test.ts.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startTestWorker, type TestWorker } from '../client/worker.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli } from '../cli/run-cli.js';
import { run } from './run.js';

const SPAMC = '/usr/bin/spamc';
const skip = existsSync(SPAMC) ? false : 'spamc not installed (apt-get install spamc; .ci/run does)';
const DIRECT = new URL('../../../shared/fixtures/spamc/direct/', import.meta.url).pathname;

/** The message spamc sent in a recorded exchange (the body of its request). */
function messageOf(dir: string): Buffer {
  const req = readFileSync(join(DIRECT, dir, 'client-request.bin'));
  return req.subarray(req.indexOf('\r\n\r\n') + 4);
}
const GTUBE = messageOf('02-check-gtube');
const HAM = messageOf('01-check-clean');

/** spamc's exit statuses (sysexits.h and its own). */
const EX_NOTSPAM = 0;
const EX_ISSPAM = 1;
const EX_IOERR = 74;

describe('spamc against the worker (legacy_compat: spamd)', { skip }, () => {
  let worker: TestWorker;
  before(async () => {
    worker = await startTestWorker();
  });
  after(() => worker?.close());
  const spamc = (args: string[], input: Buffer) => run(SPAMC, ['-d', worker.host, '-p', String(worker.port), ...args], input);

  it('-c: exit 1 and score/threshold on GTUBE, exit 0 on ham', async () => {
    const spam = await spamc(['-c'], GTUBE);
    assert.equal(spam.code, EX_ISSPAM, spam.stdout + spam.stderr);
    assert.equal(spam.stdout, '15.0/15.0\n');
    const ham = await spamc(['-c'], HAM);
    assert.equal(ham.code, EX_NOTSPAM, ham.stdout + ham.stderr);
    assert.match(ham.stdout, /^\d+\.\d\/15\.0\n$/);
  });

  it('-y: the names of the symbols', async () => {
    assert.equal((await spamc(['-y'], GTUBE)).stdout.trim(), 'GTUBE');
    const names = (await spamc(['-y'], HAM)).stdout.trim().split(',');
    for (const n of ['FROM_HAS_DN', 'TO_DN_NONE', 'MIME_GOOD', 'MID_RHS_MATCH_FROM']) assert.ok(names.includes(n), names.join(','));
  });

  it('-R: score line, then the report, for spam and ham', async () => {
    const spam = await spamc(['-R'], GTUBE);
    assert.equal(spam.code, 0, spam.stderr);
    const lines = spam.stdout.split('\n');
    assert.equal(lines[0], '15.0/15.0');
    assert.equal(lines[1], 'Content analysis details:   (15.00 points, 15.00 required)');
    assert.ok(lines.includes('Action: reject'));
    assert.ok(lines.some((l) => /^ 0\.0 GTUBE {18}\S/.test(l)), spam.stdout);
    assert.match((await spamc(['-R'], HAM)).stdout, /^\d+\.\d\/15\.0\nContent analysis details: .*\nAction: (no action|greylist)\n/);
  });

  it('-r: the report for spam only', async () => {
    assert.match((await spamc(['-r'], GTUBE)).stdout, /^15\.0\/15\.0\nContent analysis details: /);
    const ham = await spamc(['-r'], HAM);
    assert.equal(ham.code, 0);
    assert.equal(ham.stdout, '');
  });

  it('default mode (PROCESS): the message with X-Spam headers; -E exits 1 on spam', async () => {
    const spam = await spamc([], GTUBE);
    assert.equal(spam.code, 0, spam.stderr);
    const sep = spam.stdout.indexOf('\r\n\r\n');
    const head = spam.stdout.slice(0, sep);
    assert.ok(head.startsWith(GTUBE.toString().slice(0, GTUBE.indexOf('\r\n\r\n'))), 'original headers first');
    assert.match(head, /\r\nX-Spam-Flag: YES\r\nX-Spam-Level: \*{15}\r\nX-Spam-Status: Yes, score=15\.00 required=15\.00 tests=GTUBE action=reject$/);
    assert.equal(spam.stdout.slice(sep), GTUBE.toString().slice(GTUBE.indexOf('\r\n\r\n')), 'body unchanged');
    assert.equal((await spamc(['-E'], GTUBE)).code, EX_ISSPAM);
    const ham = await spamc(['-E'], HAM);
    assert.equal(ham.code, EX_NOTSPAM);
    assert.match(ham.stdout, /\r\nX-Spam-Status: No, score=/);
    assert.ok(!ham.stdout.includes('X-Spam-Flag'));
  });

  it('--headers: the same headers, spamc appends the body it sent', async () => {
    const full = await spamc([], GTUBE);
    const headers = await spamc(['--headers'], GTUBE);
    assert.equal(headers.code, 0, headers.stderr);
    assert.equal(headers.stdout, full.stdout);
  });

  it('-K: PONG, printed as `SPAMD/1.5 0`, exit 0', async () => {
    const r = await spamc(['-K'], Buffer.alloc(0));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'SPAMD/1.5 0\n');
  });

  it('-L spam (TELL): refused with EX_UNAVAILABLE on the status line; spamc fails, it never claims to have learned', async () => {
    const r = await spamc(['-L', 'spam'], GTUBE);
    assert.equal(r.code, EX_IOERR, r.stdout + r.stderr);
    assert.ok(!/learned/.test(r.stdout), r.stdout);
  });

  it("the README's spamc lines work as written (port aside) on GTUBE", async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const lines = readme.split('\n').filter((l) => l.startsWith('spamc -d 127.0.0.1 -p 11333'));
    assert.equal(lines.length, 4);
    const file = join(DIRECT, '02-check-gtube', 'client-request.bin');
    for (const line of lines) {
      // `< message.eml` becomes the GTUBE message (the request's body, after its header block).
      const cmd = line.replace(/#.*$/, '').replace('-p 11333', `-p ${worker.port}`).replace('< message.eml', `< <(tail -c ${GTUBE.length} ${file})`);
      const r = await promisify(execFile)('bash', ['-c', `${cmd}; echo "rc=$?"`], { timeout: 60_000 });
      const rc = Number(/rc=(\d+)\n$/.exec(r.stdout)?.[1]);
      assert.equal(rc, line.includes(' -c ') ? EX_ISSPAM : 0, `${line}\n${r.stdout}`);
      assert.ok(r.stdout.length > 'rc=0\n'.length, line);
    }
  });

  it('-x (no safe fallback): a scan that works needs none', async () => {
    const r = await spamc(['-x', '-c'], GTUBE);
    assert.equal(r.code, EX_ISSPAM);
  });
});

describe('spamc against the worker with legacy_compat: rspamd: what it printed against Rspamd 3.4', { skip }, () => {
  let worker: TestWorker;
  before(async () => {
    worker = await startTestWorker({ 'mailsift.yaml': 'workers:\n  normal:\n    legacy_compat: rspamd\n' });
  });
  after(() => worker?.close());

  const recorded = (dir: string) => ({
    out: readFileSync(join(DIRECT, dir, 'client-output.txt'), 'utf8'),
    rc: Number(readFileSync(join(DIRECT, dir, 'client-rc.txt'), 'utf8').trim()),
  });
  const cases: Array<[string, string[], Buffer]> = [
    ['02-check-gtube', ['-c'], GTUBE],
    ['03-symbols-gtube', ['-y'], GTUBE],
    ['04-report-gtube', ['-r'], GTUBE],
    ['05-process-default', [], HAM],
    ['06-ping', ['-K'], Buffer.alloc(0)],
    ['08-headers', ['--headers'], HAM],
    ['11-report-full', ['-R'], GTUBE],
  ];
  for (const [dir, args, input] of cases) {
    it(`${dir}: spamc ${args.join(' ')} prints and exits as recorded`, async () => {
      const want = recorded(dir);
      const r = await run(SPAMC, ['-d', worker.host, '-p', String(worker.port), ...args], input);
      assert.equal(r.code, want.rc, r.stderr);
      // The recorder stored the output without its final newline.
      assert.equal(r.stdout.replace(/\n$/, ''), want.out.replace(/\n$/, ''));
    });
  }

  it('01-check-clean: `score/15.0`, exit 0 (the score itself depends on the environment)', async () => {
    const r = await run(SPAMC, ['-d', worker.host, '-p', String(worker.port), '-c'], HAM);
    assert.equal(r.code, recorded('01-check-clean').rc);
    assert.match(r.stdout, /^\d+\.\d\/15\.0\n$/);
  });
});

describe('spamc against `mailsift serve` (supervisor, worker processes, the config file)', { skip }, () => {
  it('legacy_compat from mailsift.yaml reaches the worker processes: spamd exits 1 on GTUBE, rspamd 0', async () => {
    for (const [compat, rc] of [['spamd', EX_ISSPAM], ['rspamd', EX_NOTSPAM]] as const) {
      const dir = await makeConfDir({ 'mailsift.yaml': `workers:\n  normal: { bind: "127.0.0.1:0", count: 1, legacy_compat: ${compat} }\n  controller: { enabled: false }\n` });
      const srv = runCli(['serve', '-c', dir]);
      try {
        const listening = await srv.waitFor((l) => l.worker === 'normal' && typeof l.port === 'number' && /^listening on /.test(l.msg), 'the normal listener', 120_000);
        const r = await run(SPAMC, ['-d', '127.0.0.1', '-p', String(listening.port), '-c'], GTUBE);
        assert.equal(r.code, rc, `${compat}: ${r.stdout}${r.stderr}`);
        assert.equal(r.stdout, '15.0/15.0\n');
        srv.child.kill('SIGTERM');
        assert.equal((await srv.exited).code, 0, srv.output());
      } finally {
        srv.child.kill('SIGKILL');
        await removeConfDir(dir);
      }
    }
  });
});
