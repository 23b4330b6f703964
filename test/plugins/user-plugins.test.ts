// Users' plugins on a real cluster (2 scan workers and a controller): the documented examples
// (docs/examples/plugins) are copied into a temporary local.d/plugins/ as they are, the
// TypeScript one compiled at load. Its symbols reach a local HTTP server, the test DNS server,
// the test Redis and a local TCP echo server in both call forms, on every worker; its endpoint
// answers at the right auth levels, scans and learns. A plugin with a syntax error and one
// that throws in setup are reported (log, /errors, configtest) and the server runs without them.

import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, createConnection, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { REPO_ROOT, runCli, type LogLine, type Running } from '../cli/run-cli.js';
import { startDnsServer, type DnsTestServer } from '../helpers/dns-server.js';
import { httpCall } from '../helpers/server-process.js';

const READ = 'readpass';
const ENABLE = 'enablepass';
const REDIS_KEY = `mailsift-test-plugin-${process.pid}-${Date.now()}`;
const SPAM = '/work/shared/fixtures/rspamd-test-messages/spam.eml';

const BROKEN_SYNTAX = `import type { Task } from 'nowhere';\nexport const plugin = {\n  name: 'broken_syntax',\n  setup(ctx: { symbol(x: unknown): void } {\n};\n`;
const THROWS = `export const plugin = {\n  name: 'throws_setup',\n  setup(): void {\n    throw new Error('no licence key configured');\n  },\n};\n`;

/** One Redis command over RESP on a fresh connection (the test's own, not the server's client). */
function redis(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = createConnection({ host: '127.0.0.1', port: 6379 });
    let out = '';
    sock.on('data', (d) => {
      out += d.toString();
      if (out.endsWith('\r\n')) sock.end(() => resolve(out));
    });
    sock.on('error', reject);
    sock.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}

let dir: string;
let http: HttpServer;
let tcp: TcpServer;
let dns: DnsTestServer;
let srv: Running;
let normalPort: number;
let controllerPort: number;

