// The controller's full authentication matrix (issue 17): every route of the route table (as
// the code registers it, so a new route is covered without editing this file) × no / wrong /
// read / enable password × password in the `Password` header or the `password` query
// parameter × a trusted or an untrusted peer, on the shipped configuration (its secure_ip is
// the trusted-loopback default) with the two passwords added in local.d. One machine gives
// both peers: the controller listens on 127.0.0.1, and Linux routes all of 127/8 to lo, so a
// client bound to 127.0.0.2 is a second, untrusted source. Then the throttle, end to end.

import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type LoadedConfig } from '../../src/config/load.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { startFuzzyServer } from '../../src/fuzzy-storage/storage-server.js';
import { builtinModules } from '../../src/modules/index.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/storage/types.js';
import { AUTH_FAIL_LIMIT } from '../../src/workers/controller/auth.js';
import { startControllerWorker, type RunningController } from '../../src/workers/controller/index.js';
import type { AuthLevel } from '../../src/workers/controller/types.js';
import { MemoryFuzzyStore } from '../fuzzy/memory-store.js';
import { recordingLogger, type LogRecord } from './harness.js';

const READ = 'readpass';
const ENABLE = 'enablepass';
const WRONG = 'not-the-password';
const TRUSTED = '127.0.0.1';
const UNTRUSTED = '127.0.0.2';

/**
 * Levels from controller.md §2.7 (and §5.5, §9 for the master-era routes), written out here so
 * a route whose level changes in the code fails the matrix; routes missing from this table are
 * tested at the level the code gives them.
 */
const LEVELS: Record<string, AuthLevel> = {
  '/ping': 'none',
  '/auth': 'normal', '/stat': 'normal', '/metrics': 'normal', '/counters': 'normal', '/symbols': 'normal', '/actions': 'normal',
  '/maps': 'normal', '/getmap': 'normal', '/graph': 'normal', '/pie': 'normal', '/history': 'normal', '/healthy': 'normal',
  '/ready': 'normal', '/neighbours': 'normal', '/plugins': 'normal', '/scan': 'normal', '/check': 'normal', '/checkv2': 'normal', '/checkexplain': 'normal',
  '/plugins/maps/list': 'normal', '/plugins/maps/query': 'normal', '/plugins/maps/query_specific': 'normal', '/plugins/maps/query_json': 'normal',
  '/bayes/classifiers': 'normal', '/plugins/fuzzy/hashes': 'normal', '/plugins/fuzzy/storages': 'normal',
  '/plugins/selectors/list_extractors': 'enable', '/plugins/selectors/list_transforms': 'enable',
  '/plugins/selectors/check_selector': 'enable', '/plugins/selectors/check_message': 'enable',
  '/statreset': 'enable', '/errors': 'enable', '/historyreset': 'enable', '/saveactions': 'enable', '/savesymbols': 'enable',
  '/savemap': 'enable', '/learnspam': 'enable', '/learnham': 'enable', '/fuzzyadd': 'enable', '/fuzzydel': 'enable', '/fuzzydelhash': 'enable',
  '/plugins/neural/learn': 'enable', '/plugins/neural/status': 'normal',
};

const MESSAGE = 'From: a@example.com\r\nTo: b@example.net\r\nSubject: matrix\r\nMessage-ID: <matrix@example.com>\r\n\r\nHello from the auth matrix.\r\n';

/** What a let-in request sends, and what the route itself answers to it (default: GET, 200). */
interface Probe {
  method?: 'GET' | 'POST';
  query?: string;
  headers?: Array<[string, string]>;
  body?: string;
  status?: number;
  reason?: string;
}

