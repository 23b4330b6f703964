// Many machines, for real (proxy issue item 9): three scanner hosts, each `mailsift serve
// --single` in a network namespace of its own (its own loopback, its own address on a veth
// pair), all keeping Bayes, fuzzy hashes, history and saved thresholds in one Redis; the proxy
// worker in front of them. What one host learns, every host knows at its next scan; one host
// dying under load costs the proxy's clients nothing.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from '../storage/redis-servers.js';
import { devMessages } from '../stats/corpus.js';
import { canUseNetns, serve, sh, type Served } from '../faults/helpers.js';
import { startProxy, type TestProxy } from './harness.js';

const READ_PASSWORD = 'mh-read';
const ENABLE_PASSWORD = 'mh-enable';
/** Learns of each class Bayes needs before it classifies (the shipped 200 would make the test slow). */
const MIN_LEARNS = 3;
/** Ports inside each host's namespace: nothing else lives there, so fixed numbers cannot clash. */
const SCAN_PORT = 21333;
const CONTROLLER_PORT = 21334;
const FUZZY_PORT = 21335;
/** The kill test: scans through the proxy, how many at once, and after how many answers the host dies. */
const LOAD_SCANS = 200;
const LOAD_CONCURRENCY = 8;
const KILL_AFTER = 50;
/** How long host B is stopped before the kill, for the proxy to hand it requests it will never answer. */
const HOLD_BEFORE_KILL_MS = 500;
/** Saved thresholds reach every worker within half a second; a loaded 2-core machine gets more. */
const PROPAGATION_MS = 10_000;
const ENVELOPE = { IP: '198.51.100.7', From: 'sender@example.net', Helo: 'mail.example.net', Rcpt: 'user@example.org' };

interface Host {
  name: string;
  ns: string;
  /** The veth end left in the root namespace (Redis listens there). */
  hostIf: string;
  hostIp: string;
  /** The machine's own address, inside its namespace. */
  ip: string;
  dir: string;
  srv?: Served;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: Record<string, unknown>;
}

interface ScanJson {
  action?: string;
  score?: number;
  required_score?: number;
  symbols?: Record<string, { score?: number; options?: string[] }>;
}

/** One HTTP request to `host:port` on a fresh connection. */
function call(host: string, port: number, method: string, path: string, body?: Buffer, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const h = { ...headers, ...(body ? { 'Content-Length': String(body.length) } : {}) };
    const req = request({ host, port, method, path, headers: h, agent: false, timeout: timeoutMs }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (c: string) => (data += c));
      res.on('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(data) as Record<string, unknown>;
        } catch {
          // an error body or plain text: status and body say what it was
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data, json });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${host}:${port}${path}: no reply in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function scanOn(h: Host, msg: Buffer): Promise<ScanJson> {
  const r = await call(h.ip, SCAN_PORT, 'POST', '/checkv2', msg, ENVELOPE);
  assert.equal(r.status, 200, `scan on host ${h.name}: ${r.body}`);
  return r.json as ScanJson;
}

function controller(h: Host, method: string, path: string, body?: Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  return call(h.ip, CONTROLLER_PORT, method, path, body, { Password: ENABLE_PASSWORD, ...headers });
}

const symbolsOf = (s: ScanJson): string[] => Object.keys(s.symbols ?? {});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Namespaces a crashed earlier run of this test left behind (its pid is gone): removed, veths with them. */
function removeStaleNamespaces(): void {
  const list = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  for (const line of list.split('\n')) {
    const m = /^(msmh(\d+)-[abc])\b/.exec(line);
    if (m && Number(m[2]) !== process.pid && !pidAlive(Number(m[2]))) spawnSync('ip', ['netns', 'del', m[1]!], { stdio: 'ignore' });
  }
}

/** A 10.201.N.0/24 no interface of this machine has an address in yet, starting from one the pid picks. */
function freeSubnet(): number {
  const addrs = spawnSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' }).stdout ?? '';
  for (let i = 0; i < 256; i++) {
    const n = (process.pid + i) % 256;
    if (!addrs.includes(`10.201.${n}.`)) return n;
  }
  throw new Error('no free 10.201.N.0/24 for the test hosts');
}

/** Connections to the scan port inside `ns` holding request bytes the server has not read. */
function unreadRequests(ns: string): number {
  const out = spawnSync('ip', ['netns', 'exec', ns, 'ss', '-tn', `sport = :${SCAN_PORT}`], { encoding: 'utf8' }).stdout ?? '';
  return out.split('\n').filter((l) => /^ESTAB\s+[1-9]/.test(l)).length;
}

