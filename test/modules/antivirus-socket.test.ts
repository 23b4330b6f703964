// The antivirus module reaching its scanners over Unix-domain sockets, as Debian's clamav-daemon
// listens by default: a real clamd on a LocalSocket (and on TCP, for the mixed server lists), a
// line-protocol scanner on a socket, a socket path with nothing behind it, and the config rules
// (a path is a server for clamav and tcp rules, refused for http ones).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { isConfigError, type ConfigIssue } from '../../src/config/errors.js';
import { AntivirusConfig } from '../../src/modules/antivirus/config.js';
import { compileRule, parseServer, serverName } from '../../src/modules/antivirus/rule.js';
import { clamdCommand, hashSignature, startClamd, type Clamd } from '../helpers/clamd.js';
import { freePort } from '../helpers/real-rspamd.js';
import { engineConfig, fixtureMessage, loadModuleYaml, meta, names, symbol, testMessage } from './helpers.js';

/** A real message whose attachment (hello_world.exe) the test signature names. */
const INFECTED = testMessage('exe_attm.eml');
const ATTACHMENT = Buffer.from(/BASE64\r?\n\r?\n([A-Za-z0-9+/=\r\n]+?)\r?\n\r?\n/.exec(INFECTED.toString('latin1'))![1]!, 'base64');
const EXE_FOUND = 'Mailsift.Socket.Exe.UNOFFICIAL';
const CLEAN = testMessage('fname.eml');
const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);

let clamd: Clamd;
let socket: string;
/** A directory for this file's own sockets; nothing listens at `missing`. */
let dir: string;
let missing: string;

before(async () => {
  assert.ok(ATTACHMENT.length > 20, 'the fixture attachment was decoded');
  clamd = await startClamd({ 'test.hdb': [hashSignature('Mailsift.Socket.Exe', ATTACHMENT)] }, { tcp: true, socket: true });
  socket = clamd.socket!;
  dir = await mkdtemp(join(tmpdir(), 'mailsift-av-sock-'));
  missing = join(dir, 'nobody-home.sock');
});

after(async () => {
  await clamd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function clamavWith(rule: Record<string, unknown>) {
  return createEngine(engineConfig({ antivirus: { rules: { clamav: rule } } }), builtinModules);
}

test('the private clamd answers on its socket (the socket and the signature are right)', async () => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(ATTACHMENT.length);
  assert.equal(await clamdCommand(socket, Buffer.concat([Buffer.from('zINSTREAM\0'), len, ATTACHMENT, Buffer.alloc(4)])), `stream: ${EXE_FOUND} FOUND`);
});

test('clamd on a socket path: an infected attachment gives CLAM_VIRUS with its name and the reject', async () => {
  const r = await (await clamavWith({ servers: [socket], action: 'reject' })).scan(INFECTED, meta());
  assert.deepEqual(symbol(r, 'CLAM_VIRUS')?.options, [EXE_FOUND]);
  assert.ok(!names(r).has('CLAM_VIRUS_FAIL'));
  assert.equal(r.action, 'reject');
  assert.equal(r.messages['smtp_message'], `clamav: virus found: "${EXE_FOUND}"`);
});

test('clamd on a socket path: a clean message gets no antivirus symbol', async () => {
  const s = await clamavWith({ servers: socket, action: 'reject' });
  for (const msg of [CLEAN, fixtureMessage('ham.eml')]) {
    const r = await s.scan(msg, meta());
    assert.ok(!names(r).has('CLAM_VIRUS'));
    assert.ok(!names(r).has('CLAM_VIRUS_FAIL'));
    assert.notEqual(r.action, 'reject');
  }
});

test('a socket path with nothing listening: CLAM_VIRUS_FAIL naming the path, and the scan goes on', async () => {
  const started = Date.now();
  const r = await (await clamavWith({ servers: [missing], action: 'reject', retransmits: 1, timeout: 1 })).scan(INFECTED, meta());
  assert.ok(Date.now() - started < 3000, 'a missing socket does not wait for the timeout');
  const fail = symbol(r, 'CLAM_VIRUS_FAIL')?.options?.[0] ?? '';
  assert.ok(fail.includes(`(${missing}: unable to make connection to the host ${missing}: connect ENOENT`), fail);
  assert.ok(!fail.includes(`${missing}:0`), 'no port is shown for a path');
  assert.ok(!names(r).has('CLAM_VIRUS'));
  assert.notEqual(r.action, 'reject');
  assert.ok(r.symbols.some((x) => x.name !== 'CLAM_VIRUS_FAIL'), 'the other rules ran');
});

test('a path that is no listening socket (here a plain file) is a failure too', async () => {
  const stale = join(dir, 'stale.sock');
  await writeFile(stale, '');
  const r = await (await clamavWith({ servers: [stale], retransmits: 0 })).scan(INFECTED, meta());
  assert.match(symbol(r, 'CLAM_VIRUS_FAIL')?.options?.[0] ?? '', /unable to make connection to the host .*stale\.sock: connect ECONNREFUSED/);
});

test('mixed TCP and socket servers: a network failure on one kind is retried on the other', async () => {
  const deadPort = await freePort();
  // Round-robin starts at the first server; the retransmit reaches the second.
  for (const servers of [[missing, `127.0.0.1:${clamd.port}`], [`127.0.0.1:${deadPort}`, socket]]) {
    const r = await (await clamavWith({ servers, retransmits: 1 })).scan(INFECTED, meta());
    assert.deepEqual(symbol(r, 'CLAM_VIRUS')?.options, [EXE_FOUND], servers.join(' '));
    assert.ok(!names(r).has('CLAM_VIRUS_FAIL'));
  }
  // Without a retransmit, scans alternate between the two: one fails on the dead socket, the next
  // one finds the virus over TCP, and so on.
  const s = await clamavWith({ servers: [missing, `127.0.0.1:${clamd.port}`], retransmits: 0, cache_expire: 0 });
  const seen: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await s.scan(INFECTED, meta());
    seen.push(names(r).has('CLAM_VIRUS') ? 'found' : names(r).has('CLAM_VIRUS_FAIL') ? 'fail' : 'none');
  }
  assert.deepEqual(seen, ['fail', 'found', 'fail', 'found']);
});

