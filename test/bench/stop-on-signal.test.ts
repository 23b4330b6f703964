// The benches' Ctrl-C / SIGTERM path (bench/servers.ts stopOnSignal): every server still running
// is stopped before the process exits, also when servers of earlier experiments were registered
// and stopped before it (the bug: their handler exited at once and orphaned the running server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const servers = fileURLToPath(new URL('../../bench/servers.ts', import.meta.url));

test('SIGTERM waits for the running server\'s stop after earlier servers were stopped', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'stop-on-signal-'));
  try {
    const marker = join(dir, 'stopped');
    const script = join(dir, 'bench.ts');
    writeFileSync(script, `
import { writeFileSync } from 'node:fs';
import { stopOnSignal } from ${JSON.stringify(servers)};
// Earlier experiments' servers, stopped already (their stop resolves at once) and never
// unregistered, as the accuracy bench registered them before it could.
stopOnSignal(async () => {});
stopOnSignal(async () => {});
// The running server takes a while to stop, as a real one does.
stopOnSignal(() => new Promise((r) => setTimeout(() => { writeFileSync(${JSON.stringify(marker)}, 'yes'); r(); }, 300)));
process.stdout.write('ready\\n');
setInterval(() => {}, 1000);
`);
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => { if (c.toString().includes('ready')) resolve(); });
      child.once('exit', () => reject(new Error(`exited before ready: ${err}`)));
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 130);
    assert.ok(existsSync(marker), 'the running server was stopped before the bench exited');
    assert.equal(readFileSync(marker, 'utf8'), 'yes');
    assert.match(err, /SIGTERM: stopping the server/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
