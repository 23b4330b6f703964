// Upstream faults (proxy-milter.md §2.2, §3.5, §3.11): a host that refuses, one that hangs, one
// that answers 500, one that resets, one that answers garbage, next to a real scanner. Retries
// land on the other hosts, no client sees an error while one healthy host remains, failed hosts
// are taken out of rotation and come back after their window, and when nothing can answer the
// client gets §3.11's status lines. The failure window runs on a clock the test moves.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import { checkv2, closedPort, MESSAGES, rawExchange, startHangingUpstream, startProxy, startScanner, startStatusUpstream, type FakeUpstream, type TestScanner } from './harness.js';

let gtube: Buffer;
let good: TestScanner;
let hang: FakeUpstream;
let five: FakeUpstream;
let refused: number;
const toClose: Array<{ close(): Promise<void> }> = [];

before(async () => {
  gtube = await readFile(`${MESSAGES}/gtube.eml`);
  good = await startScanner();
  hang = await startHangingUpstream();
  five = await startStatusUpstream(500);
  refused = await closedPort();
  toClose.push(good, hang, five);
});
after(async () => {
  for (const c of toClose.reverse()) await c.close();
});

const action = (body: Buffer): unknown => (JSON.parse(body.toString('utf8')) as { action?: unknown }).action;

/** A server that accepts and resets at once, or answers bytes that are not HTTP. */
async function startRudeUpstream(kind: 'reset' | 'garbage'): Promise<FakeUpstream> {
  const fake = { hits: 0 } as FakeUpstream;
  const s = net.createServer((sock) => {
    fake.hits++;
    sock.on('error', () => undefined);
    if (kind === 'reset') sock.resetAndDestroy();
    else sock.once('data', () => sock.end('HELLO THERE\r\n\r\n'));
  });
  await new Promise<void>((resolve) => s.listen({ host: '127.0.0.1', port: 0 }, resolve));
  fake.port = (s.address() as net.AddressInfo).port;
  fake.address = `127.0.0.1:${fake.port}`;
  fake.close = () => new Promise<void>((resolve) => s.close(() => resolve()));
  return fake;
}

describe('one healthy host among failing ones', () => {
  test('every client gets the scanner verdict; the failing hosts go down, stay out, and come back after their window', async () => {
    let clock = 1_000_000;
    const p = await startProxy(
      {
        timeout: 1,
        max_retries: 4,
        max_errors: 1, // the second failure inside the window takes a host out
        error_time: 600,
        revive_time: 10,
        upstreams: { pool: { hosts: `round-robin:127.0.0.1:${refused}, ${hang.address}, ${five.address}, ${good.address}` } },
      },
      { now: () => clock, random: () => 0 },
    );
    try {
      // Sequential and concurrent sessions while the three bad hosts are still in rotation.
      for (let i = 0; i < 3; i++) {
        const r = await rawExchange(p.port, checkv2(gtube));
        assert.equal(r.status, 200, r.raw.toString());
        assert.equal(action(r.body), 'reject');
      }
      const burst = await Promise.all(Array.from({ length: 6 }, () => rawExchange(p.port, checkv2(gtube))));
      for (const r of burst) assert.equal(r.status, 200, r.raw.toString());
      for (const name of [`127.0.0.1:${refused}`, hang.address, five.address]) {
        assert.ok(p.logs.some((l) => l.msg.startsWith(`upstream ${name} of group pool is down`)), `${name} marked down:\n${p.logs.map((l) => l.msg).join('\n')}`);
      }
      assert.ok(!p.logs.some((l) => l.msg.startsWith(`upstream ${good.address} of group pool is down`)));
      // Down: no attempt reaches them while the clock stands still.
      const [h, f, g] = [hang.hits, five.hits, good.seen.length];
      for (let i = 0; i < 4; i++) assert.equal((await rawExchange(p.port, checkv2(gtube))).status, 200);
      assert.equal(hang.hits, h);
      assert.equal(five.hits, f);
      assert.equal(good.seen.length, g + 4);
      // After revive_time (jitter 0 here) they are back in rotation and tried again.
      clock += 10_001;
      for (let i = 0; i < 4; i++) assert.equal((await rawExchange(p.port, checkv2(gtube))).status, 200);
      assert.ok(p.logs.some((l) => l.msg === `upstream ${five.address} of group pool is back in rotation`));
      assert.ok(five.hits > f, 'the revived 500 host is tried again');
      assert.ok(hang.hits > h, 'the revived hanging host is tried again');
    } finally {
      await p.close();
    }
  });

  test('retries go to a different host than the one that just failed', async () => {
    // master-slave: the refusing host is the master, picked first every time (max_errors keeps it
    // in rotation), so every session fails once and must retry on the other host.
    const p = await startProxy({ timeout: 2, max_retries: 2, max_errors: 100, upstreams: { pair: { hosts: `127.0.0.1:${refused} ${good.address}`, rotation: 'master-slave' } } });
    try {
      for (let i = 0; i < 5; i++) {
        const r = await rawExchange(p.port, checkv2(gtube));
        assert.equal(r.status, 200, r.raw.toString());
      }
      assert.equal(p.logs.filter((l) => l.msg.startsWith(`upstream 127.0.0.1:${refused} of group pair failed`)).length, 5);
    } finally {
      await p.close();
    }
  });

  test('a 500 that every host gives is relayed as it is once no other host is left', async () => {
    const five2 = await startStatusUpstream(500);
    const p = await startProxy({ max_retries: 5, upstreams: { bad: { hosts: [five.address, five2.address] } } });
    try {
      const [f1, f2] = [five.hits, five2.hits];
      const r = await rawExchange(p.port, checkv2(gtube));
      assert.equal(r.status, 500);
      assert.match(r.body.toString(), /status 500 from a fake/);
      assert.equal(five.hits - f1 + (five2.hits - f2), 2, 'each host once: a 5xx is not retried on a host that gave one');
    } finally {
      await p.close();
      await five2.close();
    }
  });
});

