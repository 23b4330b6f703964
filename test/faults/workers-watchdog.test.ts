// Fault tests for the watchdog (issue 17 item 4), against a real `mailsift serve`: a stalled
// worker (a stopped process, a controller request spinning in a loop) is noticed by /healthy and
// /ready, killed by the watchdog and replaced, and /errors names what it was doing; a worker that
// outgrows its heap cap is restarted with that reason; under --single the watchdog thread ends
// the process.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { runCli } from '../cli/run-cli.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';

import { GTUBE, ENABLE, isListen, HANG_PLUGIN, send, controllerGet, until, startServer, stopServer, config, isConnectionError, silentDns } from './worker-harness.js';

test('a stalled scan worker: /healthy and /ready see it, the watchdog kills and replaces it, /errors names the scan', async () => {
  const dns = await silentDns();
  const { srv, dir, scanPort, controllerPort, normalPids } = await startServer(
    { 'mailsift.yaml': config(['  watchdog_timeout: 6s', `dns: { nameserver: ["${dns.address}"], timeout: 5s, retransmits: 0 }`]) },
    1,
  );
  const [worker] = normalPids as [number];
  try {
    assert.deepEqual(JSON.parse((await controllerGet(controllerPort, '/healthy')).body), { success: true });
    assert.deepEqual(JSON.parse((await controllerGet(controllerPort, '/ready')).body), { success: true });

    // A scan whose DNS lookups go unanswered: once the first query arrives, the scan is in flight.
    const before = dns.queries();
    const message = Buffer.from('Message-ID: <stall-1@example.test>\r\nFrom: someone@example.org\r\nTo: b@example.net\r\nSubject: hello\r\n\r\nSee http://stall.example.com/page\r\n');
    const scan = send(scanPort, 'POST', '/checkv2', { 'Queue-Id': 'WDSTALL1', IP: '8.8.8.8', From: 'someone@example.org' }, message).then(
      (r) => ({ reply: r }),
      (err: unknown) => ({ error: err }),
    );
    await until('the scan to query DNS', async () => dns.queries(), (n) => n > before, 30_000);
    // A stopped process has a stalled loop, as a scan spinning in a parser would.
    process.kill(worker, 'SIGSTOP');

    const unhealthy = await until('/healthy to report the worker', () => controllerGet(controllerPort, '/healthy'), (h) => h.status === 500, 30_000);
    assert.match((JSON.parse(unhealthy.body) as { error: string }).error, new RegExp(`^1 workers are not responding: normal worker ${worker}: no heartbeat for \\d+ s$`));
    const ready = await controllerGet(controllerPort, '/ready');
    assert.equal(ready.status, 500, ready.body);
    assert.deepEqual(JSON.parse(ready.body), { error: 'no healthy scanner workers are running' });

    const report = await srv.waitFor((l) => l.workerPid === worker && /stalled/.test(l.msg), 'the watchdog to kill the worker', 60_000);
    assert.equal(report.level, 50);
    assert.match(report.msg, new RegExp(`^normal worker ${worker} stalled: no heartbeat for [\\d.]+ s \\(workers.watchdog_timeout 6 s\\); killed to be replaced; in flight: \\[scan, Message-ID <stall-1@example.test>, Queue-Id WDSTALL1, running [\\d.]+ s\\]$`));
    const restart = await srv.waitFor((l) => l.workerPid === worker && l.reason === 'watchdog', 'the restart line');
    assert.match(restart.msg, /was killed by the watchdog after [\d.]+ s without a heartbeat; restarting in \d+ ms$/);
    const outcome = await scan;
    assert.ok('error' in outcome && isConnectionError(outcome.error), `the stalled scan's connection is cut: ${JSON.stringify(outcome)}`);

    const replacement = await srv.waitFor((l) => isListen('normal')(l) && l.pid !== worker, 'the replacement worker', 90_000);
    await until('/healthy after the replacement', () => controllerGet(controllerPort, '/healthy'), (h) => h.status === 200 && h.body === '{"success":true}');
    assert.deepEqual(JSON.parse((await controllerGet(controllerPort, '/ready')).body), { success: true });
    // The only worker was gone, so node:cluster closed the shared socket; configured with port 0,
    // the replacement listens on a new one.
    const gtube = await send(replacement.port!, 'POST', '/checkv2', { 'Queue-Id': 'AFTER1' }, GTUBE);
    assert.equal((JSON.parse(gtube.body) as { action: string }).action, 'reject');
    await srv.waitFor((l) => l.msg === 'scan' && l.pid === replacement.pid && l.queueId === 'AFTER1', 'the replacement to answer the scan');

    const errors = JSON.parse((await controllerGet(controllerPort, '/errors')).body) as Array<{ id: string; type: string; message: string; pid: number }>;
    const entry = errors.find((e) => /stalled/.test(e.message));
    assert.ok(entry, JSON.stringify(errors));
    assert.equal(entry.id, 'WDSTALL1');
    assert.match(entry.message, /Message-ID <stall-1@example\.test>, Queue-Id WDSTALL1/);
  } finally {
    try {
      process.kill(worker, 'SIGKILL');
    } catch {
      // already gone: the watchdog did its job
    }
    dns.close();
    await stopServer(srv, dir);
  }
});