function probes(engine: Engine): Record<string, Probe> {
  const sym = engine.symbols().find((s) => s.name === 'MIME_GOOD')!;
  return {
    '/graph': { query: 'type=day' },
    '/history': { query: 'from=0&to=9' },
    '/saveactions': { method: 'POST', body: '[15,null,6,4]' },
    // The configured score again: the route answers that nothing changed (its own reply, past auth).
    '/savesymbols': { method: 'POST', body: JSON.stringify([{ name: sym.name, value: engine.configuredScore(sym.name) }]), status: 404, reason: 'No symbols to save' },
    '/getmap': { status: 400, reason: 'Id header missing' },
    '/savemap': { method: 'POST', headers: [['Map', '1']], body: 'x\n', status: 404, reason: 'Map id not found' },
    '/checkv2': { method: 'POST', body: MESSAGE },
    '/check': { method: 'POST', body: MESSAGE },
    '/scan': { method: 'POST', body: MESSAGE },
    '/checkexplain': { method: 'POST', body: MESSAGE },
    '/plugins/selectors/check_selector': { query: 'selector=ip' },
    '/plugins/selectors/check_message': { method: 'POST', query: 'selector=ip', body: MESSAGE },
    '/learnspam': { method: 'POST', status: 400, reason: 'Empty body is not permitted' },
    '/learnham': { method: 'POST', status: 400, reason: 'Empty body is not permitted' },
    '/fuzzyadd': { method: 'POST', headers: [['Flag', '1']], status: 400, reason: 'Empty body is not permitted' },
    '/fuzzydel': { method: 'POST', headers: [['Flag', '1']], status: 400, reason: 'Empty body is not permitted' },
    '/fuzzydelhash': { headers: [['Flag', '1'], ['Hash', 'ab'.repeat(64)]] },
    '/plugins/fuzzy/hashes': { method: 'POST', query: 'flag=1', body: MESSAGE },
    '/plugins/maps/query': { query: 'value=192.0.2.1' },
    '/plugins/maps/query_specific': { query: 'maps=none&value=192.0.2.1', status: 404, reason: 'no such map: none' },
    '/plugins/maps/query_json': { method: 'POST', body: '{"values":["192.0.2.1"]}' },
    '/plugins/neural/learn': { method: 'POST', body: '{}', status: 404, reason: 'neural module is not configured' },
    '/whatif': { method: 'POST', body: '{"actions":[15,null,6,5]}' },
  };
}

interface Reply {
  status: number;
  reason: string;
  body: string;
}

/** One request on a fresh connection from `peer` (the client's local address). */
function send(port: number, peer: string, method: string, path: string, headers: Array<[string, string]>, body = ''): Promise<Reply> {
  const b = Buffer.from(body);
  let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  if (b.length > 0 || method === 'POST') head += `Content-Length: ${b.length}\r\n`;
  return new Promise((resolve, reject) => {
    const sock = connect({ host: TRUSTED, port, localAddress: peer });
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('end', () => {
      const all = Buffer.concat(chunks);
      const sep = all.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.1 (\d{3}) ?(.*)$/.exec(all.subarray(0, all.indexOf('\r\n')).toString('latin1'));
      if (!m || sep < 0) return reject(new Error(`bad reply: ${all.toString('latin1').slice(0, 200)}`));
      resolve({ status: Number(m[1]), reason: m[2]!, body: all.subarray(sep + 4).toString('utf8') });
    });
    sock.end(Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), b]));
  });
}

type Credential = 'none' | 'wrong' | 'read' | 'enable';
type Placement = 'header' | 'query';
const PASSWORDS: Record<Exclude<Credential, 'none'>, string> = { wrong: WRONG, read: READ, enable: ENABLE };

/** The request of one cell: the route's probe with the password put where the cell says. */
function cellRequest(path: string, probe: Probe, cred: Credential, where: Placement): { method: string; target: string; headers: Array<[string, string]> } {
  const headers = [...(probe.headers ?? [])];
  const params = probe.query ? [probe.query] : [];
  if (cred !== 'none' && where === 'header') headers.push(['Password', PASSWORDS[cred]]);
  if (cred !== 'none' && where === 'query') params.push(`password=${encodeURIComponent(PASSWORDS[cred])}`);
  return { method: probe.method ?? 'GET', target: params.length ? `${path}?${params.join('&')}` : path, headers };
}