/**
 * Kills host `h` whole (its process group, SIGKILL: no goodbye to open connections) while it holds
 * scans: it is stopped first so that requests already sent to it pile up unanswered, then killed.
 * Resolves with how many connections had such a request at the kill.
 */
async function killMidScan(h: Host): Promise<number> {
  const pgid = -h.srv!.child.pid!;
  process.kill(pgid, 'SIGSTOP');
  await sleep(HOLD_BEFORE_KILL_MS);
  const held = unreadRequests(h.ns);
  process.kill(pgid, 'SIGKILL');
  return held;
}

describe('Many machines: three scanner hosts in network namespaces, one Redis, a proxy in front', { skip: !canUseNetns() ? 'needs root and `ip netns`' : !haveRedisServer() ? 'redis-server is not installed' : false }, () => {
  let dir: string;
  let redis: RedisServer | undefined;
  let proxy: TestProxy | undefined;
  const hosts: Host[] = [];
  const prefix = `msmh${process.pid}:`;
  /** Corpus messages nobody has learned or scanned yet, handed out one by one. */
  const spam = devMessages('spam-1', 460, 40);
  const ham = devMessages('easy-ham-1', 2400, 60);

  before(async () => {
    removeStaleNamespaces();
    dir = await mkdtemp(join(tmpdir(), 'mailsift-many-machines-'));
    const subnet = freeSubnet();
    // Each machine: namespace msmh<pid>-<x>, a veth pair with a /30 of 10.201.N.0/24 (root side .1,
    // machine side .2), loopback up for its own fuzzy storage.
    ['a', 'b', 'c'].forEach((name, i) => {
      hosts.push({ name, ns: `msmh${process.pid}-${name}`, hostIf: `mh${process.pid}${name}`, hostIp: `10.201.${subnet}.${4 * i + 1}`, ip: `10.201.${subnet}.${4 * i + 2}`, dir: join(dir, `host-${name}`) });
    });
    for (const h of hosts) {
      sh('ip', ['netns', 'add', h.ns]);
      sh('ip', ['link', 'add', h.hostIf, 'type', 'veth', 'peer', 'name', `${h.hostIf}p`]);
      sh('ip', ['link', 'set', `${h.hostIf}p`, 'netns', h.ns]);
      sh('ip', ['addr', 'add', `${h.hostIp}/30`, 'dev', h.hostIf]);
      sh('ip', ['link', 'set', h.hostIf, 'up']);
      const inNs = (...args: string[]): void => sh('ip', ['netns', 'exec', h.ns, 'ip', ...args]);
      inNs('link', 'set', 'lo', 'up');
      inNs('link', 'set', `${h.hostIf}p`, 'name', 'eth0');
      inNs('addr', 'add', `${h.ip}/30`, 'dev', 'eth0');
      inNs('link', 'set', 'eth0', 'up');
    }

    // The shared Redis, listening where the machines reach it (and on loopback for the helper's ping).
    await mkdir(join(dir, 'redis'));
    redis = await startRedisServer(join(dir, 'redis'), await freePort(), ['--bind', '127.0.0.1', ...hosts.map((h) => h.hostIp), '--protected-mode', 'no']);

    const neighbours = hosts.map((h) => `      ${h.name}: { host: "${h.ip}:${CONTROLLER_PORT}" }`);
    for (const h of hosts) {
      await mkdir(join(h.dir, 'local.d'), { recursive: true });
      await writeFile(join(h.dir, 'mailsift.yaml'), [
        `hostname: host-${h.name}`,
        'workers:',
        `  normal: { bind: "${h.ip}:${SCAN_PORT}" }`,
        '  controller:',
        `    bind: "${h.ip}:${CONTROLLER_PORT}"`,
        `    password: "${READ_PASSWORD}"`,
        `    enable_password: "${ENABLE_PASSWORD}"`,
        '    auth_fail_limit: 0',
        '    neighbours:',
        ...neighbours,
        `  fuzzy: { enabled: true, bind: "127.0.0.1:${FUZZY_PORT}" }`,
        `stores: { backend: redis, redis: { servers: ["${h.hostIp}:${redis.port}"], prefix: "${prefix}" } }`,
        `data_dir: ${JSON.stringify(join(h.dir, 'data'))}`,
        // No resolver in the namespace: a lookup fails at once (connection refused) instead of waiting.
        'dns: { nameserver: ["127.0.0.1:53"], timeout: 0.5, retransmits: 0 }',
        'logging: { level: info, format: json }',
        '',
      ].join('\n'));
      await writeFile(join(h.dir, 'local.d', 'bayes.yaml'), `min_learns: ${MIN_LEARNS}\n`);
      await writeFile(join(h.dir, 'local.d', 'fuzzy_check.yaml'), [
        'rules:',
        '  local:',
        `    servers: "127.0.0.1:${FUZZY_PORT}"`,
        '    mime_types: ["*"]',
        '    min_bytes: 0',
        '    fuzzy_map: { LOCAL_FUZZY_DENIED: { flag: 1, max_score: 20 } }',
        '',
      ].join('\n'));
    }
    for (const h of hosts) h.srv = serve(h.dir, ['--single'], ['ip', 'netns', 'exec', h.ns], { detached: true });
    for (const h of hosts) {
      await h.srv!.waitFor((l) => l.worker === 'normal' && l.port === SCAN_PORT, `host ${h.name}'s scan worker`, 120_000);
      await h.srv!.waitFor((l) => l.worker === 'controller' && l.port === CONTROLLER_PORT, `host ${h.name}'s controller`, 60_000);
      await h.srv!.waitFor((l) => l.worker === 'fuzzy' && l.port === FUZZY_PORT, `host ${h.name}'s fuzzy storage`, 60_000);
    }
  });

  after(async () => {
    await proxy?.close();
    for (const h of hosts) {
      const pid = h.srv?.child.pid;
      if (pid !== undefined && h.srv!.child.exitCode === null && h.srv!.child.signalCode === null) {
        const exited = new Promise((r) => h.srv!.child.once('exit', r));
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
        await exited;
      }
    }
    await redis?.kill();
    // Quietly: a namespace may not have been made if before() failed early. The veth goes with it.
    for (const h of hosts) spawnSync('ip', ['netns', 'del', h.ns], { stdio: 'ignore' });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('/neighbours on every host lists all three, and every listed URL is that host\'s controller', async () => {
    for (const h of hosts) {
      const r = await controller(h, 'GET', '/neighbours', undefined, { Password: READ_PASSWORD });
      assert.equal(r.status, 200, r.body);
      // With neighbours configured the web UI served by one host may call the others.
      assert.equal(r.headers['access-control-allow-origin'], '*');
      assert.deepEqual(r.json, Object.fromEntries(hosts.map((n) => [n.name, { host: `${n.ip}:${CONTROLLER_PORT}`, url: `http://${n.ip}:${CONTROLLER_PORT}/` }])));
      for (const [name, n] of Object.entries(r.json as Record<string, { url: string }>)) {
        const url = new URL(`${n.url}auth`);
        const auth = await call(url.hostname, Number(url.port), 'GET', url.pathname, undefined, { Password: READ_PASSWORD });
        assert.equal(auth.status, 200, `${name} at ${n.url}: ${auth.body}`);
        assert.equal(auth.json['auth'], 'ok');
      }
    }
  });

  test('a message learned as spam through host A\'s controller raises the next verdict on every host', async () => {
    const [a, b, c] = hosts as [Host, Host, Host];
    // Bayes becomes ready with learns made through the other two hosts.
    for (let i = 0; i < MIN_LEARNS; i++) {
      assert.equal((await controller(b, 'POST', '/learnspam', spam.shift()!)).status, 200);
      assert.equal((await controller(c, 'POST', '/learnham', ham.shift()!)).status, 200);
    }
    const probe = spam.shift()!;
    const before = await Promise.all(hosts.map((h) => scanOn(h, probe)));
    const learned = await controller(a, 'POST', '/learnspam', probe);
    assert.equal(learned.status, 200, learned.body);
    const after = await Promise.all(hosts.map((h) => scanOn(h, probe)));
    hosts.forEach((h, i) => {
      const was = before[i]!;
      const now = after[i]!;
      assert.ok(symbolsOf(now).includes('BAYES_SPAM'), `host ${h.name} after the learn: ${symbolsOf(now).join(' ')}`);
      assert.ok(now.score! > was.score!, `host ${h.name}: score ${was.score} before the learn on host A, ${now.score} after`);
    });
    // The same verdict everywhere: one set of statistics, not three.
    assert.equal(new Set(after.map((s) => s.score)).size, 1, `scores after: ${after.map((s) => s.score).join(', ')}`);
    assert.equal(learned.json['success'], true);
    // A second learn of the same message, through another host, is known to be a repeat.
    const again = await controller(b, 'POST', '/learnspam', probe);
    assert.equal(again.status, 208, again.body);
  });

  test('a fuzzy hash added through host B is found by every host', async () => {
    const [, b] = hosts as [Host, Host, Host];
    const msg = spam.shift()!;
    for (const h of hosts) assert.ok(!symbolsOf(await scanOn(h, msg)).includes('LOCAL_FUZZY_DENIED'), `host ${h.name} before the add`);
    const added = await controller(b, 'POST', '/fuzzyadd', msg, { Flag: '1', Weight: '10' });
    assert.equal(added.status, 200, added.body);
    for (const h of hosts) {
      const s = await scanOn(h, msg);
      assert.ok(symbolsOf(s).includes('LOCAL_FUZZY_DENIED'), `host ${h.name} after the add on host B: ${symbolsOf(s).join(' ')}`);
    }
  });

  test('thresholds saved through host C apply on every host; /history on any host shows every host\'s scans', async () => {
    const [a, , c] = hosts as [Host, Host, Host];
    const saved = await controller(c, 'POST', '/saveactions', Buffer.from('[14.5,null,6,4]'));
    assert.equal(saved.status, 200, saved.body);
    for (const h of hosts) {
      const t0 = Date.now();
      let required: number | undefined;
      while (Date.now() - t0 < PROPAGATION_MS) {
        required = (await scanOn(h, ham[0]!)).required_score;
        if (required === 14.5) break;
        await sleep(200);
      }
      assert.equal(required, 14.5, `host ${h.name}'s reject threshold ${PROPAGATION_MS} ms after the save on host C`);
    }

    // A scan made only on host C is in host A's history (rows are written after the reply).
    const mid = `<many-machines-${process.pid}@example.net>`;
    await scanOn(c, Buffer.from(`Message-ID: ${mid}\r\nFrom: x@example.net\r\nSubject: history\r\n\r\nonly host C sees this\r\n`));
    const t0 = Date.now();
    let ids: unknown[] = [];
    while (Date.now() - t0 < PROPAGATION_MS) {
      const r = await controller(a, 'GET', '/history', undefined, { Password: READ_PASSWORD });
      assert.equal(r.status, 200, r.body);
      ids = ((r.json['rows'] ?? []) as Array<Record<string, unknown>>).map((row) => row['message-id']);
      if (ids.includes(mid.slice(1, -1))) break;
      await sleep(200);
    }
    assert.ok(ids.includes(mid.slice(1, -1)), `host A's history: ${ids.join(' ')}`);
  });

  test('one scanner killed mid-load: every one of the client\'s scans through the proxy succeeds', async () => {
    const [, b] = hosts as [Host, Host, Host];
    proxy = await startProxy({ upstreams: { scanners: { hosts: hosts.map((h) => `${h.ip}:${SCAN_PORT}`).join(', ') } } });
    const messages = [...spam, ...ham];
    const results: Array<{ status: number; action?: string; error?: string }> = [];
    let next = 0;
    let killed: Promise<number> | undefined;
    const client = async (): Promise<void> => {
      while (next < LOAD_SCANS) {
        const msg = messages[next++ % messages.length]!;
        try {
          const r = await call('127.0.0.1', proxy!.port, 'POST', '/checkv2', msg, ENVELOPE);
          results.push({ status: r.status, ...(typeof r.json['action'] === 'string' ? { action: r.json['action'] } : { error: r.body.slice(0, 200) }) });
        } catch (e) {
          results.push({ status: 0, error: String(e) });
        }
        if (results.length === KILL_AFTER) killed ??= killMidScan(b);
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, client));
    const elapsed = performance.now() - t0;
    assert.ok(killed, 'the load reached the kill');
    const inFlight = await killed;
    assert.ok(inFlight >= 1, 'host B held requests it had not answered when it died');
    const bChild = b.srv!.child;
    if (bChild.exitCode === null && bChild.signalCode === null) await new Promise((r) => bChild.once('exit', r));
    assert.equal(bChild.signalCode, 'SIGKILL', 'host B died of the kill');

    const failed = results.filter((r) => r.status !== 200 || r.action === undefined);
    assert.equal(results.length, LOAD_SCANS);
    assert.deepEqual(failed, [], `${failed.length} of ${LOAD_SCANS} scans failed at the client`);
    // The proxy did meet the dead host and went elsewhere: that is what the client never saw.
    const bName = `${b.ip}:${SCAN_PORT}`;
    const bFailures = proxy.logs.filter((l) => l['upstream'] === bName && /failed/.test(l.msg));
    assert.ok(bFailures.length > 0, `the proxy logged no failure of host B:\n${proxy.logs.map((l) => l.msg).join('\n')}`);
    console.log(`many-machines: ${LOAD_SCANS} scans at concurrency ${LOAD_CONCURRENCY} in ${(elapsed / 1000).toFixed(1)} s, host B killed after ${KILL_AFTER} with ${inFlight} request(s) unanswered; `
      + `proxy met host B failing ${bFailures.length} time(s) (${[...new Set(bFailures.map((l) => String(l['kind'])))].join(', ')}), client failures: ${failed.length}`);
  });
});
