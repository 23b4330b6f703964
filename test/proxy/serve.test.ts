// The proxy worker under the real `mailsift serve`: started by the supervisor like the other
// roles (count processes, every bind: TCP and a unix socket), relaying to the normal workers of
// the same server, restarted when it dies, gone cleanly on SIGTERM; `--single` with self-scan;
// `configtest` reporting proxy mistakes with file:line:col.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli, type LogLine } from '../cli/run-cli.js';
import { MESSAGES } from './harness.js';

const isProxyListen = (l: LogLine): boolean => l.worker === 'proxy' && typeof l.address === 'string' && /^listening on /.test(l.msg);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** POST /checkv2 over TCP or a unix socket; resolves with the verdict's action. */
function scanVia(where: { port: number } | { socketPath: string }, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const target = 'port' in where ? { host: '127.0.0.1', port: where.port } : { socketPath: where.socketPath };
    const req = request({ ...target, method: 'POST', path: '/checkv2', agent: false, headers: { 'Content-Length': body.length } }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => (data += c));
      res.on('end', () => {
        try {
          resolve(String((JSON.parse(data) as { action?: unknown }).action));
        } catch {
          reject(new Error(`HTTP ${res.statusCode}: ${data}`));
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('serve: two proxy workers on a TCP port and a unix socket relay to the normal worker; a dead one is replaced; SIGTERM removes the socket', async () => {
  const normalPort = await freePort();
  const dir = await makeConfDir({});
  const sock = join(dir, 'proxy.sock');
  await import('node:fs/promises').then((f) =>
    f.writeFile(
      join(dir, 'mailsift.yaml'),
      [
        'workers:',
        `  normal: { bind: "127.0.0.1:${normalPort}", count: 1 }`,
        '  controller: { enabled: false }',
        '  watchdog_timeout: 4s',
        '  proxy:',
        '    enabled: true',
        '    count: 2',
        `    bind: ["127.0.0.1:0", "${sock}"]`,
        '    upstreams:',
        `      local: { hosts: "127.0.0.1:${normalPort}" }`,
        '',
      ].join('\n'),
    ),
  );
  const srv = runCli(['serve', '-c', dir]);
  try {
    const started = await srv.waitFor((l) => /^started 1 normal worker\(s\), 2 proxy worker\(s\)/.test(l.msg), 'the supervisor to report its workers', 90_000);
    assert.equal(started.proxy, 2);
    const listens = srv.lines.filter(isProxyListen);
    const tcp = listens.filter((l) => !String(l.address).startsWith('/'));
    const unix = listens.filter((l) => l.address === sock);
    assert.equal(tcp.length, 2, 'each proxy process listens on the TCP bind');
    assert.equal(unix.length, 2, 'and on the socket');
    assert.notEqual(tcp[0]!.pid, tcp[1]!.pid);
    assert.equal(tcp[0]!.address, tcp[1]!.address, 'one shared TCP port (picked by the supervisor for port 0)');
    const port = Number(String(tcp[0]!.address).split(':').pop());
    assert.notEqual(port, normalPort);
    const gtube = await readFile(`${MESSAGES}/gtube.eml`);
    assert.equal(await scanVia({ port }, gtube), 'reject');
    assert.equal(await scanVia({ socketPath: sock }, gtube), 'reject');

    const victim = tcp[0]!.pid;
    process.kill(victim, 'SIGKILL');
    await srv.waitFor((l) => l.workerPid === victim && /proxy worker \d+ killed by SIGKILL; restarting/.test(l.msg), 'the supervisor to restart the proxy');
    const replacement = await srv.waitFor((l) => isProxyListen(l) && l.pid !== tcp[0]!.pid && l.pid !== tcp[1]!.pid, 'a replacement proxy worker', 60_000);
    for (let i = 0; i < 3; i++) assert.equal(await scanVia({ port }, gtube), 'reject');

    // A proxy whose event loop stalls is found by the watchdog like any other worker.
    process.kill(replacement.pid, 'SIGSTOP');
    const stalled = await srv.waitFor((l) => l.workerPid === replacement.pid && /stalled/.test(l.msg), 'the watchdog to kill the stalled proxy', 60_000);
    assert.match(stalled.msg, /^proxy worker \d+ stalled: no heartbeat for [\d.]+ s \(workers.watchdog_timeout 4 s\); killed to be replaced/);
    await srv.waitFor((l) => isProxyListen(l) && ![tcp[0]!.pid, tcp[1]!.pid, replacement.pid].includes(l.pid), 'a proxy worker after the stalled one', 60_000);
    assert.equal(await scanVia({ socketPath: sock }, gtube), 'reject');

    srv.child.kill('SIGTERM');
    const { code } = await srv.exited;
    assert.equal(code, 0, srv.output());
    assert.equal(existsSync(sock), false, 'the socket file is removed on shutdown');
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});

test('serve --single: a self-scanning proxy answers with no upstream; a stale socket file is replaced', async () => {
  const dir = await makeConfDir({});
  const sock = join(dir, 'p.sock');
  // A socket file nobody listens on, as a previous run killed with SIGKILL leaves it.
  const holder = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(sock)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
  holder.kill('SIGKILL');
  await new Promise((resolve) => holder.once('exit', resolve));
  assert.ok(existsSync(sock));
  await import('node:fs/promises').then((f) =>
    f.writeFile(join(dir, 'mailsift.yaml'), ['workers:', '  normal: { bind: "127.0.0.1:0" }', '  controller: { enabled: false }', `  proxy: { enabled: true, self_scan: true, bind: ["127.0.0.1:0", "${sock}"] }`, ''].join('\n')),
  );
  const srv = runCli(['serve', '--single', '-c', dir]);
  try {
    await srv.waitFor((l) => isProxyListen(l) && l.address === sock, 'the proxy on its socket', 90_000);
    const tcp = await srv.waitFor((l) => isProxyListen(l) && l.address !== sock, 'the proxy TCP listener');
    const gtube = await readFile(`${MESSAGES}/gtube.eml`);
    assert.equal(await scanVia({ port: Number(String(tcp.address).split(':').pop()) }, gtube), 'reject');
    assert.equal(await scanVia({ socketPath: sock }, gtube), 'reject');
    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0, srv.output());
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});

test('configtest: proxy mistakes are reported at their key with file:line:col', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': ['workers:', '  proxy:', '    enabled: true', '    bind: ["127.0.0.1:11332", "relative.sock"]', '    upstreams:', '      scan:', '        hosts: "round-robin:10.0.0.1:11333:2, 10.0.0.2:99999"', '        compresion: true', ''].join('\n'),
    'local.d/mailsift.yaml': ['workers:', '  proxy:', '    upstreams:', '      other: { hosts: "" }', ''].join('\n'),
  });
  try {
    const run = runCli(['configtest', '-c', dir]);
    const { code } = await run.exited;
    const out = run.output();
    assert.equal(code, 1, out);
    assert.match(out, /mailsift\.yaml:4:31: workers\.proxy\.bind\[1\]: expected an address "host:port" .* or an absolute unix socket path/);
    assert.match(out, /mailsift\.yaml:7:16: workers\.proxy\.upstreams\.scan\.hosts: expected an upstream list .*"10\.0\.0\.2:99999": port 99999 is outside 1\.\.65535/);
    assert.match(out, /mailsift\.yaml:8:9: workers\.proxy\.upstreams\.scan\.compresion: expected a known key \(did you mean "compression"\?\)/);
    assert.match(out, /local\.d\/mailsift\.yaml:4:23: workers\.proxy\.upstreams\.other\.hosts: expected an upstream list .*no host in the list/);
  } finally {
    await removeConfDir(dir);
  }

  const dir2 = await makeConfDir({
    'mailsift.yaml': ['workers:', '  proxy:', '    enabled: true', '    milter: true', '    default_upstream: nowhere', '    upstreams:', '      a: { hosts: "10.0.0.1", default: true }', '      b: { hosts: "10.0.0.2", default: true }', '      c: {}', ''].join('\n'),
  });
  try {
    const run = runCli(['configtest', '-c', dir2]);
    const { code } = await run.exited;
    const out = run.output();
    assert.equal(code, 1, out);
    assert.match(out, /mailsift\.yaml:5:23: workers\.proxy\.default_upstream: expected the name of a group under upstreams \("a", "b", "c"\), found "nowhere"/);
    assert.match(out, /mailsift\.yaml:8:40: workers\.proxy\.upstreams\.b\.default: expected one default group \("a" is already default\)/);
    assert.match(out, /mailsift\.yaml:9:10: workers\.proxy\.upstreams\.c: expected a map with `hosts` \(or `self_scan: true`\)/);
  } finally {
    await removeConfDir(dir2);
  }
});