/** The expected status of a cell: the route's own answer when let in, 401 otherwise (controller.md §2.3). */
function letIn(level: AuthLevel, cred: Credential, peer: string): boolean {
  if (level === 'none' || peer === TRUSTED) return true;
  if (cred === 'enable') return true;
  return cred === 'read' && level === 'normal';
}

interface Server {
  tmp: string;
  config: LoadedConfig;
  engine: Engine;
  stores: Stores;
  ctl: RunningController;
  lines: LogRecord[];
  close(): Promise<void>;
}

/** The shipped conf/ with `local` (local.d/mailsift.yaml) and a fuzzy rule on a real storage. */
async function startOnShippedConf(local: string, bindHost = TRUSTED): Promise<Server> {
  const tmp = await mkdtemp(join(tmpdir(), 'mailsift-auth-matrix-'));
  const fuzzy = await startFuzzyServer({ store: new MemoryFuzzyStore(), bind: '127.0.0.1:0' });
  await cp('conf', join(tmp, 'conf'), { recursive: true });
  await mkdir(join(tmp, 'conf', 'local.d'), { recursive: true });
  await writeFile(join(tmp, 'conf', 'local.d', 'mailsift.yaml'), local);
  await writeFile(join(tmp, 'conf', 'local.d', 'fuzzy_check.yaml'), ['rules:', '  local:', `    servers: "127.0.0.1:${fuzzy.address.port}"`, '    mime_types: ["*"]', '    fuzzy_map: { LOCAL_FUZZY_DENIED: { flag: 1, max_score: 20 } }', ''].join('\n'));
  // data_dir is ../data from the conf directory: inside tmp.
  const config = await loadConfig(join(tmp, 'conf'));
  const { log, lines } = recordingLogger();
  const stores = await openStores(config, log);
  const engine = await createEngine(config.engine, builtinModules, { log, stores });
  const ctl = await startControllerWorker({ host: bindHost, port: 0, log, context: { log, config, engine, stores } });
  return {
    tmp, config, engine, stores, ctl, lines,
    async close() {
      await ctl.close();
      engine.maps().close();
      await stores.close();
      await fuzzy.close();
      await rm(tmp, { recursive: true, force: true });
    },
  };
}

const WITH_PASSWORDS = ['workers:', '  normal: { bind: "127.0.0.1:0" }', `  controller: { bind: "127.0.0.1:0", password: ${READ}, enable_password: ${ENABLE} }`, 'logging: { level: silent }', ''].join('\n');

