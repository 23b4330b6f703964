// Starting and stopping the servers the benchmark measures: mailsift (`serve`, N normal workers,
// on free ports, from a private copy of conf/) and the reference Rspamd from
// /work/shared/tools/reference-rspamd (2 workers), each with the DNS stub of dns-stub.ts.
import { SUPERVISOR_NODE_FLAGS } from '../src/workers/v8-tuning.js';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ScanClient } from '../src/client/index.js';

const execFileP = promisify(execFile);

/** How long a server may take to answer /ping after start (Rspamd compiles its rules first). */
const START_TIMEOUT_MS = 90_000;
/** How long a server gets to exit after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;

export const REFERENCE_RSPAMD_DIR = '/work/shared/tools/reference-rspamd';
const RSPAMD_STATE = process.env.BENCH_RSPAMD ?? '/tmp/bench-rspamd';
const RSPAMD_SCAN = '127.0.0.1:24333';
const RSPAMD_CONTROLLER = '127.0.0.1:24334';
/** Where rspamd.sh's configuration sends Rspamd's DNS queries. */
const RSPAMD_DNS_PORT = 24353;

export interface RunningServer {
  name: string;
  /** host:port of the scan worker. */
  scan: string;
  /** host:port of the controller (mailsift only). */
  controller?: string;
  /** Roots of the process trees whose CPU and memory count for this server. */
  pids(): number[];
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export async function waitForPing(scan: string, child: ChildProcess | undefined, log: () => string): Promise<void> {
  const client = new ScanClient({ server: scan, timeoutMs: 1000, keepAlive: false });
  const deadline = Date.now() + START_TIMEOUT_MS;
  try {
    for (;;) {
      if (child && child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode} before answering /ping:\n${log()}`);
      try {
        if ((await client.ping()) === 'pong') return;
      } catch { /* not listening yet */ }
      if (Date.now() > deadline) throw new Error(`no /ping answer on ${scan} within ${START_TIMEOUT_MS} ms:\n${log()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    client.close();
  }
}

export interface DnsStub { address: string; pid: number; close(): Promise<void> }

/** The command that runs a bench script: the built one beside this file, or its source through tsx. */
function benchScript(name: string): string[] {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return import.meta.url.endsWith('.ts') ? ['--import', 'tsx', join(here, `${name}.ts`)] : [join(here, `${name}.js`)];
}

/**
 * The benchmarks' DNS stub (dns-stub.ts: NXDOMAIN with an SOA of TTL 0 for every name) in its
 * own process on `port` (default: a free one): the servers meet the same answers, never cache
 * them, and the stub's CPU is neither a server's nor the benchmark client's.
 */
export async function startDnsStub(port = 0): Promise<DnsStub> {
  // BENCH_DNS_LOG: the stub appends a line per query to this file (to count the lookups per message).
  const log = process.env.BENCH_DNS_LOG ? ['--log', process.env.BENCH_DNS_LOG] : [];
  const child = spawn(process.execPath, [...benchScript('dns-stub'), '--addr', '127.0.0.1', '--port', String(port), ...log], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const close = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  const bound = await new Promise<number>((ok, fail) => {
    const t = setTimeout(() => fail(new Error(`DNS stub did not start within ${START_TIMEOUT_MS} ms: ${output}`)), START_TIMEOUT_MS);
    const onData = (c: Buffer): void => {
      output += c.toString();
      const m = /listening (\d+)/.exec(output);
      if (m) { clearTimeout(t); ok(Number(m[1])); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(t); fail(new Error(`DNS stub exited with code ${code}${port ? ` (is 127.0.0.1:${port} taken?)` : ''}: ${output.slice(-2000)}`)); });
  }).catch(async (e: unknown) => {
    await close();
    throw e;
  });
  return { address: `127.0.0.1:${bound}`, pid: child.pid!, close };
}

/** The part of mailsift.yaml the benchmark rewrites; everything else is kept as shipped. */
export interface BenchConf {
  workers?: { normal?: Record<string, unknown>; controller?: Record<string, unknown>; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * The command that runs the mailsift CLI: the built dist when the benchmark itself runs from dist
 * (npm run bench builds both together), else the sources via tsx, so a tsx run never measures a
 * stale build.
 */
function mailsiftCommand(repoRoot: string): string[] {
  const dist = join(repoRoot, 'dist', 'src', 'cli', 'mailsift.js');
  // The supervisor's launch flags, as bin/mailsift.js and `npm start` give them.
  if (existsSync(dist) && !import.meta.url.endsWith('.ts') && !process.env.BENCH_USE_TSX) return [...SUPERVISOR_NODE_FLAGS, dist];
  return [...SUPERVISOR_NODE_FLAGS, '--import', 'tsx', join(repoRoot, 'src', 'cli', 'mailsift.ts')];
}

/** What the fuzzer and the soak script change in the benchmark's server. */
export interface MailsiftStartOptions {
  /** Edits the configuration after the ports and the DNS stub are set, before it is written. */
  patchConf?: (conf: BenchConf, confDir: string) => void | Promise<void>;
  /** Extra node flags for the server's processes (cluster workers inherit them). */
  nodeArgs?: string[];
  /** Every chunk the server writes to stdout or stderr. */
  onOutput?: (chunk: string) => void;
  /** A DNS stub to use (its owner stops it); by default the server gets one of its own. */
  dns?: DnsStub;
}

/** Start `mailsift serve` with `workers` normal workers on free loopback ports. */
export async function startMailsift(repoRoot: string, workers: number, extra: MailsiftStartOptions = {}): Promise<RunningServer> {
  const confDir = await mkdtemp(join(tmpdir(), 'mailsift-bench-'));
  await cp(join(repoRoot, 'conf'), confDir, { recursive: true });
  const mainFile = join(confDir, 'mailsift.yaml');
  const conf: BenchConf = ((existsSync(mainFile) ? parseYaml(await readFile(mainFile, 'utf8')) : {}) as BenchConf | null) ?? {};
  const scanPort = await freePort();
  const controllerPort = await freePort();
  conf.workers = {
    ...(conf.workers ?? {}),
    normal: { ...(conf.workers?.normal ?? {}), bind: `127.0.0.1:${scanPort}`, count: workers },
    controller: { ...(conf.workers?.controller ?? {}), bind: `127.0.0.1:${controllerPort}` },
  };
  // Like the reference Rspamd, every DNS query is answered NXDOMAIN at once by a loopback stub,
  // so DNS-based rules fail fast the same way for both filters (and nothing leaves the machine);
  // its SOA of TTL 0 keeps the answers out of the resolver's cache.
  // Stores of the run's own (conf/'s data_dir is ../data, which from a temporary copy is a
  // directory every run on the machine would share, trained Bayes and all).
  conf.data_dir = join(confDir, 'data');
  const dns = extra.dns ? { ...extra.dns, close: async () => undefined } : await startDnsStub();
  conf.dns = { ...((conf.dns as Record<string, unknown> | undefined) ?? {}), nameserver: [dns.address] };
  await extra.patchConf?.(conf, confDir);
  await writeFile(mainFile, stringifyYaml(conf));
  let output = '';
  // BENCH_NODE_ARGS: extra node flags for the server (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
  // to profile it; cluster workers inherit them), which NODE_OPTIONS does not allow for all flags.
  const nodeArgs = [...(extra.nodeArgs ?? []), ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const child = spawn(process.execPath, [...nodeArgs, ...mailsiftCommand(repoRoot), 'serve', '-c', confDir], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const keep = (c: Buffer): void => {
    output = (output + c.toString()).slice(-8000);
    extra.onOutput?.(c.toString());
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  // BENCH_SERVER_OUTPUT: also copy the server's whole output to this file (e.g. with --trace-gc).
  if (process.env.BENCH_SERVER_OUTPUT) {
    const out = createWriteStream(process.env.BENCH_SERVER_OUTPUT);
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
  }
  const scan = `127.0.0.1:${scanPort}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(t);
    }
    await dns.close();
    await rm(confDir, { recursive: true, force: true });
  };
  try {
    await waitForPing(scan, child, () => output);
  } catch (e) {
    await stop();
    throw e;
  }
  return { name: 'mailsift', scan, controller: `127.0.0.1:${controllerPort}`, pids: () => [child.pid!], stop };
}

/** Servers a Ctrl-C or SIGTERM must stop before the bench exits (see stopOnSignal). */
const stopsOnSignal = new Set<() => Promise<void>>();
let signalHandlerInstalled = false;

/**
 * Ctrl-C or SIGTERM stops the server (and its DNS stub) before exiting, instead of orphaning it.
 * One handler stops every server still registered and exits when all have stopped: with one
 * handler per server, the handler of a server an earlier experiment had stopped finished at once
 * and exited while the running one was still up (an accuracy run killed mid-way left its server
 * running). Returns a function that unregisters the server, for when it has been stopped.
 */
export function stopOnSignal(stop: () => Promise<void>): () => void {
  stopsOnSignal.add(stop);
  if (!signalHandlerInstalled) {
    signalHandlerInstalled = true;
    const handler = (signal: NodeJS.Signals): void => {
      process.stderr.write(`${signal}: stopping the server…\n`);
      void Promise.allSettled([...stopsOnSignal].map((s) => s())).finally(() => process.exit(130));
    };
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
  }
  return () => stopsOnSignal.delete(stop);
}

function pidFile(name: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(RSPAMD_STATE, 'run', `${name}.pid`), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Start the reference Rspamd (scan worker on 127.0.0.1:24333, controller on 24334); its redis
 * (Bayes) counts towards its CPU and memory. rspamd.sh points Rspamd's resolver at 127.0.0.1:24353
 * and starts its own stub there (NXDOMAIN without an SOA) unless its pid file names a live one:
 * ours is started on that port first and recorded there, so Rspamd meets the same answers as
 * mailsift (`rspamd.sh stop` stops it by that pid).
 */
export async function startReferenceRspamd(workers: number): Promise<RunningServer> {
  const script = join(REFERENCE_RSPAMD_DIR, 'rspamd.sh');
  const env = { ...process.env, RSPAMD_WORKERS: String(workers), RSPAMD_LOGLEVEL: process.env.RSPAMD_LOGLEVEL ?? 'info' };
  if (pidFile('rspamd-main') !== undefined) throw new Error(`a reference Rspamd is already running (${RSPAMD_STATE}/run/rspamd-main.pid): stop it with ${script} stop`);
  const dns = await startDnsStub(RSPAMD_DNS_PORT);
  await mkdir(join(RSPAMD_STATE, 'run'), { recursive: true });
  await writeFile(join(RSPAMD_STATE, 'run', 'dnsstub.pid'), `${dns.pid}\n`);
  const stop = async (): Promise<void> => {
    await execFileP('bash', [script, 'stop'], { env, timeout: 30_000 }).catch(() => undefined);
    await dns.close();
  };
  try {
    await execFileP('bash', [script, 'start'], { env, timeout: START_TIMEOUT_MS });
  } catch (e) {
    await stop();
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`reference Rspamd did not start: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
  try {
    await waitForPing(RSPAMD_SCAN, undefined, () => 'see /tmp/bench-rspamd/log');
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    name: 'rspamd',
    scan: RSPAMD_SCAN,
    controller: RSPAMD_CONTROLLER,
    pids: () => [pidFile('rspamd-main'), pidFile('redis')].filter((p): p is number => p !== undefined),
    stop,
  };
}

/** Empties the reference Rspamd's Bayes (its private redis), before training it afresh. */
export async function flushReferenceBayes(): Promise<void> {
  await execFileP('bash', [join(REFERENCE_RSPAMD_DIR, 'rspamd.sh'), 'flush-bayes'], { timeout: 30_000 });
}
