import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { httpRequest, runCli, type LogLine } from './run-cli.js';

const GTUBE = '/work/shared/fixtures/scan/messages/gtube.eml';
const HAM = '/work/shared/fixtures/scan/messages/ham.eml';
const isListen = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.port === 'number' && /^listening on /.test(l.msg);

const EPHEMERAL = ['workers:', '  normal: { bind: "127.0.0.1:0", max_message: 4k }', '  controller: { bind: "127.0.0.1:0" }', ''].join('\n');

test('serve --single: both listeners answer, a scan gets a verdict, config limits apply, SIGTERM exits 0', async () => {
  const dir = await makeConfDir({ 'mailsift.yaml': EPHEMERAL });
  const srv = runCli(['serve', '--single', '-c', dir]);
  try {
    const normal = await srv.waitFor(isListen('normal'), 'the normal listener');
    const controller = await srv.waitFor(isListen('controller'), 'the controller listener');
    assert.notEqual(normal.port, controller.port);
    assert.equal(normal.pid, controller.pid, 'one process');
    for (const port of [normal.port!, controller.port!]) {
      const r = await httpRequest(port, 'GET', '/ping');
      assert.equal(r.status, 200);
      assert.equal(r.body.trim(), 'pong');
    }
    const scan = await httpRequest(normal.port!, 'POST', '/checkv2', await readFile(GTUBE));
    assert.equal(scan.status, 200, scan.body);
    const verdict = JSON.parse(scan.body) as { action: string; symbols: Record<string, unknown>; required_score: number };
    assert.equal(verdict.action, 'reject');
    assert.ok('GTUBE' in verdict.symbols, scan.body);
    assert.equal(verdict.required_score, 15);

    const ham = await readFile(HAM);
    assert.ok(ham.length > 4096, 'fixture must exceed the configured max_message');
    const big = await httpRequest(normal.port!, 'POST', '/checkv2', ham);
    assert.equal(big.status, 413, 'workers.normal.max_message from the config reaches the worker');

    srv.child.kill('SIGTERM');
    const { code } = await srv.exited;
    assert.equal(code, 0, srv.output());
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});

test('serve with 2 workers: both normal workers share the port, a killed worker is replaced', async () => {
  const dir = await makeConfDir({ 'mailsift.yaml': EPHEMERAL });
  const srv = runCli(['serve', '--workers', '2', '-c', dir]);
  try {
    await srv.waitFor((l) => /^started 2 normal worker/.test(l.msg), 'the supervisor to report its workers started', 60_000);
    const normals = srv.lines.filter(isListen('normal'));
    const controller = srv.lines.find(isListen('controller'))!;
    assert.equal(normals.length, 2);
    assert.notEqual(normals[0]!.pid, normals[1]!.pid, 'two processes');
    assert.equal(normals[0]!.port, normals[1]!.port, 'one shared scan port');
    assert.notEqual(controller.port, normals[0]!.port, 'the controller has its own port');
    const port = normals[0]!.port!;
    assert.equal((await httpRequest(port, 'GET', '/ping')).body.trim(), 'pong');
    assert.equal((await httpRequest(controller.port!, 'GET', '/ping')).body.trim(), 'pong');

    const victim = normals[0]!.pid;
    process.kill(victim, 'SIGKILL');
    const restart = await srv.waitFor((l) => l.workerPid === victim && l.signal === 'SIGKILL', 'the supervisor to log the crash');
    assert.match(restart.msg, /killed by SIGKILL; restarting in \d+ ms/);
    const replacement = await srv.waitFor((l) => isListen('normal')(l) && l.pid !== normals[0]!.pid && l.pid !== normals[1]!.pid, 'a replacement worker');
    assert.equal(replacement.port, port);
    for (let i = 0; i < 4; i++) {
      const scan = await httpRequest(port, 'POST', '/checkv2', await readFile(GTUBE));
      assert.equal(JSON.parse(scan.body).action, 'reject');
    }

    srv.child.kill('SIGTERM');
    const { code } = await srv.exited;
    assert.equal(code, 0, srv.output());
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});

test('serve refuses to start half-configured', async () => {
  // An invalid file: nothing listens, the errors are printed, status 1.
  const bad = await makeConfDir({ 'mailsift.yaml': 'workers:\n  normal:\n    max_message: -5\n' });
  const srv = runCli(['serve', '--single', '-c', bad]);
  const { code } = await srv.exited;
  await removeConfDir(bad);
  assert.equal(code, 1);
  assert.match(srv.output(), /mailsift\.yaml:3:\d+: workers\.normal\.max_message: expected a non-negative size/);
  assert.equal(srv.lines.filter((l) => /^listening/.test(l.msg)).length, 0);

  // A worker that cannot bind its port: the supervisor stops everything with a failure status.
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen({ host: '127.0.0.1', port: 0 }, r));
  const taken = (blocker.address() as AddressInfo).port;
  const dir = await makeConfDir({ 'mailsift.yaml': `workers:\n  normal: { bind: "127.0.0.1:${taken}" }\n  controller: { bind: "127.0.0.1:0" }\n` });
  const cl = runCli(['serve', '--workers', '2', '-c', dir]);
  try {
    const { code: c2 } = await cl.exited;
    assert.notEqual(c2, 0);
    // One sentence an operator can act on, without a stack trace.
    const why = cl.lines.find((l) => /failed to start/.test(l.msg));
    assert.ok(why, cl.output());
    assert.equal(why.msg, `normal worker failed to start: cannot listen on 127.0.0.1:${taken}: the address is already in use (another mailsift or Rspamd running?)`);
    assert.equal(why.err, undefined, 'no stack trace in the line');
    assert.ok(!/\n\s+at /.test(cl.output()), 'no stack trace anywhere');
    assert.ok(cl.lines.some((l) => /before it was ready; stopping/.test(l.msg)), cl.output());
    // Modules off by default are one info line, not a warning each.
    assert.ok(!cl.lines.some((l) => l.msg === 'module disabled' && l.reason === 'config'), 'no warning per module off by configuration');
    const off = cl.lines.find((l) => /^modules off by configuration: /.test(l.msg));
    assert.ok(off && off.level === 30 && (off.modules as string[]).includes('greylist'), cl.output());
  } finally {
    cl.child.kill('SIGKILL');
    blocker.close();
    await removeConfDir(dir);
  }
});
