// `mailsift serve` with two normal worker processes and a controller: a /saveactions change
// reaches both workers (separate processes, each with its own engine and store connection)
// within a second. (A worker started after a save applies it at once: edit.test.ts.)

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli, type LogLine } from '../cli/run-cli.js';
import { ENABLE_PASS, rawRequest } from './edit-harness.js';

const HAM = '/work/shared/fixtures/scan/messages/ham.eml';
const isListen = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.port === 'number' && /^listening on /.test(l.msg);
const CONF = [
  'workers:',
  '  normal: { bind: "127.0.0.1:0" }',
  '  controller: { bind: "127.0.0.1:0", enable_password: enablepass }',
  'data_dir: data',
  '',
].join('\n');

/**
 * Runs `fn` while every worker but `pid` is stopped. The workers accept from the shared port
 * themselves (supervisor.ts), and a stopped one accepts nothing, so every connection `fn` opens
 * is `pid`'s: how the test reaches each worker for sure (an idle pair tends to let one take all).
 */
async function onlyWorker<T>(pid: number, all: readonly number[], fn: () => Promise<T>): Promise<T> {
  const others = all.filter((p) => p !== pid);
  for (const p of others) process.kill(p, 'SIGSTOP');
  try {
    return await fn();
  } finally {
    for (const p of others) process.kill(p, 'SIGCONT');
  }
}

async function actionOf(port: number, msg: Buffer): Promise<string> {
  const r = await rawRequest(port, 'POST', '/checkv2', {}, msg);
  assert.equal(r.status, 200, r.body.toString());
  return (JSON.parse(r.body.toString()) as { action: string }).action;
}

test('a saved threshold changes the verdict of every worker process within a second', async () => {
  const dir = await makeConfDir({ 'mailsift.yaml': CONF });
  const srv = runCli(['serve', '--workers', '2', '-c', dir]);
  try {
    const tStart = Date.now();
    await srv.waitFor((l) => /^started 2 normal worker/.test(l.msg), 'the workers to start', 120_000);
    console.log(`# started in ${Date.now() - tStart} ms`);
    const port = srv.lines.find(isListen('normal'))!.port!;
    const ctl = srv.lines.find(isListen('controller'))!.port!;
    const ham = await readFile(HAM);
    const pids = srv.lines.filter(isListen('normal')).map((l) => l.pid);
    assert.equal(pids.length, 2);
    // ham.eml scores between 0 and the add header threshold with the shipped rules (about 4.4,
    // greylist); the save below puts that threshold at 0, the lowest a threshold may be, and
    // switches greylist off, so only the saved value can make the verdict add header.
    for (const pid of pids) await onlyWorker(pid, pids, async () => assert.notEqual(await actionOf(port, ham), 'add header'));
    const saved = await rawRequest(ctl, 'POST', '/saveactions', { Password: ENABLE_PASS }, '[15,null,0,null]');
    assert.equal(saved.status, 200, saved.body.toString());
    const t0 = Date.now();
    // For a second, scans through the shared port (whichever worker takes them) show when the
    // change lands; reported, not judged.
    let lastOld = 0;
    while (Date.now() - t0 < 1000) if ((await actionOf(port, ham)) !== 'add header') lastOld = Date.now() - t0;
    // Then every worker, each in turn taking every connection, scans with the saved threshold.
    for (const pid of pids) {
      await onlyWorker(pid, pids, async () => {
        for (let i = 0; i < 3; i++) assert.equal(await actionOf(port, ham), 'add header', `worker ${pid} ${Date.now() - t0} ms after the save`);
      });
    }
    console.log(`# last scan with the old threshold sent ${lastOld} ms after the save; every worker on the new one at ${Date.now() - t0} ms`);
    const tStop = Date.now();
    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0, srv.output());
    console.log(`# stopped in ${Date.now() - tStop} ms`);
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});