before(async () => {
  http = createHttpServer((req, res) => res.end(`hello ${req.method}`));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  tcp = createTcpServer((s) => s.on('data', (d) => s.write(d)).on('error', () => undefined));
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  dns = await startDnsServer({ zone: { 'plugin.example.test': [{ type: 'A', data: '192.0.2.77' }] } });
  assert.equal(await redis('SET', REDIS_KEY, 'from-redis'), '+OK\r\n');

  dir = await mkdtemp(join(tmpdir(), 'mailsift-plugins-'));
  const conf = join(dir, 'conf');
  await cp(join(REPO_ROOT, 'conf'), conf, { recursive: true });
  await mkdir(join(conf, 'local.d', 'plugins'), { recursive: true });
  await writeFile(join(conf, 'local.d', 'mailsift.yaml'), [
    'workers:',
    '  normal: { bind: "127.0.0.1:0", count: 2 }',
    `  controller: { bind: "127.0.0.1:0", password: ${READ}, enable_password: ${ENABLE}, secure_ip: [] }`,
    'logging: { level: info, format: json }',
    `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
    `dns: { nameserver: ["${dns.address}"] }`,
    '',
  ].join('\n'));
  await writeFile(join(conf, 'local.d', 'net_checks.yaml'), [
    `http_url: "http://127.0.0.1:${(http.address() as AddressInfo).port}/probe"`,
    'dns_name: plugin.example.test',
    `redis_key: ${REDIS_KEY}`,
    `tcp_port: ${(tcp.address() as AddressInfo).port}`,
    '',
  ].join('\n'));
  // The documented examples, as a user would copy them.
  for (const f of ['net_checks.ts', 'subject_words.mjs']) await cp(join(REPO_ROOT, 'docs', 'examples', 'plugins', f), join(conf, 'local.d', 'plugins', f));
  await writeFile(join(conf, 'local.d', 'plugins', 'broken_syntax.ts'), BROKEN_SYNTAX);
  await writeFile(join(conf, 'local.d', 'plugins', 'throws_setup.ts'), THROWS);

  srv = runCli(['serve', '-c', conf]);
  const listening = (worker: string) => (l: LogLine) => l.worker === worker && typeof l.port === 'number' && /^listening on /.test(l.msg);
  normalPort = (await srv.waitFor(listening('normal'), 'a scan worker to listen', 120_000)).port!;
  controllerPort = (await srv.waitFor(listening('controller'), 'the controller to listen', 120_000)).port!;
  await srv.waitFor((l) => /^started 2 normal worker/.test(l.msg), 'every worker to be ready', 120_000);
});

after(async () => {
  srv?.child.kill('SIGTERM');
  await srv?.exited;
  await Promise.all([new Promise((r) => http?.close(r)), new Promise((r) => tcp?.close(r)), dns?.close()]);
  await redis('DEL', REDIS_KEY).catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Sym = { score: number; options?: string[] };
async function scan(port: number, body: Buffer | string, headers: Record<string, string> = {}): Promise<Record<string, Sym>> {
  const r = await httpCall(port, 'POST', '/checkv2', Buffer.from(body), headers);
  assert.equal(r.status, 200, r.body.toString());
  return (JSON.parse(r.body.toString()) as { symbols: Record<string, Sym> }).symbols;
}

const MESSAGE = 'From: a@example.org\r\nTo: b@example.net\r\nSubject: you are a lottery winner\r\nMessage-ID: <p1@example.org>\r\n\r\nClaim it now.\r\n';

function assertNetSymbols(symbols: Record<string, Sym>, where: string): void {
  const opts = (n: string) => symbols[n]?.options ?? [];
  assert.equal(symbols.NET_CHECKS_FAIL, undefined, `${where}: ${JSON.stringify(symbols.NET_CHECKS_FAIL)}`);
  assert.deepEqual(opts('NET_CHECKS_HTTP'), ['awaited 200 hello GET', 'callback 200 hello GET'], where);
  assert.deepEqual(opts('NET_CHECKS_DNS'), ['awaited 192.0.2.77', 'callback 192.0.2.77'], where);
  assert.deepEqual(opts('NET_CHECKS_REDIS'), ['awaited from-redis', 'callback from-redis'], where);
  assert.deepEqual(opts('NET_CHECKS_TCP'), ['awaited ping-awaited', 'callback ping-callback'], where);
  assert.ok(symbols.NET_CHECKS_ALL, `${where}: the plugin's composite matched`);
  assert.deepEqual(opts('SUBJECT_WORD').sort(), ['lottery', 'winner'], where);
}

test('the TypeScript example plugin checks HTTP, DNS, Redis and TCP in both forms on every worker', async () => {
  // Every process that scans built its engine with the plugin: two scan workers and the controller.
  const loaded = new Set(srv.lines.filter((l) => l.msg === 'plugin loaded' && l.plugin === 'net_checks').map((l) => l.pid));
  assert.equal(loaded.size, 3, srv.output());
  for (let i = 0; i < 6; i++) assertNetSymbols(await scan(normalPort, MESSAGE), `scan ${i} on the scan port`);
  assertNetSymbols(await scan(controllerPort, MESSAGE, { Password: READ }), '/checkv2 on the controller');
  const asked = dns.queries.filter((q) => q.name === 'plugin.example.test');
  assert.ok(asked.length >= 1, 'the DNS server was asked');
});

test("the plugin's endpoints answer at their auth level; need_task scans and learns", async () => {
  const spam = await readFile(SPAM);
  const verdict = (pass?: string, query = '') => httpCall(controllerPort, 'POST', `/plugins/net_checks/verdict${query}`, spam, pass ? { Password: pass } : {});
  assert.equal((await verdict()).status, 401);
  assert.equal((await verdict(READ)).status, 401, 'enable: true needs the enable password');
  const ok = await verdict(ENABLE, '?learn=spam');
  assert.equal(ok.status, 200, ok.body.toString());
  const body = JSON.parse(ok.body.toString()) as { symbols: string[]; learned: string; action: string };
  assert.deepEqual(body.symbols, ['NET_CHECKS_ALL', 'NET_CHECKS_DNS', 'NET_CHECKS_HTTP', 'NET_CHECKS_REDIS', 'NET_CHECKS_TCP']);
  assert.equal(body.learned, 'spam');
  // The task really learned: the same message again is refused by the Bayes classifier.
  const again = await verdict(ENABLE, '?learn=spam');
  assert.equal(again.status, 208, again.body.toString());
  const targets = await httpCall(controllerPort, 'GET', '/plugins/net_checks/targets', undefined, { Password: READ });
  assert.equal(targets.status, 200);
  assert.equal((JSON.parse(targets.body.toString()) as { dns: string }).dns, 'plugin.example.test');
  const list = JSON.parse((await httpCall(controllerPort, 'GET', '/plugins', undefined, { Password: READ })).body.toString()) as Record<string, { paths: string[] }>;
  assert.deepEqual(list.net_checks?.paths.sort(), ['/plugins/net_checks/targets', '/plugins/net_checks/verdict']);
  assert.deepEqual(list.subject_words?.paths, ['/plugins/subject_words/count']);
  const count = await httpCall(controllerPort, 'GET', '/plugins/subject_words/count?sender=a@example.org', undefined, { Password: READ });
  assert.equal(count.status, 200, count.body.toString());
});

test('a plugin with a syntax error and one that throws in setup: logged, in /errors, in configtest; the rest runs', async () => {
  const disabled = srv.lines.find((l) => /^plugin disabled: /.test(l.msg) && String(l.file).endsWith('broken_syntax.ts'));
  assert.ok(disabled, srv.output());
  assert.match(disabled.msg, /broken_syntax\.ts:4:\d+: /, 'the compile error names line and column');
  const setup = srv.lines.find((l) => l.msg === 'module setup failed' && l.module === 'throws_setup');
  assert.ok(setup, srv.output());
  assert.equal(setup.error, 'no licence key configured');
  const ring = await httpCall(controllerPort, 'GET', '/errors', undefined, { Password: ENABLE });
  const messages = (JSON.parse(ring.body.toString()) as Array<{ message: string }>).map((e) => e.message);
  assert.ok(messages.some((m) => /^plugin disabled: .*broken_syntax\.ts:4/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => /module setup failed/.test(m)), messages.join('\n'));

  const ct = runCli(['configtest', '-c', join(dir, 'conf')]);
  const { code } = await ct.exited;
  const out = ct.output();
  assert.equal(code, 1, out);
  assert.match(out, /local\.d\/plugins\/broken_syntax\.ts: expected a plugin that loads, found .*broken_syntax\.ts:4:\d+: /);
  assert.match(out, /throws_setup\.ts.*no licence key configured/);
  assert.doesNotMatch(out, /net_checks|subject_words/, 'the good plugins pass');
});
