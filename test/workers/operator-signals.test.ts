// SIGUSR1 and SIGUSR2 sent to a real `mailsift serve`, as Rspamd's logrotate file and operators
// send them (src/workers/operator-signals.ts): no process may open Node's inspector or end, the
// supervisor passes SIGUSR1 on to its workers, and scans go on.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { config, GTUBE, send, startServer, stopServer } from '../faults/worker-harness.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('operator signals', () => {
  it('SIGUSR1 is passed on and opens no inspector; SIGUSR2 ends no process', { timeout: 120_000 }, async () => {
    const st = await startServer({ 'mailsift.yaml': config() }, 1);
    try {
      const supervisor = st.srv.child.pid!;
      const pids = [supervisor, ...st.normalPids, st.controllerPid];
      const said = (pid: number, re: RegExp): boolean => st.srv.lines.some((l) => l.pid === pid && re.test(l.msg));

      // Only the supervisor is signalled: the workers hear it from the supervisor.
      process.kill(supervisor, 'SIGUSR1');
      for (const pid of pids) await st.srv.waitFor((l) => l.pid === pid && /^SIGUSR1: /.test(l.msg), `SIGUSR1 noted by ${pid}`, 10_000);

      for (const pid of pids) process.kill(pid, 'SIGUSR2');
      for (const pid of pids) await st.srv.waitFor((l) => l.pid === pid && /^SIGUSR2 ignored/.test(l.msg), `SIGUSR2 noted by ${pid}`, 10_000);

      // Each worker directly too, as `systemctl kill` reaches every process of the unit.
      for (const pid of [...st.normalPids, st.controllerPid]) process.kill(pid, 'SIGUSR1');
      await new Promise((r) => setTimeout(r, 500));

      for (const pid of pids) assert.ok(alive(pid), `process ${pid} still runs`);
      assert.doesNotMatch(st.srv.output(), /Debugger listening/, 'no process opened the inspector');
      assert.ok(!st.srv.lines.some((l) => /; restarting in \d+ ms$|before it was ready/.test(l.msg)), 'no worker ended');
      assert.ok(said(supervisor, /^SIGUSR1: /));

      const reply = await send(st.scanPort, 'POST', '/checkv2', {}, GTUBE);
      assert.equal(reply.status, 200);
      assert.equal((JSON.parse(reply.body) as { action: string }).action, 'reject');
    } finally {
      await stopServer(st.srv, st.dir);
    }
  });
});
