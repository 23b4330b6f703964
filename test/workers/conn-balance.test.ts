// Kept-alive client connections opened in one burst end up spread over both scan workers of a
// real `mailsift serve --workers 2` (src/workers/conn-balance.ts). Without the balancing, the
// worker that wakes first often accepts the whole burst and keeps it: the other one idles.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { config, HAM, startServer, stopServer } from '../faults/worker-harness.js';
import type { LogLine } from '../cli/run-cli.js';
import { ConnectionShare, SHED_SPACING_MS } from '../../src/workers/conn-balance.js';

const CLIENTS = 8;
const SCANS_PER_ROUND = 600;
const ROUNDS = 8;

/** One kept-alive client: sends a scan, reads the reply, reconnects when the server closes. */
class KeepAliveClient {
  #sock: net.Socket | undefined;
  #buf = Buffer.alloc(0);
  #want: ((r: { close: boolean }) => void) | undefined;
  #fail: ((e: Error) => void) | undefined;
  reconnects = 0;

  constructor(readonly port: number) {}

  scan(): Promise<{ close: boolean }> {
    const sock = this.#sock ?? this.#connect();
    return new Promise((resolve, reject) => {
      this.#want = resolve;
      this.#fail = reject;
      sock.write(Buffer.concat([Buffer.from(`POST /checkv2 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Length: ${HAM.length}\r\n\r\n`), HAM]));
    });
  }

  close(): void {
    this.#sock?.destroy();
  }

  #connect(): net.Socket {
    const sock = net.connect({ host: '127.0.0.1', port: this.port });
    this.#sock = sock;
    this.#buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => this.#onData(sock, d));
    sock.on('error', (e) => this.#fail?.(e));
    return sock;
  }

  #onData(sock: net.Socket, d: Buffer): void {
    this.#buf = Buffer.concat([this.#buf, d]);
    const end = this.#buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.#buf.subarray(0, end).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
    if (this.#buf.length < end + 4 + length) return;
    assert.match(head, /^HTTP\/1\.1 200 /);
    this.#buf = Buffer.alloc(0);
    const close = /\r\nconnection:\s*close/i.test(head);
    if (close) {
      sock.destroy();
      this.#sock = undefined;
      this.reconnects++;
    }
    this.#want?.({ close });
  }
}

describe('connection balancing over the scan workers', () => {
  it('spreads each burst of kept-alive clients over both workers', { timeout: 180_000 }, async () => {
    const { srv, dir, scanPort, normalPids } = await startServer({ 'mailsift.yaml': config() }, 2);
    try {
      assert.equal(normalPids.length, 2);
      const totals: number[] = [];
      // How a burst falls is chance (without the balancing, 1 of 3 single bursts went all to one
      // worker here, and bench/cluster/sched-load.ts saw 0/8 and 2/6), so several bursts, each
      // of which must end up shared.
      for (let round = 0; round < ROUNDS; round++) {
        const from = srv.lines.length;
        const clients = Array.from({ length: CLIENTS }, () => new KeepAliveClient(scanPort));
        let next = 0;
        // Every client connects at once (the burst), then scans until the round's scans are done.
        await Promise.all(
          clients.map(async (c) => {
            while (next < SCANS_PER_ROUND) {
              next++;
              await c.scan();
            }
          }),
        );
        for (const c of clients) c.close();
        const counts = await scansPerWorker(srv.lines, from, normalPids, SCANS_PER_ROUND);
        counts.forEach((n, i) => (totals[i] = (totals[i] ?? 0) + n));
        // An even split is half each. Without the balancing a burst is often split 0/8 or 1/7
        // and stays so. Even shared connections do not give an even count on a loaded machine
        // (a worker the kernel runs less scans less: CI saw 174/426 with the balancing at work),
        // so one round must only be shared, and all rounds together near even.
        assert.ok(Math.min(...counts) >= SCANS_PER_ROUND * 0.2, `round ${round}: scans per worker ${counts.join('/')}`);
        // Balancing hands connections back only while they are uneven, not on every reply.
        const reconnects = clients.reduce((n, c) => n + c.reconnects, 0);
        assert.ok(reconnects < SCANS_PER_ROUND / 4, `round ${round}: ${reconnects} reconnects`);
        await new Promise((r) => setTimeout(r, 300)); // the closed connections reach the counts
      }
      assert.ok(Math.min(...totals) >= SCANS_PER_ROUND * ROUNDS * 0.35, `scans per worker over all rounds ${totals.join('/')}`);
    } finally {
      await stopServer(srv, dir);
    }
  });
});

/** Scan log lines per worker since `from`, once all `expected` have arrived. */
async function scansPerWorker(lines: readonly LogLine[], from: number, pids: number[], expected: number): Promise<number[]> {
  const end = Date.now() + 10_000;
  for (;;) {
    const counts = pids.map((p) => lines.slice(from).filter((l) => l.tag === 'task' && l.msg === 'scan' && l.pid === p).length);
    if (counts.reduce((a, b) => a + b, 0) >= expected || Date.now() > end) return counts;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('ConnectionShare: when a scan worker hands a connection back', () => {
  it('sheds only above its share of the total, counting itself as it is now, at most once per spacing', async () => {
    let open = 8;
    const sent: number[] = [];
    const share = new ConnectionShare(() => open, (m) => sent.push(m.open));
    try {
      assert.deepEqual(sent, [8], 'reports its count at once');
      assert.equal(share.shed(8), false, 'no total yet: one worker for all it knows');
      // The supervisor's total still counts this worker's reported 8 and the other worker's 0.
      process.emit('message', { type: 'mailsift:conns-total', total: 8, workers: 2 }, undefined);
      assert.equal(share.shed(8), true, '8 of 8 against a share of 4');
      assert.equal(share.shed(7), false, 'the next one waits out the spacing');
      await new Promise((r) => setTimeout(r, SHED_SPACING_MS + 10));
      assert.equal(share.shed(5), true, '5 against a share of ceil((0 + 5) / 2) = 3');
      await new Promise((r) => setTimeout(r, SHED_SPACING_MS + 10));
      assert.equal(share.shed(4), true);
      await new Promise((r) => setTimeout(r, SHED_SPACING_MS + 10));
      // The other worker took the 4 handed back: total 8 with this worker reported at 4.
      open = 4;
      await new Promise((r) => setTimeout(r, 60)); // the next report goes out
      assert.equal(sent.at(-1), 4);
      process.emit('message', { type: 'mailsift:conns-total', total: 8, workers: 2 }, undefined);
      assert.equal(share.shed(4), false, '4 and 4: balanced');
      assert.equal(share.shed(5), false, '5 against 4 others: 9 shared by two, ceil(9 / 2) = 5');
      assert.equal(share.shed(6), true, '6 against 4 others: above ceil(10 / 2) = 5');
      // Malformed totals are ignored, never trusted.
      process.emit('message', { type: 'mailsift:conns-total', total: -1, workers: 0 }, undefined);
      await new Promise((r) => setTimeout(r, SHED_SPACING_MS + 10));
      assert.equal(share.shed(4), false);
    } finally {
      share.stop();
    }
  });
});
