// logging.file through the real CLI: every process of `mailsift serve` appends its JSON lines to
// the file (the scan lines included, nothing on stdout), a rotation by rename is followed by name,
// the last lines are in the file under its name when the server stops (even right after a
// rename), SIGUSR1 has it reopened at once, and a path that cannot be written stops the start
// with one line naming it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { httpRequest, runCli } from '../cli/run-cli.js';

const MESSAGE = readFileSync('/work/shared/fixtures/rspamd-test-messages/advance_fee_fraud.eml');

interface Line {
  msg: string;
  pid: number;
  tag?: string;
  worker?: string;
  port?: number;
  messageId?: string;
}

function linesOf(path: string): Line[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

async function until<T>(what: string, probe: () => T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('logging.file: every process appends there, rotation by rename is followed, the last lines are written on stop', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': 'workers:\n  normal: { bind: "127.0.0.1:0" }\n  controller: { bind: "127.0.0.1:0", secure_ip: ["127.0.0.1"] }\nlogging: { level: info, file: logs/mailsift.log }\n',
  });
  const file = join(dir, 'logs', 'mailsift.log');
  const srv = runCli(['serve', '--workers', '1', '-c', dir]);
  try {
    const listening = await until('the scan worker in the log file', () => linesOf(file).find((l) => l.worker === 'normal' && /^listening on /.test(l.msg)), 60_000);
    await until('the supervisor in the log file', () => linesOf(file).find((l) => /^started 1 normal worker/.test(l.msg)), 60_000);
    const r = await httpRequest(listening.port!, 'POST', '/checkv2', MESSAGE);
    assert.equal(r.status, 200, r.body);
    const scan = await until('the scan line', () => linesOf(file).find((l) => l.msg === 'scan'), 10_000);
    assert.equal(scan.tag, 'task');
    const pids = new Set(linesOf(file).map((l) => l.pid));
    assert.ok(pids.size >= 3, `supervisor, scan worker and controller all write there (pids ${[...pids].join(', ')})`);
    assert.equal(srv.output().trim(), '', 'nothing on stdout or stderr');

    // logrotate's default: the file renamed, the next lines go to a new file under the name.
    renameSync(file, `${file}.1`);
    let scans = 0;
    await until('a scan line in the new file', () => {
      // One scan per probe, until the workers have reopened the name (within 5 s).
      if (scans++ % 20 === 0) void httpRequest(listening.port!, 'POST', '/checkv2', MESSAGE);
      return linesOf(file).find((l) => l.msg === 'scan');
    }, 15_000);
    assert.ok(linesOf(`${file}.1`).some((l) => l.msg === 'scan'), 'the rotated file keeps what was written before');

    // Rotated again just before the stop: no periodic check (every 5 s) comes in between, so the
    // last lines reach the file under its name only because a stopping process looks at once.
    renameSync(file, `${file}.2`);
    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0);
    // The supervisor's lines of the stop, the last one written out before it exited.
    const last = linesOf(file).map((l) => l.msg);
    assert.ok(last.includes('stopping') && last.includes('stopped'), last.join('\n'));
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});

test('logging.file: SIGUSR1 to the supervisor has every process reopen a renamed file at once', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': 'workers:\n  normal: { bind: "127.0.0.1:0" }\n  controller: { bind: "127.0.0.1:0", secure_ip: ["127.0.0.1"] }\nlogging: { level: info, file: logs/mailsift.log }\n',
  });
  const file = join(dir, 'logs', 'mailsift.log');
  const srv = runCli(['serve', '--workers', '1', '-c', dir]);
  try {
    await until('the supervisor in the log file', () => linesOf(file).find((l) => /^started 1 normal worker/.test(l.msg)), 60_000);
    const pids = new Set(linesOf(file).map((l) => l.pid));
    assert.ok(pids.size >= 3, `supervisor, scan worker and controller (pids ${[...pids].join(', ')})`);
    // As Rspamd's logrotate file has it: rename, then the signal. The periodic check (every 5 s)
    // would take up to 5 s; the signal's reopen is at once, so each process's own line about the
    // signal is already in the new file.
    renameSync(file, `${file}.1`);
    process.kill(srv.child.pid!, 'SIGUSR1');
    await until('every process noting SIGUSR1 in the new file', () => {
      const noted = new Set(linesOf(file).filter((l) => /^SIGUSR1: /.test(l.msg)).map((l) => l.pid));
      return [...pids].every((p) => noted.has(p)) ? true : undefined;
    }, 2_000);
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});

test('logging.file that cannot be written: the start stops with one line naming the path', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': 'workers:\n  normal: { bind: "127.0.0.1:0" }\n  controller: { enabled: false }\nlogging: { file: not-a-dir/mailsift.log }\n',
  });
  // A regular file where the log file's directory should be: no directory can be made there.
  writeFileSync(join(dir, 'not-a-dir'), 'x');
  const srv = runCli(['serve', '--workers', '1', '-c', dir]);
  try {
    const { code } = await srv.exited;
    assert.equal(code, 1);
    const out = srv.output().trim();
    assert.equal(out.split('\n').length, 1, out);
    assert.match(out, /not-a-dir/);
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});
