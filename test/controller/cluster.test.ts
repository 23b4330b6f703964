// `mailsift serve` with two normal workers and a controller: counters and history from both
// workers aggregate in the controller's view; stopping and starting again with the same
// data_dir keeps the counters, the graph series and the history.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runCli, type LogLine, type Running } from '../cli/run-cli.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { MESSAGES, request } from './harness.js';

const isListen = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.port === 'number' && /^listening on /.test(l.msg);
const CONF = ['workers:', '  normal: { bind: "127.0.0.1:0" }', '  controller: { bind: "127.0.0.1:0", password: readpass, enable_password: enablepass }', 'data_dir: data', ''].join('\n');
const PW: Array<[string, string]> = [['Password', 'enablepass']];
/** Scans sent through the shared port, half to each worker. */
const SCANS = 8;

/**
 * Runs `fn` while every worker but `pid` is stopped. The workers accept from the shared port
 * themselves (supervisor.ts), and a stopped one accepts nothing, so every connection `fn` opens
 * is `pid`'s: how a test reaches each worker for sure (an idle pair tends to let one take all).
 */
async function onlyWorker<T>(pid: number, all: Iterable<number>, fn: () => Promise<T>): Promise<T> {
  const others = [...all].filter((p) => p !== pid);
  for (const p of others) process.kill(p, 'SIGSTOP');
  try {
    return await fn();
  } finally {
    for (const p of others) process.kill(p, 'SIGCONT');
  }
}

async function start(dir: string, single = false): Promise<{ srv: Running; normal: number; controller: number; pids: Set<number> }> {
  const srv = runCli(['serve', ...(single ? ['--single'] : ['--workers', '2']), '-c', dir]);
  if (single) await srv.waitFor(isListen('controller'), 'the controller', 60_000);
  else await srv.waitFor((l) => /^started 2 normal worker/.test(l.msg), 'the workers to start', 60_000);
  const normals = srv.lines.filter(isListen('normal'));
  const controller = srv.lines.find(isListen('controller'))!;
  return { srv, normal: normals[0]!.port!, controller: controller.port!, pids: new Set(normals.map((l) => l.pid)) };
}

async function stop(srv: Running): Promise<void> {
  srv.child.kill('SIGTERM');
  const { code } = await srv.exited;
  assert.equal(code, 0, srv.output());
}

async function getJson<T>(port: number, path: string): Promise<T> {
  const r = await request(port, { method: 'GET', path, headers: PW });
  assert.equal(r.status, 200, `${path}: ${r.body.toString()}`);
  return JSON.parse(r.body.toString()) as T;
}

interface Stat {
  scanned: number;
  actions: Record<string, number>;
  connections: number;
  scan_times: Array<number | null>;
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('two workers, one controller: counters and history aggregate and survive a restart', async () => {
  const dir = await makeConfDir({ 'mailsift.yaml': CONF });
  const ham = readFileSync(`${MESSAGES}/ham.eml`);
  const gtube = readFileSync(`${MESSAGES}/gtube.eml`);
  let run = await start(dir);
  try {
    assert.equal(run.pids.size, 2, 'two worker processes');
    // Half of the scans to each worker, a ham and a GTUBE in turn.
    let i = 0;
    for (const pid of run.pids) {
      await onlyWorker(pid, run.pids, async () => {
        for (let k = 0; k < SCANS / 2; k++, i++) {
          const r = await request(run.normal, { method: 'POST', path: '/checkv2', body: i % 2 ? gtube : ham });
          assert.equal(r.status, 200);
        }
      });
    }
    const stat = await until('counts', () => getJson<Stat>(run.controller, '/stat'), (s) => s.scanned === SCANS);
    assert.equal(stat.scanned, SCANS, 'every scan of both workers is counted once');
    assert.equal(stat.actions.reject, SCANS / 2);
    assert.equal(stat.actions['reject']! + stat.actions['no action']! + stat.actions['add header']! + stat.actions['greylist']!, SCANS);
    assert.ok(stat.connections >= SCANS, `connections ${stat.connections}`);
    assert.equal(stat.scan_times.filter((t) => t !== null).length, SCANS);
    const history = await until('rows', () => getJson<{ version: number; rows: Array<{ action: string; size: number }> }>(run.controller, '/history'), (h) => h.rows.length === SCANS);
    assert.equal(history.version, 2);
    assert.equal(history.rows.length, SCANS, 'rows from both workers in one history');
    assert.equal(history.rows.filter((r) => r.size === gtube.length).length, SCANS / 2);
    const page = await getJson<{ rows: unknown[] }>(run.controller, '/history?from=0&to=1');
    assert.equal(page.rows.length, 2, 'from/to is an inclusive window');
    const graph = await getJson<Array<Array<{ x: number; y: number | null }>>>(run.controller, '/graph?type=day');
    assert.equal(graph.length, 6);
    assert.ok(graph[0]!.some((p) => p.y !== null && p.y > 0), 'reject series has the scans');

    await stop(run.srv);
    // Same data_dir, started again (in one process, which reads the same store).
    run = await start(dir, true);
    const after = await getJson<Stat>(run.controller, '/stat');
    assert.equal(after.scanned, SCANS, 'counters survive a restart');
    assert.equal(after.actions.reject, SCANS / 2);
    const rows = await getJson<{ rows: unknown[] }>(run.controller, '/history');
    assert.equal(rows.rows.length, SCANS, 'history survives a restart');
    const graph2 = await getJson<Array<Array<{ x: number; y: number | null }>>>(run.controller, '/graph?type=day');
    assert.ok(graph2[0]!.some((p) => p.y !== null && p.y > 0), 'graph series survive a restart');

    // /statreset answers with the counts before the reset, then they are zero.
    const reset = await getJson<Stat>(run.controller, '/statreset');
    assert.equal(reset.scanned, SCANS);
    assert.equal((await getJson<Stat>(run.controller, '/stat')).scanned, 0);
    assert.deepEqual(await getJson<unknown>(run.controller, '/historyreset'), { success: true });
    assert.equal((await getJson<{ rows: unknown[] }>(run.controller, '/history')).rows.length, 0);
    await stop(run.srv);
  } finally {
    run.srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});