test('the TCP line hook on a socket path', async () => {
  const path = join(dir, 'line.sock');
  const seen: Buffer[] = [];
  const server = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const nl = buf.indexOf(10);
      const m = nl < 0 ? null : /^SCAN (\d+)$/.exec(buf.subarray(0, nl).toString('latin1'));
      if (!m || buf.length - nl - 1 < Number(m[1])) return;
      const content = buf.subarray(nl + 1, nl + 1 + Number(m[1]));
      seen.push(Buffer.from(content));
      sock.end(content.includes(ELF_MAGIC) ? 'FOUND Test.Elf.Socket\n' : 'OK\n');
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(path, r));
  try {
    const e = await createEngine(engineConfig({ antivirus: { rules: { ext: { type: 'tcp', servers: path, action: 'reject' } } } }), builtinModules);
    const r = await e.scan(INFECTED, meta());
    assert.deepEqual(symbol(r, 'EXT_VIRUS')?.options, ['Test.Elf.Socket']);
    assert.equal(r.action, 'reject');
    assert.equal(seen.length, 1);
    assert.ok(seen[0]!.subarray(0, 4).equals(ELF_MAGIC));
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('parseServer: a path is the host, with no port', () => {
  const s = parseServer('/var/run/clamav/clamd.ctl', 3310);
  assert.deepEqual(s, { host: '/var/run/clamav/clamd.ctl' });
  assert.equal(serverName(s), '/var/run/clamav/clamd.ctl');
  assert.equal(serverName(parseServer('10.0.0.1', 3310)), '10.0.0.1:3310');
  // A rule built without the config schema still refuses a path for http.
  const opts = AntivirusConfig.parse({ rules: { c: { type: 'clamav', servers: '/run/c.sock' } } }).rules['c']!;
  assert.throws(() => compileRule('web', { ...opts, type: 'http' }, false), /rule web is of type http, which cannot use a socket path/);
});

const loadWith = (yaml: string) => loadModuleYaml('antivirus', yaml);

async function issuesOf(yaml: string): Promise<readonly ConfigIssue[]> {
  try {
    await loadWith(yaml);
  } catch (err) {
    assert.ok(isConfigError(err), String(err));
    return (err as { issues: readonly ConfigIssue[] }).issues;
  }
  return [];
}

test('config: a clamav (or tcp) rule with a socket path loads; Debian\'s default path among TCP servers', async () => {
  const cfg = await loadWith('rules:\n  clamav:\n    servers: ["/var/run/clamav/clamd.ctl", "127.0.0.1:3310"]\n  line:\n    type: tcp\n    servers: /run/scanner.sock\n');
  const rules = AntivirusConfig.parse(cfg.engine.modules['antivirus']).rules;
  assert.deepEqual(rules['clamav']!.servers, ['/var/run/clamav/clamd.ctl', '127.0.0.1:3310']);
  assert.deepEqual(rules['line']!.servers, ['/run/scanner.sock']);
});

test('config: an http rule with a socket path is refused, naming the rule', async () => {
  for (const [yaml, rule] of [
    ['rules:\n  web:\n    type: http\n    servers: ["127.0.0.1:8080", "/run/web.sock"]\n', 'web'],
    // A rule called http is an http rule without saying so.
    ['rules:\n  http:\n    servers: /run/web.sock\n', 'http'],
  ] as const) {
    const issues = await issuesOf(yaml);
    const hit = issues.find((i) => i.path.includes(`rules.${rule}.servers`));
    assert.ok(hit, `${yaml}: ${JSON.stringify(issues)}`);
    assert.match(JSON.stringify(hit), new RegExp(`rule ${rule} is of type http.*socket path`));
  }
});

test('config: a relative path or one longer than a socket address holds is refused', async () => {
  for (const [server, why] of [
    ['run/clamd.ctl', /host\[:port\]/],
    [`/${'d'.repeat(120)}/clamd.ctl`, /longer than the 107/],
  ] as const) {
    const issues = await issuesOf(`rules:\n  clamav:\n    servers: "${server}"\n`);
    const hit = issues.find((i) => /servers/.test(i.path));
    assert.ok(hit, `${server}: ${JSON.stringify(issues)}`);
    assert.match(JSON.stringify(hit), why);
  }
});
