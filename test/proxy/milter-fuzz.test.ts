// Milter front end bugs the fuzzer (npm run fuzz -- --surface milter) found, each on the real
// proxy worker in milter mode in front of a real scanner, with an MTA-side client over a socket.
//
// 1. Stopping the worker while a message was being scanned closed the MTA's socket under the
//    session: the verdict's write failed ("write after end", a warn line per session) and the
//    MTA lost a verdict the scanner had given. Now the session delivers it, then closes; an
//    idle session closes at once.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startProxy, startScanner, type TestScanner } from './harness.js';
import { describe, frame, macros, optneg, TestMilterClient, transaction } from './milter-harness.js';

const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
/** How long the delaying relay holds the scanner's reply: the scan is in flight that long. */
const REPLY_DELAY_MS = 800;

let scanner: TestScanner;
before(async () => {
  scanner = await startScanner();
});
after(async () => {
  await scanner.close();
});

/** A TCP relay to `target` that passes requests at once and holds every reply chunk for `delayMs`. */
async function startDelayingRelay(target: number, delayMs: number): Promise<{ address: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: target });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.on('data', (d: Buffer) => setTimeout(() => client.writable && client.write(d), delayMs));
    upstream.on('end', () => setTimeout(() => client.end(), delayMs));
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** OPTNEG, CONNECT and HELO as Postfix sends them; returns after the OPTNEG reply. */
async function openSession(port: number): Promise<TestMilterClient> {
  const client = await TestMilterClient.connect(port);
  client.send(optneg());
  const neg = await client.readFrame();
  assert.ok(neg !== 'eof' && neg.cmd === 'O', 'OPTNEG reply');
  const p = Buffer.alloc(2);
  p.writeUInt16BE(41234, 0);
  client.send(macros('C', [['j', 'mx.test'], ['{daemon_name}', 'smtpd']]));
  client.send(frame('C', Buffer.concat([Buffer.from('mail.example.org\x004'), p, Buffer.from('192.0.2.10\0')])));
  client.send(frame('H', 'mail.example.org\0'));
  return client;
}

test('stopping the worker: a session being scanned gets its verdict, then the close; an idle one closes at once', async () => {
  const relay = await startDelayingRelay(scanner.port, REPLY_DELAY_MS);
  const proxy = await startProxy({ milter: true, upstreams: { local: { hosts: relay.address, default: true } } });
  let closing: Promise<void> | undefined;
  const busy = await openSession(proxy.port);
  const idle = await openSession(proxy.port);
  try {
    for (const f of transaction('Stopping', `Body\r\n${GTUBE}\r\n`)) busy.send(f);
    // The scan is in flight (the relay holds its reply): stop the worker now.
    await new Promise((r) => setTimeout(r, REPLY_DELAY_MS / 4));
    closing = proxy.close();
    const t0 = Date.now();
    assert.equal(await idle.waitEnd(2_000), true, 'the idle session is closed at once');
    assert.ok(Date.now() - t0 < REPLY_DELAY_MS, 'before the busy session has its verdict');
    const verdict = await busy.readVerdict(10_000);
    assert.equal(describe(verdict[verdict.length - 1]!), 'y 554 5.7.1 Gtube pattern\\0', verdict.map(describe).join(' | '));
    assert.equal(await busy.waitEnd(5_000), true, 'then the busy session is closed too');
    await closing;
    const complaints = proxy.logs.filter((l) => l.level >= 40);
    assert.deepEqual(complaints.map((l) => `${l.msg} ${String(l.error ?? '')}`), [], 'no warning while stopping');
  } finally {
    busy.close();
    idle.close();
    await (closing ?? proxy.close());
    await relay.close();
  }
});