describe('auth matrix on the shipped configuration', () => {
  let srv: Server;
  before(async () => {
    srv = await startOnShippedConf(WITH_PASSWORDS);
  });
  after(async () => {
    await srv.close();
  });

  it('the shipped secure_ip is the loopback default of Rspamd (127.0.0.1 and ::1)', () => {
    assert.deepEqual(srv.config.workers.controller.secureIp, ['127.0.0.1', '::1']);
  });

  it('every route × credential × placement × peer answers as §2.3 says, and never 429 for a repeated wrong password', async () => {
    const table = probes(srv.engine);
    const routes = srv.ctl.routes;
    assert.ok(routes.length >= Object.keys(LEVELS).length, 'the route table lists the routes');
    const failures: string[] = [];
    let cells = 0;
    for (const route of routes) {
      const level = LEVELS[route.path] ?? route.level;
      if (LEVELS[route.path] !== undefined) assert.equal(route.level, LEVELS[route.path], `${route.path}: level in the code`);
      const probe = table[route.path] ?? {};
      for (const peer of [TRUSTED, UNTRUSTED]) {
        for (const cred of ['none', 'wrong', 'read', 'enable'] as const) {
          for (const where of cred === 'none' ? (['header'] as const) : (['header', 'query'] as const)) {
            const req = cellRequest(route.path, probe, cred, where);
            const r = await send(srv.ctl.port, peer, req.method, req.target, req.headers, probe.body);
            cells++;
            const cell = `${route.path} [${level}] ${cred} password${cred === 'none' ? '' : ` in ${where}`} from ${peer === TRUSTED ? 'trusted' : 'untrusted'} ${peer}`;
            if (letIn(level, cred, peer)) {
              const want = probe.status ?? 200;
              if (r.status !== want || (probe.reason !== undefined && r.reason !== probe.reason)) {
                failures.push(`${cell}: let in, expected ${want} ${probe.reason ?? ''}, got ${r.status} ${r.reason} ${r.body.slice(0, 120)} (a new route needs a probe in probes())`);
              }
            } else if (r.status !== 401 || r.body !== '{"error":"Unauthorized"}') {
              failures.push(`${cell}: expected 401 Unauthorized, got ${r.status} ${r.reason}`);
            }
            if (r.status === 200 && (route.path === '/auth' || route.path === '/stat')) {
              // read_only says whether enable-level routes would let this session in.
              const ro = (JSON.parse(r.body) as { read_only: boolean }).read_only;
              const canWrite = letIn('enable', cred, peer);
              if (ro !== !canWrite) failures.push(`${cell}: read_only ${ro} but enable-level routes ${canWrite ? 'let it in' : 'refuse it'}`);
            }
          }
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.equal(cells, routes.length * 2 * 7);
    console.log(`# ${cells} cells over ${routes.length} routes`);
    // The untrusted peer sent the same wrong password on every route: one guess, no throttle.
    assert.equal(srv.lines.filter((l) => l.msg.startsWith('controller authentication throttled')).length, 0);
    assert.equal(srv.lines.filter((l) => l.msg === 'controller authentication refused: wrong password').length, 1);
  });

  it(`${AUTH_FAIL_LIMIT} different wrong passwords throttle an untrusted address, for any password, and nothing else`, async () => {
    const guesser = '127.0.0.5';
    const stat = (peer: string, pw?: string) => send(srv.ctl.port, peer, 'GET', '/stat', pw === undefined ? [] : [['Password', pw]]);
    // A scraper without a password and a client with a stale one on another address: never throttled.
    const scraper = '127.0.0.6';
    for (let i = 0; i < 3 * AUTH_FAIL_LIMIT; i++) {
      assert.equal((await send(srv.ctl.port, scraper, 'GET', '/metrics', [])).status, 401);
      assert.equal((await stat(scraper, 'stale-password')).status, 401);
    }
    assert.equal((await stat(scraper, READ)).status, 200, 'the right password still works beside a password-less scraper');
    // The read password used on write endpoints is not a guess either.
    for (let i = 0; i < 2 * AUTH_FAIL_LIMIT; i++) assert.equal((await send(srv.ctl.port, scraper, 'GET', '/errors', [['Password', READ]])).status, 401);
    assert.equal((await send(srv.ctl.port, scraper, 'GET', '/errors', [['Password', ENABLE]])).status, 200);

    for (let i = 0; i < AUTH_FAIL_LIMIT; i++) assert.equal((await stat(guesser, `guess-${i}`)).status, 401, `guess ${i}`);
    const throttled = await stat(guesser, READ);
    assert.deepEqual([throttled.status, throttled.reason, throttled.body], [429, 'Too many authentication failures', '{"error":"Too many authentication failures"}']);
    assert.equal((await send(srv.ctl.port, guesser, 'GET', '/saveactions?password=enablepass', [])).status, 429, 'the query parameter too');
    assert.equal((await stat(guesser)).status, 401, 'no password: a plain refusal, not 429');
    assert.equal((await send(srv.ctl.port, guesser, 'GET', '/ping', [['Password', READ]])).status, 200, 'routes without authentication are not throttled');
    assert.equal((await stat('127.0.0.7', READ)).status, 200, 'another address is not affected');
    assert.equal(srv.lines.filter((l) => l.msg.startsWith('controller authentication throttled') && l.extra?.peer === guesser).length, 1);
  });

  it('a trusted address is never throttled: wrong passwords from it are let in', async () => {
    for (let i = 0; i < 3 * AUTH_FAIL_LIMIT; i++) {
      const r = await send(srv.ctl.port, TRUSTED, 'GET', '/errors', [['Password', `trusted-guess-${i}`]]);
      assert.equal(r.status, 200, `request ${i}`);
    }
    const auth = await send(srv.ctl.port, TRUSTED, 'GET', '/auth', [['Password', READ]]);
    assert.equal(auth.status, 200);
    assert.equal((JSON.parse(auth.body) as { read_only: boolean }).read_only, false);
  });
});

describe('the trusted-loopback default without passwords', () => {
  const NO_PASSWORDS = ['workers:', '  normal: { bind: "127.0.0.1:0" }', '  controller: { bind: "127.0.0.1:0" }', 'logging: { level: silent }', ''].join('\n');

  it('loopback gets full access, another address 401, and the open controller is named at start and in /auth', async () => {
    const srv = await startOnShippedConf(NO_PASSWORDS);
    try {
      const warn = srv.lines.find((l) => l.level === 'warn' && l.msg.startsWith('no controller password is configured'));
      assert.ok(warn, 'a start-up warning');
      assert.equal(warn.msg, 'no controller password is configured: only secure_ip peers (127.0.0.1, ::1) can use the controller');
      for (const cred of ['none', 'wrong', 'read', 'enable'] as const) {
        const headers: Array<[string, string]> = cred === 'none' ? [] : [['Password', PASSWORDS[cred]]];
        const auth = await send(srv.ctl.port, TRUSTED, 'GET', '/auth', headers);
        assert.equal(auth.status, 200, cred);
        const doc = JSON.parse(auth.body) as { read_only: boolean; warning?: string };
        assert.deepEqual([doc.read_only, doc.warning], [false, warn.msg]);
        assert.equal((await send(srv.ctl.port, TRUSTED, 'POST', '/saveactions', headers, '[15,null,6,4]')).status, 200);
        assert.equal((await send(srv.ctl.port, UNTRUSTED, 'GET', '/stat', headers)).status, 401, `${cred} from ${UNTRUSTED}`);
        assert.equal((await send(srv.ctl.port, UNTRUSTED, 'POST', '/saveactions', headers, '[15,null,6,4]')).status, 401);
      }
    } finally {
      await srv.close();
    }
  });

  it('::1 is trusted too', async () => {
    const srv = await startOnShippedConf(NO_PASSWORDS, '::1');
    try {
      const r = await new Promise<Reply>((resolve, reject) => {
        const sock = connect({ host: '::1', port: srv.ctl.port });
        const chunks: Buffer[] = [];
        sock.on('data', (c: Buffer) => chunks.push(c));
        sock.on('error', reject);
        sock.on('end', () => {
          const all = Buffer.concat(chunks).toString('latin1');
          resolve({ status: Number(all.slice(9, 12)), reason: '', body: all.slice(all.indexOf('\r\n\r\n') + 4) });
        });
        sock.end('GET /errors HTTP/1.1\r\nConnection: close\r\n\r\n');
      });
      assert.equal(r.status, 200, r.body);
    } finally {
      await srv.close();
    }
  });
});

describe('a controller with no password and no secure_ip', () => {
  it('says so, and read_only is false because writes are let in (3.4 said true)', async () => {
    const local = ['workers:', '  normal: { bind: "127.0.0.1:0" }', '  controller: { bind: "127.0.0.1:0", secure_ip: [] }', 'logging: { level: silent }', ''].join('\n');
    const srv = await startOnShippedConf(local);
    try {
      assert.ok(srv.lines.some((l) => l.level === 'warn' && l.msg.startsWith('no controller password and no secure_ip are configured: anyone who can connect')));
      const auth = JSON.parse((await send(srv.ctl.port, UNTRUSTED, 'GET', '/auth', [])).body) as { read_only: boolean; warning?: string };
      assert.equal(auth.read_only, false);
      assert.match(auth.warning ?? '', /^no controller password and no secure_ip/);
      const stat = JSON.parse((await send(srv.ctl.port, UNTRUSTED, 'GET', '/stat', [])).body) as { read_only: boolean };
      assert.equal(stat.read_only, false);
      assert.equal((await send(srv.ctl.port, UNTRUSTED, 'POST', '/saveactions', [], '[15,null,6,4]')).status, 200, 'what read_only:false promises');
    } finally {
      await srv.close();
    }
  });
});
