// Redis faults on the real path (issue 17 item 8): `mailsift serve` with every store on a
// redis-server of the test's own, scanned and taught continuously while that server is stopped
// (SIGSTOP: connections open, nothing answered) and while it is killed (connections refused).
// Scans keep answering, without the store-backed results (Bayes) and without waiting on the
// store; learns (/learnspam, /learnham, /fuzzyadd) answer 503 at once instead of hanging; both
// come back by themselves; and every learn answered 200 is in Redis afterwards.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoresSection } from '../../src/storage/config-schema.js';
import { parseMessage } from '../../src/message/parse-message.js';
import { openStores, type Stores } from '../../src/storage/index.js';
import { BayesClassifier, bayesConfig, tokenDigest } from '../../src/rule-libs/bayes/index.js';
import { freePort, haveRedisServer, startRedisServer, type RedisServer } from '../storage/redis-servers.js';
import { devMessages } from '../stats/corpus.js';
import { MESSAGES, post, serve, workerExits, type ScanReply, type Served } from './helpers.js';

const PASSWORD = 'faultpass';
const MIN_LEARNS = 3;
/** Bound on a store call made by a scan (stores.redis.scan_timeout), and on any other call (command_timeout). */
const SCAN_TIMEOUT_S = 0.3;
const COMMAND_TIMEOUT_S = 1;
const ENVELOPE = { IP: '203.0.113.9', From: 'someone@example.net', Helo: 'mail.example.net', Rcpt: 'user@example.org' };
const silent = { debug() {}, info() {}, warn() {}, error() {} };

interface Learn { cls: 'spam' | 'ham'; msg: Buffer; status: number; ms: number; body: string }
interface FuzzyAdd { status: number; ms: number; hashes: string[] }
interface Scan extends ScanReply { phase: string; /** Which probe message. */ key: string }

/** Symbols of the checks that need a store: the only ones an outage may take away. */
const STORE_BACKED = /^(BAYES_|GREYLIST|RATELIMIT|REPLY|LOCAL_FUZZY|FUZZY_)/;

