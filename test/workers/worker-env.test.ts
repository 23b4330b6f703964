// What the supervisor of a real `mailsift serve` hands each worker at the fork, read back from
// /proc: the role's V8 flags (src/workers/v8-tuning.ts ROLE_V8) and glibc's arena cap, which
// an operator's own MALLOC_ARENA_MAX overrides.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { config, startServer, stopServer } from '../faults/worker-harness.js';

function procStrings(pid: number, file: 'environ' | 'cmdline'): string[] {
  return readFileSync(`/proc/${pid}/${file}`, 'latin1').split('\0').filter(Boolean);
}

/** The last value of a repeated node flag wins; the supervisor's own flags come first. */
function lastFlag(args: string[], name: string): string | undefined {
  return args.filter((a) => a.startsWith(`${name}=`)).at(-1)?.slice(name.length + 1);
}

async function withServer(env: Record<string, string | undefined>, check: (normalPids: number[], controllerPid: number) => void): Promise<void> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  let started: Awaited<ReturnType<typeof startServer>>;
  try {
    // runCli copies process.env when it spawns the supervisor.
    started = await startServer({ 'mailsift.yaml': config() }, 1);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  try {
    check(started.normalPids, started.controllerPid);
  } finally {
    await stopServer(started.srv, started.dir);
  }
}

describe('worker processes', () => {
  it('fork from the worker entry with their role\'s V8 flags and one malloc arena', { timeout: 120_000 }, async () => {
    await withServer({ MALLOC_ARENA_MAX: undefined }, (normalPids, controllerPid) => {
      assert.equal(normalPids.length, 1);
      const normal = procStrings(normalPids[0]!, 'cmdline');
      assert.ok(/worker-main\.(js|ts)$/.test(normal.at(-1) ?? ''), `forked from src/workers/worker-main: ${normal.join(' ')}`);
      assert.equal(lastFlag(normal, '--max-semi-space-size'), '6', normal.join(' '));
      assert.equal(lastFlag(normal, '--heap-growing-percent'), '20');
      assert.ok(!normal.includes('--optimize-for-size'), 'scan workers are not optimised for size (it doubles CPU per scan)');
      const controller = procStrings(controllerPid, 'cmdline');
      assert.equal(lastFlag(controller, '--max-semi-space-size'), '1', controller.join(' '));
      assert.ok(controller.includes('--optimize-for-size'));
      for (const args of [normal, controller]) assert.ok(args.includes('--no-sparkplug'), `no baseline code: ${args.join(' ')}`);
      for (const pid of [normalPids[0]!, controllerPid]) {
        assert.ok(procStrings(pid, 'environ').includes('MALLOC_ARENA_MAX=1'), `worker ${pid} has MALLOC_ARENA_MAX=1`);
      }
    });
  });

  it('keep an operator\'s MALLOC_ARENA_MAX', { timeout: 120_000 }, async () => {
    await withServer({ MALLOC_ARENA_MAX: '4' }, (normalPids, controllerPid) => {
      for (const pid of [normalPids[0]!, controllerPid]) {
        const env = procStrings(pid, 'environ').filter((e) => e.startsWith('MALLOC_ARENA_MAX='));
        assert.deepEqual(env, ['MALLOC_ARENA_MAX=4'], `worker ${pid}`);
      }
    });
  });
});
