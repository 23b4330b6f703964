// Milter mode end to end under the real `mailsift serve`: a proxy worker with `milter: true` on a
// TCP port and a unix socket, in front of the normal worker of the same server (the upstream),
// and a `--single` self-scanning variant. An MTA-side milter client (milter-harness.ts) sends a
// session of several messages as Postfix does: GTUBE gets the reject frame with the scanner's
// SMTP text, ham is accepted with the milter_headers add-header frames, and nothing of one
// message shows in the next.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli, type LogLine, type Running } from '../cli/run-cli.js';
import { describe, mtaSession, TestMilterClient, transaction, type Frame } from './milter-harness.js';

const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
const MILTER_HEADERS = 'use: [x-spamd-result, x-rspamd-action]\nskip_local: false\nskip_authenticated: false\n';

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

/** Names of the headers a verdict adds (SMFIR_ADDHEADER `h`, SMFIR_INSHEADER `i`). */
function addedHeaders(frames: Frame[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of frames) {
    if (f.cmd !== 'h' && f.cmd !== 'i') continue;
    const d = f.cmd === 'i' ? f.data.subarray(4) : f.data;
    const [name, value] = d.toString('utf8').split('\0');
    out.set(name!, value!);
  }
  return out;
}

const last = (frames: Frame[]): Frame => frames[frames.length - 1]!;

/** GTUBE, ham, GTUBE, ham on one connection: each verdict its own, nothing carried over. */
async function checkSession(where: { host: string; port: number } | { path: string }): Promise<void> {
  const client = await TestMilterClient.connectTo(where);
  try {
    const verdicts = await mtaSession(client, [
      transaction('Test spam', `Body\r\n${GTUBE}\r\n`),
      transaction('Lunch', 'Shall we meet at noon?\r\n'),
      transaction('Test spam again', `${GTUBE}\r\n`),
      transaction('Dinner', 'Or rather in the evening?\r\n'),
    ]);
    const label = JSON.stringify(where);
    for (const i of [0, 2]) {
      const v = verdicts[i]!;
      assert.equal(describe(last(v)), 'y 554 5.7.1 Gtube pattern\\0', `${label} message ${i + 1}: ${v.map(describe).join(' | ')}`);
    }
    for (const i of [1, 3]) {
      const v = verdicts[i]!;
      assert.equal(last(v).cmd, 'a', `${label} message ${i + 1} accepted: ${v.map(describe).join(' | ')}`);
      const added = addedHeaders(v);
      assert.equal(added.get('X-Rspamd-Action'), 'no action', `${label}: ${[...added.keys()].join(', ')}`);
      assert.match(added.get('X-Spamd-Result') ?? '', /^default: False \[-?\d+\.\d+ \/ 15\.00\]/);
      assert.doesNotMatch(added.get('X-Spamd-Result') ?? '', /GTUBE/, 'nothing of the GTUBE message before it');
      assert.equal(v.some((f) => f.cmd === 'y'), false);
    }
  } finally {
    client.close();
  }
}

async function stop(srv: Running): Promise<void> {
  srv.child.kill('SIGTERM');
  const { code } = await srv.exited;
  assert.equal(code, 0, srv.output());
}

test('serve: a milter proxy on TCP and a unix socket in front of the normal worker', async () => {
  const normalPort = await freePort();
  const dir = await makeConfDir({ 'local.d/milter_headers.yaml': MILTER_HEADERS });
  const sock = join(dir, 'milter.sock');
  await writeFile(
    join(dir, 'mailsift.yaml'),
    [
      'workers:',
      `  normal: { bind: "127.0.0.1:${normalPort}", count: 1 }`,
      '  controller: { enabled: false }',
      '  proxy:',
      '    enabled: true',
      '    milter: true',
      '    count: 1',
      `    bind: ["127.0.0.1:0", "${sock}"]`,
      '    upstreams:',
      `      local: { hosts: "127.0.0.1:${normalPort}" }`,
      '',
    ].join('\n'),
  );
  const srv = runCli(['serve', '-c', dir]);
  try {
    await srv.waitFor((l) => /^started 1 normal worker\(s\), 1 proxy worker\(s\)/.test(l.msg), 'the supervisor to report its workers', 90_000);
    const tcp = await srv.waitFor((l) => isProxyListen(l) && l.address !== sock, 'the milter TCP listener');
    await srv.waitFor((l) => isProxyListen(l) && l.address === sock, 'the milter socket');
    assert.equal(tcp.mode, 'milter');
    await checkSession({ host: '127.0.0.1', port: Number(String(tcp.address).split(':').pop()) });
    await checkSession({ path: sock });
    await stop(srv);
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});

test('serve --single: a self-scanning milter proxy (Postfix → mailsift, nothing else)', async () => {
  const dir = await makeConfDir({ 'local.d/milter_headers.yaml': MILTER_HEADERS });
  const sock = join(dir, 'milter.sock');
  await writeFile(
    join(dir, 'mailsift.yaml'),
    ['workers:', '  normal: { bind: "127.0.0.1:0" }', '  controller: { enabled: false }', `  proxy: { enabled: true, milter: true, self_scan: true, bind: ["127.0.0.1:0", "${sock}"] }`, ''].join('\n'),
  );
  const srv = runCli(['serve', '--single', '-c', dir]);
  try {
    await srv.waitFor((l) => isProxyListen(l) && l.address === sock, 'the milter socket', 90_000);
    const tcp = await srv.waitFor((l) => isProxyListen(l) && l.address !== sock, 'the milter TCP listener');
    await checkSession({ path: sock });
    await checkSession({ host: '127.0.0.1', port: Number(String(tcp.address).split(':').pop()) });
    await stop(srv);
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});