/** The symbols a scan gave apart from the store-backed ones. */
function ownSymbols(s: ScanReply): string {
  return Object.keys(s.symbols).filter((n) => !STORE_BACKED.test(n)).sort().join(' ');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

describe('Redis faults with `mailsift serve`', { skip: haveRedisServer() ? false : 'redis-server is not installed' }, () => {
  let dir: string;
  let redis: RedisServer;
  let srv: Served;
  let scanPort: number;
  let ctlPort: number;
  let check: Stores;
  const classifier = new BayesClassifier(bayesConfig({ min_learns: MIN_LEARNS }));
  /** Messages never learned yet, taken one by one. */
  const fresh = { spam: devMessages('spam-1', 0, 400), ham: devMessages('easy-ham-1', 0, 400) };
  const probe = { spam: devMessages('spam-1', 450, 8), ham: devMessages('easy-ham-1', 450, 8) };
  const learns: Learn[] = [];
  const fuzzyAdds: FuzzyAdd[] = [];
  const prefix = `faults${process.pid}:`;

  const learn = async (cls: 'spam' | 'ham'): Promise<Learn> => {
    const msg = fresh[cls].shift()!;
    // bulk: learned whatever the classifier already thinks, so every 200 is a store write.
    const r = await post(ctlPort, cls === 'spam' ? '/learnspam' : '/learnham', msg, { Password: PASSWORD, 'Learn-Type': 'bulk' }, 30_000);
    const l = { cls, msg, status: r.status, ms: r.ms, body: r.body };
    learns.push(l);
    return l;
  };

  /**
   * A learn the store answered: 200, or 208 when an earlier message had the same tokens (spam-1
   * holds near-duplicates; which of them a phase reaches depends on how many learns the phases
   * before it made).
   */
  const storeAnswered = (l: Learn): boolean => l.status === 200 || l.status === 208;

  const fuzzyAdd = async (): Promise<FuzzyAdd> => {
    const msg = fresh.spam.shift()!;
    const r = await post(ctlPort, '/fuzzyadd', msg, { Password: PASSWORD, Flag: '1', Weight: '1' }, 30_000);
    let hashes: string[] = [];
    if (r.status === 200) hashes = (JSON.parse(r.body) as { hashes: string[] }).hashes;
    const f = { status: r.status, ms: r.ms, hashes };
    fuzzyAdds.push(f);
    return f;
  };

  /** Scans at `concurrency` and learns one after the other until `until()` says stop. */
  const traffic = async (phase: string, concurrency: number, until: () => boolean): Promise<{ scans: Scan[]; learned: Learn[]; added: FuzzyAdd[] }> => {
    const scans: Scan[] = [];
    const learned: Learn[] = [];
    const added: FuzzyAdd[] = [];
    let i = 0;
    const scanner = async (): Promise<void> => {
      while (!until()) {
        const key = `${i % 2 === 0 ? 'spam' : 'ham'}${i % 8}`;
        const msg = i % 2 === 0 ? probe.spam[i % 8]! : probe.ham[i % 8]!;
        i++;
        scans.push({ ...(await post(scanPort, '/checkv2', msg, ENVELOPE)), phase, key });
      }
    };
    const learner = async (): Promise<void> => {
      let n = 0;
      while (!until()) {
        learned.push(await learn(n++ % 2 === 0 ? 'spam' : 'ham'));
        if (n % 3 === 0) added.push(await fuzzyAdd());
        await sleep(100);
      }
    };
    await Promise.all([...Array.from({ length: concurrency }, scanner), learner()]);
    return { scans, learned, added };
  };

  const forMs = (ms: number): (() => boolean) => {
    const end = Date.now() + ms;
    return () => Date.now() >= end;
  };

  /** Scans until one is classified by Bayes again (the store answers), at most `ms`. */
  const untilBayes = async (ms: number): Promise<number> => {
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
      const r = await post(scanPort, '/checkv2', probe.spam[0]!, ENVELOPE);
      if ('BAYES_SPAM' in r.symbols) return performance.now() - t0;
      await sleep(200);
    }
    throw new Error(`Bayes did not come back within ${ms} ms`);
  };

  /** Learns until one is accepted again (the controller's process has seen the store answer), at most `ms`. */
  const untilLearns = async (ms: number): Promise<void> => {
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
      if ((await learn('spam')).status === 200) return;
      await sleep(200);
    }
    throw new Error(`learns were not accepted again within ${ms} ms`);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-redis-faults-'));
    await mkdir(join(dir, 'redis'));
    // appendfsync always: a write Redis has answered is on disk, so a killed server keeps every
    // acknowledged learn and the check below can hold mailsift to that.
    redis = await startRedisServer(join(dir, 'redis'), await freePort(), ['--appendonly', 'yes', '--appendfsync', 'always']);
    const fuzzyPort = await freePort();
    const storesYaml = `stores: { backend: redis, redis: { servers: ["127.0.0.1:${redis.port}"], prefix: "${prefix}", scan_timeout: ${SCAN_TIMEOUT_S}, command_timeout: ${COMMAND_TIMEOUT_S} } }`;
    await writeFile(join(dir, 'mailsift.yaml'), [
      'workers:',
      '  normal: { bind: "127.0.0.1:0", count: 2 }',
      `  controller: { bind: "127.0.0.1:0", enable_password: "${PASSWORD}", auth_fail_limit: 0 }`,
      `  fuzzy: { enabled: true, bind: "127.0.0.1:${fuzzyPort}" }`,
      `data_dir: ${join(dir, 'data')}`,
      storesYaml,
      'logging: { level: info }',
      '',
    ].join('\n'));
    await mkdir(join(dir, 'local.d'));
    await writeFile(join(dir, 'local.d', 'bayes.yaml'), `min_learns: ${MIN_LEARNS}\n`);
    await writeFile(join(dir, 'local.d', 'greylist.yaml'), 'active: true\n');
    await writeFile(join(dir, 'local.d', 'ratelimit.yaml'), 'rates: { to: { selector: to, bucket: { burst: 100000, rate: 1000 } } }\n');
    await writeFile(join(dir, 'local.d', 'fuzzy_check.yaml'), [
      'timeout: 3',
      'retransmits: 0',
      'rules:',
      '  local:',
      `    servers: "127.0.0.1:${fuzzyPort}"`,
      '    mime_types: ["*"]',
      '    min_bytes: 0',
      '    fuzzy_map: { LOCAL_FUZZY_DENIED: { flag: 1, max_score: 20 } }',
      '',
    ].join('\n'));
    srv = serve(dir);
    await srv.waitFor((l) => /^started 2 normal worker/.test(l.msg), 'the workers to start', 120_000);
    await srv.waitFor((l) => l.worker === 'controller' && typeof l.port === 'number', 'the controller');
    scanPort = srv.lines.find((l) => l.worker === 'normal' && typeof l.port === 'number')!.port!;
    ctlPort = srv.lines.find((l) => l.worker === 'controller' && typeof l.port === 'number')!.port!;
    check = await openStores({ dataDir: dir, stores: StoresSection.parse({ backend: 'redis', redis: { servers: [`127.0.0.1:${redis.port}`], prefix } }) }, silent);
    for (let i = 0; i < MIN_LEARNS + 2; i++) {
      assert.equal((await learn('spam')).status, 200);
      assert.equal((await learn('ham')).status, 200);
    }
    assert.equal((await fuzzyAdd()).status, 200, 'the fuzzy storage learns through the controller');
    await untilBayes(10_000);
  });

  after(async () => {
    await srv?.stop();
    await check?.close();
    await redis?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  /** Every learn answered 200 (in any test so far) is in Redis, in its class; every fuzzy add acknowledged is stored. */
  const assertNoAcknowledgedLearnLost = async (): Promise<void> => {
    const acked = learns.filter((l) => l.status === 200);
    for (const l of acked) {
      const digest = tokenDigest(classifier.tokenize(parseMessage(l.msg)), '');
      assert.equal(await check.bayes.learnedAs(classifier.scope(''), digest), l.cls, `an acknowledged ${l.cls} learn is stored`);
    }
    for (const f of fuzzyAdds.filter((x) => x.status === 200)) {
      for (const h of f.hashes) assert.ok(await check.fuzzy.check(h), `acknowledged fuzzy hash ${h.slice(0, 16)}… is stored`);
    }
  };

  /** `baseline`: scans of the same probe messages while Redis answered. */
  const assertDegradedPhase = (scans: Scan[], learned: Learn[], added: FuzzyAdd[], baseline: Scan[], what: string): void => {
    assert.ok(scans.length >= 20, `${what}: scans kept coming (${scans.length})`);
    const before = new Map(baseline.map((s) => [s.key, ownSymbols(s)]));
    for (const s of scans) {
      assert.equal(s.status, 200, `${what}: ${s.body}`);
      assert.ok(s.action !== undefined, `${what}: a verdict`);
      assert.ok(!('BAYES_SPAM' in s.symbols) && !('BAYES_HAM' in s.symbols), `${what}: Bayes cannot classify without its store`);
      // Every check that needs no store gave what it gave with Redis up: nothing else is lost.
      const b = before.get(s.key);
      if (b !== undefined) assert.equal(ownSymbols(s), b, `${what}: ${s.key}`);
    }
    const baselineP50 = quantile(baseline.map((s) => s.ms), 0.5);
    // Each scan makes several store calls (Bayes, greylist, rate limits, replies, fuzzy): bounded
    // one by one they could add up to a few scan time-outs, never the old seconds per call.
    const ms = scans.map((s) => s.ms);
    assert.ok(quantile(ms, 0.5) < baselineP50 + 4 * SCAN_TIMEOUT_S * 1000, `${what}: median scan ${quantile(ms, 0.5).toFixed(0)} ms, baseline ${baselineP50.toFixed(0)} ms`);
    assert.ok(Math.max(...ms) < baselineP50 + 3000, `${what}: slowest scan ${Math.max(...ms).toFixed(0)} ms`);
    assert.ok(learned.length >= 3, `${what}: learns were tried (${learned.length})`);
    for (const l of learned) {
      assert.equal(l.status, 503, `${what}: /learn${l.cls} ${l.status} ${l.body}`);
      assert.match(l.body, /statistics store unavailable \(down or not answering in time\)/);
      // Never longer than the command time-out (plus the machine's slowness); most at once.
      assert.ok(l.ms < COMMAND_TIMEOUT_S * 1000 + 2000, `${what}: a learn answered in ${l.ms.toFixed(0)} ms`);
    }
    assert.ok(quantile(learned.map((l) => l.ms), 0.5) < 500, `${what}: learns refused at once while the store is known down`);
    for (const f of added) {
      assert.equal(f.status, 503, `${what}: /fuzzyadd ${f.status}`);
      assert.ok(f.ms < COMMAND_TIMEOUT_S * 1000 + 2000, `${what}: a fuzzy add answered in ${f.ms.toFixed(0)} ms`);
    }
  };

  test('Redis stopped (SIGSTOP) during scans and learns: scans stay fast without Bayes, learns get 503 fast, all recovers, no acknowledged learn lost', async () => {
    const base = await traffic('baseline', 4, forMs(2000));
    assert.ok(base.scans.every((s) => s.status === 200));
    assert.ok(base.learned.every(storeAnswered), base.learned.map((l) => l.body).join('\n'));
    assert.ok(base.scans.some((s) => 'BAYES_SPAM' in s.symbols), 'Bayes classifies while Redis answers');

    // Stopped while traffic runs: what is in flight at that moment is answered either way.
    let stopped = false;
    const during = traffic('stopping', 4, () => stopped);
    await sleep(300);
    redis.signal('SIGSTOP');
    await sleep(1500);
    stopped = true;
    const inFlight = await during;
    for (const s of inFlight.scans) assert.equal(s.status, 200, s.body);
    for (const l of inFlight.learned) assert.ok(l.status === 200 || l.status === 503, `${l.status} ${l.body}`);

    try {
      const stall = await traffic('stopped', 4, forMs(5000));
      assertDegradedPhase(stall.scans, stall.learned, stall.added, base.scans, 'Redis stopped');
    } finally {
      redis.signal('SIGCONT');
    }
    const back = await untilBayes(20_000);
    assert.ok(back < 10_000, `Bayes back ${back.toFixed(0)} ms after Redis resumed`);
    await untilLearns(10_000);
    const after = await traffic('resumed', 4, forMs(1500));
    assert.ok(after.learned.every(storeAnswered), after.learned.map((l) => `${l.status} ${l.body}`).join('\n'));
    assert.ok(after.scans.every((s) => s.status === 200));

    await assertNoAcknowledgedLearnLost();
    assert.deepEqual(workerExits(srv.lines), [], 'no worker restarted');
    // The outage is logged once per process (2 scan workers, controller, fuzzy storage, supervisor), not once per scan.
    const stallLines = srv.lines.filter((l) => l.msg.startsWith('redis store not answering'));
    assert.ok(stallLines.length >= 1 && stallLines.length <= 5, `${stallLines.length} stall lines`);
    assert.ok(stallLines.every((l) => l.redis === `127.0.0.1:${redis.port} db 0`), JSON.stringify(stallLines));
    // Each module whose check was skipped says so once per process: 4 modules in 2 workers, the
    // fuzzy storage, and the controller once per store its endpoints use (statistics, fuzzy).
    const moduleLines = srv.lines.filter((l) => /store unavailable/.test(l.msg));
    assert.ok(moduleLines.length >= 1 && moduleLines.length <= 2 * 4 + 1 + 2, moduleLines.map((l) => l.msg).join('\n'));
    const controllerLines = moduleLines.filter((l) => /store unavailable or failing/.test(l.msg));
    assert.ok(controllerLines.length <= 2, controllerLines.map((l) => l.msg).join('\n'));
  });

  test('Redis killed during scans and learns: scans answer without Bayes, learns get 503 fast, all recovers after the restart, no acknowledged learn lost', async () => {
    const base = await traffic('baseline', 4, forMs(1500));
    assert.ok(base.learned.every(storeAnswered), base.learned.map((l) => l.body).join('\n'));

    let stopped = false;
    const during = traffic('killing', 4, () => stopped);
    await sleep(300);
    await redis.kill();
    await sleep(1000);
    stopped = true;
    const inFlight = await during;
    for (const s of inFlight.scans) assert.equal(s.status, 200, s.body);

    let down;
    try {
      down = await traffic('down', 4, forMs(4000));
    } finally {
      await redis.restart();
    }
    assertDegradedPhase(down.scans, down.learned, down.added, base.scans, 'Redis killed');
    await untilBayes(20_000);
    await untilLearns(10_000);
    const after = await traffic('restarted', 4, forMs(1500));
    assert.ok(after.learned.every(storeAnswered), after.learned.map((l) => `${l.status} ${l.body}`).join('\n'));

    await assertNoAcknowledgedLearnLost();
    assert.deepEqual(workerExits(srv.lines), [], 'no worker restarted');
  });
});
