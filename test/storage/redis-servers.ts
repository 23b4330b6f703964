// Private redis-server processes on loopback for tests that need a server of their own: a
// 3-master Cluster, or a standalone server the test can stop and start again. Every process is
// a child of the test and is killed by the returned stop().

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** Waiting longer than this for a server or the cluster means something is broken. */
const START_TIMEOUT_MS = 20_000;
const CLUSTER_BUS_OFFSET = 10_000; // Redis Cluster's bus listens on port + 10000

export function haveRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
}

function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
}

/** A free loopback port whose cluster-bus twin (port + 10000) is free too. */
export async function freePort(): Promise<number> {
  for (;;) {
    const p = await listenOnce(0);
    if (p === undefined || p + CLUSTER_BUS_OFFSET > 65535) continue;
    if ((await listenOnce(p + CLUSTER_BUS_OFFSET)) !== undefined) return p;
  }
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function ping(port: number): Promise<boolean> {
  const r = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } finally {
    r.disconnect();
  }
}

export interface RedisServer {
  port: number;
  /** Stops the server (SIGKILL: no goodbye to clients). */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** Sends a signal to the running server (SIGSTOP hangs it with its connections open, SIGCONT resumes it). */
  signal(sig: NodeJS.Signals): void;
}

/** One redis-server process; `args` are extra command-line options, `conf` a config file to start from. */
export async function startRedisServer(dir: string, port: number, args: string[] = [], conf?: string): Promise<RedisServer> {
  let child: ChildProcess | undefined;
  const persistence = args.includes('--sentinel') ? [] : ['--save', '', '--appendonly', 'no'];
  const start = async (): Promise<void> => {
    child = spawn('redis-server', [...(conf ? [conf] : []), '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...persistence, ...args], {
      stdio: 'ignore',
    });
    await until(`redis-server on ${port}`, () => ping(port));
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  const signal = (sig: NodeJS.Signals): void => {
    if (!child || child.exitCode !== null) throw new Error(`redis-server on ${port} is not running`);
    child.kill(sig);
  };
  await start();
  return { port, kill, restart: start, signal };
}

export interface TestCluster {
  seeds: { host: string; port: number }[];
  stop(): Promise<void>;
}

/** Three masters with --cluster-enabled, joined by `redis-cli --cluster create`. */
export async function startCluster(): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-cluster-'));
  const servers: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.kill()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      servers.push(await startRedisServer(dir, port, ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`]));
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: START_TIMEOUT_MS,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    for (const s of servers) {
      await until('cluster_state:ok', async () => {
        const r = new Redis({ host: '127.0.0.1', port: s.port, maxRetriesPerRequest: 0 });
        try {
          return (await r.cluster('INFO')).includes('cluster_state:ok');
        } finally {
          r.disconnect();
        }
      });
    }
    return { seeds: servers.map((s) => ({ host: '127.0.0.1', port: s.port })), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
