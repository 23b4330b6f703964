// Both worker types inside node:cluster: two processes share one scan port and one
// controller port, and each answers scans and /ping.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import cluster from 'node:cluster';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exchange, FIXTURES, parseReply, postV2 } from '../protocol/harness.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

describe('node:cluster', () => {
  it('two workers share the scan and controller ports', { timeout: 60_000 }, async () => {
    const [normalPort, controllerPort] = [await freePort(), await freePort()];
    cluster.setupPrimary({
      exec: new URL('./cluster-worker.ts', import.meta.url).pathname,
      execArgv: ['--import', 'tsx'],
      silent: false,
    });
    const env = { NORMAL_PORT: String(normalPort), CONTROLLER_PORT: String(controllerPort) };
    const workers = [cluster.fork(env), cluster.fork(env)];
    try {
      const ready = await Promise.all(workers.map((w) => new Promise<{ normal: number; controller: number; pid: number }>((resolve, reject) => {
        w.once('message', resolve);
        w.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
      })));
      for (const r of ready) {
        assert.equal(r.normal, normalPort);
        assert.equal(r.controller, controllerPort);
      }
      const msg = readFileSync(join(FIXTURES, 'messages', 'lf-simple.eml'));
      for (let i = 0; i < 4; i++) {
        const scan = parseReply((await exchange(normalPort, postV2('/checkv2', [], msg))).data);
        assert.equal((JSON.parse(scan.body.toString()) as Record<string, unknown>)['message-id'], 'fixture-lf-1@example.com');
        const ping = parseReply((await exchange(controllerPort, Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n'))).data);
        assert.equal(ping.body.toString(), 'pong\r\n');
      }
    } finally {
      await Promise.all(workers.map((w) => new Promise<void>((resolve) => {
        if (w.isDead()) return resolve();
        w.once('exit', () => resolve());
        w.send('stop');
        setTimeout(() => w.kill(), 5000).unref();
      })));
    }
  });
});
