// task.udp: the UDP exchange fuzzy_check sends its commands through. Real UDP on loopback: host
// names go through the worker's resolver, unanswered datagrams are sent again, stray replies are
// ignored, the awaited form needs `coro`, and the task deadline ends an exchange nobody answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import type { UdpResult } from '../../src/plugin-api/index.js';
import { netEngine, meta, MSG } from './helpers.js';

let dns: DnsTestServer;
/** Answers "<n>" with "re:<n>", after a stray "junk"; drops the first copy of "drop". */
let echo: dgram.Socket;
let echoPort = 0;
/** Receives and never answers; counts what arrives. */
let silent: dgram.Socket;
let silentPort = 0;
let silentSeen = 0;

before(async () => {
  dns = await startDnsServer({ zone: { 'udp.test': [{ type: 'A', data: '127.0.0.1' }] } });
  let dropped = false;
  echo = dgram.createSocket('udp4');
  echo.on('message', (msg, peer) => {
    const text = msg.toString();
    if (text === 'drop' && !dropped) {
      dropped = true;
      return;
    }
    echo.send('junk', peer.port, peer.address);
    echo.send(`re:${text}`, peer.port, peer.address);
  });
  await new Promise<void>((r) => echo.bind(0, '127.0.0.1', r));
  echoPort = (echo.address() as AddressInfo).port;
  silent = dgram.createSocket('udp4');
  silent.on('message', () => silentSeen++);
  await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
  silentPort = (silent.address() as AddressInfo).port;
});

after(async () => {
  echo.close();
  silent.close();
  await dns.close();
});

const byText = (datagrams: string[]) => (reply: Buffer): number | undefined => {
  const m = /^re:(.*)$/.exec(reply.toString());
  if (!m) return undefined;
  const i = datagrams.indexOf(m[1]!);
  return i < 0 ? undefined : i;
};

test('udp: a batch by host name, one datagram lost once and sent again, stray replies ignored', async () => {
  const got: Record<string, unknown> = {};
  const { engine, net } = await netEngine([
    {
      name: 'UDP_AWAIT',
      flags: ['coro'],
      async check(task) {
        const datagrams = ['a', 'drop', 'c'];
        got.batch = await task.udp.exchange({ host: 'udp.test', port: echoPort, datagrams: datagrams.map((d) => Buffer.from(d)), match: byText(datagrams), timeout: 0.2, retransmits: 2 });
        got.unresolved = await task.udp.exchange({ host: 'nowhere.test', port: echoPort, datagrams: [Buffer.from('x')], match: () => 0 });
      },
    },
    {
      name: 'UDP_NO_CORO',
      check(task) {
        try {
          void task.udp.exchange({ host: '127.0.0.1', port: echoPort, datagrams: [Buffer.from('x')], match: () => 0 });
          got.noCoro = 'allowed';
        } catch (e) {
          got.noCoro = (e as { code?: string }).code;
        }
      },
    },
  ], dns.address);
  try {
    await engine.scan(MSG, meta());
    const batch = got.batch as UdpResult;
    assert.equal(batch.error, undefined);
    assert.equal(batch.answered, 3);
    assert.deepEqual(batch.replies.map((r) => r?.toString()), ['re:a', 're:drop', 're:c']);
    const unresolved = got.unresolved as UdpResult;
    assert.equal(unresolved.answered, 0);
    assert.match(unresolved.error ?? '', /^unable to resolve host/);
    assert.equal(got.noCoro, 'NET_CORO_REQUIRED');
  } finally {
    await net.close();
  }
});

test('udp: the task deadline ends an exchange nobody answers, before its own attempts run out', async () => {
  const got: Record<string, unknown> = {};
  silentSeen = 0;
  const { engine, net } = await netEngine([
    {
      name: 'UDP_SILENT',
      flags: ['coro'],
      async check(task) {
        got.res = await task.udp.exchange({ host: '127.0.0.1', port: silentPort, datagrams: [Buffer.from('q')], match: () => 0, timeout: 1, retransmits: 5 });
      },
    },
  ], dns.address, { taskTimeout: 0.3 });
  try {
    const t0 = performance.now();
    await engine.scan(MSG, meta());
    const took = performance.now() - t0;
    // Own attempts would take 6 s; the 0.3 s deadline ends the scan (and aborts the socket).
    assert.ok(took < 2_000, `scan took ${took} ms`);
    assert.equal(silentSeen, 1, 'one datagram sent before the deadline, no retransmit after it');
  } finally {
    await net.close();
  }
});