test('a controller stuck in a synchronous loop is killed by the watchdog and replaced; /errors keeps the request it was serving', async () => {
  const { srv, dir, controllerPort, controllerPid } = await startServer({ 'mailsift.yaml': config(['  watchdog_timeout: 4s']), 'controller/hang.mjs': HANG_PLUGIN }, 1);
  try {
    const body = Buffer.from('Message-ID: <spin-1@example.test>\r\nSubject: x\r\n\r\nbody\r\n');
    const stuck = send(controllerPort, 'POST', '/plugins/hang/spin', { Password: ENABLE, 'Queue-Id': 'WDSPIN1' }, body).then(
      (r) => ({ reply: r }),
      (err: unknown) => ({ error: err }),
    );
    const report = await srv.waitFor((l) => l.workerPid === controllerPid && /stalled/.test(l.msg), 'the watchdog to kill the controller', 60_000);
    assert.match(report.msg, /^controller worker \d+ stalled: .* in flight: \[\/plugins\/hang\/spin, Message-ID <spin-1@example\.test>, Queue-Id WDSPIN1, running [\d.]+ s\]$/);
    const outcome = await stuck;
    assert.ok('error' in outcome && isConnectionError(outcome.error), JSON.stringify(outcome));
    await srv.waitFor((l) => isListen('controller')(l) && l.pid !== controllerPid, 'the replacement controller', 90_000);
    const errors = await until('the replacement controller to answer /errors', () => controllerGet(controllerPort, '/errors'), (r) => r.status === 200);
    const entry = (JSON.parse(errors.body) as Array<{ id: string; message: string }>).find((e) => /stalled/.test(e.message));
    assert.ok(entry, errors.body);
    assert.equal(entry.id, 'WDSPIN1');
    assert.deepEqual(JSON.parse((await controllerGet(controllerPort, '/healthy')).body), { success: true });
  } finally {
    await stopServer(srv, dir);
  }
});

test('workers run with the configured heap cap; one that outgrows it is restarted with that reason', async () => {
  const { srv, dir, controllerPort, controllerPid, normalPids } = await startServer({ 'mailsift.yaml': config(['  max_heap: 192M']), 'controller/hang.mjs': HANG_PLUGIN }, 1);
  try {
    for (const pid of [controllerPid, ...normalPids]) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      assert.ok(argv.includes('--max-old-space-size=192'), `${pid}: ${argv.join(' ')}`);
    }
    const hog = send(controllerPort, 'POST', '/plugins/hang/hog', { Password: ENABLE }).then(
      (r) => ({ reply: r }),
      (err: unknown) => ({ error: err }),
    );
    const restart = await srv.waitFor((l) => l.workerPid === controllerPid && /restarting/.test(l.msg), 'the controller to run out of heap', 120_000);
    assert.match(restart.msg, /^controller worker \d+ ran out of heap memory \(workers\.max_heap 192 MiB\); restarting in \d+ ms$/);
    assert.equal(restart.signal, 'SIGABRT');
    assert.ok('error' in (await hog));
    await srv.waitFor((l) => isListen('controller')(l) && l.pid !== controllerPid, 'the replacement controller', 90_000);
    assert.deepEqual(JSON.parse((await until('/healthy', () => controllerGet(controllerPort, '/healthy'), (h) => h.status === 200)).body), { success: true });
  } finally {
    await stopServer(srv, dir);
  }
});

test('--single: the watchdog thread logs the stuck request and kills the process', async () => {
  const dir = await makeConfDir({ 'mailsift.yaml': config(['  watchdog_timeout: 4s']), 'controller/hang.mjs': HANG_PLUGIN });
  const srv = runCli(['serve', '--single', '-c', dir]);
  try {
    const controller = await srv.waitFor(isListen('controller'), 'the controller', 90_000);
    await srv.waitFor(isListen('normal'), 'the normal listener');
    const body = Buffer.from('Message-ID: <single-1@example.test>\r\n\r\nbody\r\n');
    const stuck = send(controller.port!, 'POST', '/plugins/hang/spin', { Password: ENABLE, 'Queue-Id': 'WDSINGLE1' }, body).catch((err: unknown) => err);
    const { signal } = await srv.exited;
    assert.equal(signal, 'SIGKILL', srv.output());
    const line = srv.lines.find((l) => l.tag === 'watchdog');
    assert.ok(line, srv.output());
    assert.equal(line.level, 50);
    assert.equal(line.pid, controller.pid);
    assert.match(line.msg, /^event loop stalled: no heartbeat for [\d.]+ s \(workers.watchdog_timeout 4 s\); killing the process .*; in flight: \[\/plugins\/hang\/spin, Message-ID <single-1@example\.test>, Queue-Id WDSINGLE1, running [\d.]+ s\]$/);
    assert.ok(isConnectionError(await stuck));
  } finally {
    srv.child.kill('SIGKILL');
    await srv.exited;
    // A killed process leaves its scan-board directory (the next start would remove it).
    const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    for (const name of readdirSync(base).filter((n) => n.startsWith(`mailsift-board-${srv.child.pid}-`))) rmSync(join(base, name), { recursive: true, force: true });
    await removeConfDir(dir);
  }
});