describe('nothing can answer: the errors of §3.11', () => {
  const cases: Array<[string, () => Promise<string[]>, RegExp]> = [
    ['every host refuses', async () => [`127.0.0.1:${refused}`, `127.0.0.1:${await closedPort()}`], /^HTTP\/1\.1 502 Gateway connection refused$/],
    ['every host hangs', async () => [hang.address], /^HTTP\/1\.1 504 Gateway timeout$/],
    [
      'every host resets',
      async () => {
        const r = await startRudeUpstream('reset');
        toClose.push(r);
        return [r.address];
      },
      /^HTTP\/1\.1 502 Gateway connection reset$/,
    ],
    [
      'every host answers garbage',
      async () => {
        const r = await startRudeUpstream('garbage');
        toClose.push(r);
        return [r.address];
      },
      /^HTTP\/1\.1 502 Unknown gateway error: bad reply from 127\.0\.0\.1:\d+: not an HTTP reply/,
    ],
  ];
  for (const [name, hosts, status] of cases) {
    test(name, async () => {
      const p = await startProxy({ timeout: 1, max_retries: 2, upstreams: { g: { hosts: (await hosts()).join(',') } } });
      try {
        const r = await rawExchange(p.port, checkv2(gtube));
        assert.match(r.statusLine, status);
        const body = JSON.parse(r.body.toString()) as { error?: string };
        assert.equal(typeof body.error, 'string');
        // The proxy keeps serving: a ping through the same dead group gets the same answer.
        const again = await rawExchange(p.port, 'GET /ping HTTP/1.1\r\n\r\n');
        assert.match(again.statusLine, status);
      } finally {
        await p.close();
      }
    });
  }

  test('a legacy client gets the failure as its dialect error line', async () => {
    const p = await startProxy({ max_retries: 1, upstreams: { g: { hosts: `127.0.0.1:${refused}` } } });
    try {
      const r = await rawExchange(p.port, Buffer.concat([Buffer.from(`CHECK RSPAMC/1.3\r\nContent-length: ${gtube.length}\r\n\r\n`), gtube]), { untilClose: true });
      // EX_TEMPFAIL: the client may try again (src/protocol/legacy-command.ts).
      assert.equal(r.raw.toString(), 'RSPAMD/1.3 75 Gateway connection refused\r\n');
    } finally {
      await p.close();
    }
  });
});
