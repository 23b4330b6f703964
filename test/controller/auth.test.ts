// Authentication matrix (controller.md §2.3, §2.4, §2.7): every configuration × credential ×
// level, through real requests to a real controller; hashed passwords in Rspamd's $2$ format;
// secure_ip with IPv4/IPv6 CIDRs and the forwarded-for rules; logging and throttling of refusals.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { RequestHeaders, type Request } from '../../src/http/types.js';
import { Authenticator, compileSecureIp, normaliseIp, openAccessWarning } from '../../src/workers/controller/auth.js';
import { recordingLogger, request, startTestController } from './harness.js';

/** Every endpoint of the core families with its level (§2.7). */
const NORMAL = ['/auth', '/stat', '/metrics', '/counters', '/graph?type=day', '/pie', '/history', '/healthy', '/ready', '/neighbours', '/checkv2'];
const ENABLE = ['/statreset', '/errors', '/historyreset'];
const OPEN = ['/ping'];

function fakeRequest(peer: string, headers: Array<[string, string]> = [], query: Array<[string, string]> = []): Request {
  const h = new RequestHeaders();
  for (const [k, v] of headers) h.add(k, v);
  // The transport appends query parameters to the headers; the controller must see through that.
  for (const [k, v] of query) h.set(k, v);
  return { method: 'GET', path: '/auth', query: new Map(query), headers: h, body: Buffer.alloc(0), version: 'HTTP/1.1', peer: { address: peer, port: 1 }, tls: false };
}

test('auth table §2.4: configured passwords × sent password × level', () => {
  const { log } = recordingLogger();
  const both = new Authenticator({ password: 'P', enablePassword: 'E', secureIp: ['192.0.2.254'], failLimit: 0 }, log);
  const only = new Authenticator({ password: 'P', secureIp: ['192.0.2.254'], failLimit: 0 }, log);
  const none = new Authenticator({ secureIp: [], failLimit: 0 }, log);
  const noneSecure = new Authenticator({ secureIp: ['192.0.2.254'], failLimit: 0 }, log);
  const peer = '127.0.0.1';
  const pw = (p?: string) => fakeRequest(peer, p === undefined ? [] : [['Password', p]]);
  const decide = (a: Authenticator, p: string | undefined, level: 'normal' | 'enable') => {
    const o = a.check(pw(p), level);
    return o.ok ? (o.session.readOnly ? 'ro' : 'rw') : o.status;
  };
  // [authenticator, sent, normal-level outcome, enable-level outcome]
  const rows: Array<[string, Authenticator, string | undefined, unknown, unknown]> = [
    ['P,E none', both, undefined, 401, 401],
    ['P,E sends P', both, 'P', 'ro', 401],
    ['P,E sends E', both, 'E', 'rw', 'rw'],
    ['P,E sends wrong', both, 'x', 401, 401],
    ['P only sends P', only, 'P', 'rw', 'rw'],
    ['P only none', only, undefined, 401, 401],
    // 3.4 says read_only:true here though enable-level endpoints let it in (§8.4); we say what it can do.
    ['nothing configured, no secure_ip, none sent', none, undefined, 'rw', 'rw'],
    ['only enable_password, none sent', new Authenticator({ enablePassword: 'E', secureIp: [], failLimit: 0 }, log), undefined, 'ro', 401],
    ['nothing configured, password sent', none, 'x', 401, 401],
    ['nothing configured but secure_ip set', noneSecure, undefined, 401, 401],
    ['q1 refused', new Authenticator({ password: 'q1', secureIp: [], failLimit: 0 }, log), 'q1', 401, 401],
    ['q2 refused', new Authenticator({ password: 'P', enablePassword: 'q2', secureIp: [], failLimit: 0 }, log), 'q2', 401, 401],
    ['web UI null', both, 'null', 401, 401],
  ];
  for (const [name, a, sent, normal, enable] of rows) {
    assert.equal(decide(a, sent, 'normal'), normal, `${name} (normal)`);
    assert.equal(decide(a, sent, 'enable'), enable, `${name} (enable)`);
  }
});

test('password from the header wins over the query parameter; the query works alone', () => {
  const { log } = recordingLogger();
  const a = new Authenticator({ password: 'P', enablePassword: 'E', secureIp: [], failLimit: 0 }, log);
  assert.equal(a.check(fakeRequest('10.0.0.1', [], [['password', 'E']]), 'enable').ok, true);
  assert.equal(a.check(fakeRequest('10.0.0.1', [['Password', 'wrong']], [['password', 'E']]), 'enable').ok, false);
  assert.equal(a.check(fakeRequest('10.0.0.1', [['password', 'E']], [['password', 'wrong']]), 'enable').ok, true);
});

test('secure_ip: IPv4 and IPv6 CIDRs, mapped addresses, forwarded-for rules', () => {
  const { log } = recordingLogger();
  const a = new Authenticator({ password: 'P', secureIp: ['10.1.0.0/16', '2001:db8::/32', '::1'], failLimit: 0 }, log);
  const ok = (peer: string, headers: Array<[string, string]> = []) => a.check(fakeRequest(peer, headers), 'enable').ok;
  assert.equal(ok('10.1.200.3'), true);
  assert.equal(ok('::ffff:10.1.0.9'), true, 'IPv4-mapped IPv6 peer');
  assert.equal(ok('10.2.0.1'), false);
  assert.equal(ok('2001:db8:5::1'), true);
  assert.equal(ok('2001:db9::1'), false);
  assert.equal(ok('::1'), true);
  // A trusted proxy forwarding: the last hop decides.
  assert.equal(ok('10.1.0.1', [['X-Forwarded-For', '203.0.113.9, 10.1.3.3']]), true);
  assert.equal(ok('10.1.0.1', [['X-Forwarded-For', '10.1.3.3, 203.0.113.9']]), false);
  assert.equal(ok('10.1.0.1', [['X-Forwarded-For', 'garbage']]), false);
  assert.equal(ok('10.1.0.1', [['X-Real-IP', '203.0.113.9']]), false);
  assert.equal(ok('10.1.0.1', [['X-Real-IP', '10.1.9.9']]), true);
  // Forwarded untrusted client still gets in with the password.
  assert.equal(ok('10.1.0.1', [['X-Forwarded-For', '203.0.113.9'], ['Password', 'P']]), true);
  // An untrusted peer cannot claim a trusted address.
  assert.equal(ok('203.0.113.9', [['X-Forwarded-For', '10.1.0.1']]), false);
  assert.equal(normaliseIp('[::1]'), '::1');
  assert.throws(() => compileSecureIp(['10.0.0.0/33']), /invalid prefix/);
  assert.throws(() => compileSecureIp(['not-an-ip']), /not an IP/);
  assert.ok(compileSecureIp(['127.0.0.1']) instanceof BlockList);
});

test('the throttle counts distinct wrong passwords only, and then refuses every password from the address (issue 17 item 7)', () => {
  const { log, lines } = recordingLogger();
  const a = new Authenticator({ password: 'P', enablePassword: 'E', secureIp: ['192.0.2.254'], failLimit: 3 }, log);
  const t0 = 1_000_000;
  const at = (peer: string, pw: string | undefined, level: 'normal' | 'enable', t: number) => {
    const o = a.check(fakeRequest(peer, pw === undefined ? [] : [['Password', pw]]), level, t);
    return o.ok ? 'ok' : o.status;
  };
  const bad = '198.51.100.7';
  // Not guesses: no password, the same wrong password again, the read password on an enable endpoint.
  for (let i = 0; i < 50; i++) assert.equal(at(bad, undefined, 'normal', t0 + i), 401);
  for (let i = 0; i < 50; i++) assert.equal(at(bad, 'stale', 'normal', t0 + i), 401);
  for (let i = 0; i < 50; i++) assert.equal(at(bad, 'P', 'enable', t0 + i), 401);
  assert.equal(at(bad, 'P', 'normal', t0 + 60), 'ok', 'one wrong password repeated does not lock the right one out');
  const refused = lines.filter((l) => l.msg.startsWith('controller authentication refused'));
  assert.equal(refused.length, 150);
  assert.ok(refused.every((l) => l.extra?.peer === bad));
  assert.equal(lines.filter((l) => l.msg === 'controller authentication refused: wrong password').length, 1, 'the repeats were refused from memory');
  // Two more distinct guesses reach the limit of 3.
  assert.equal(at(bad, 'guess-1', 'normal', t0 + 100), 401);
  assert.equal(lines.some((l) => l.msg.startsWith('controller authentication throttled')), false);
  assert.equal(at(bad, 'guess-2', 'enable', t0 + 101), 401);
  assert.equal(lines.filter((l) => l.msg.startsWith('controller authentication throttled')).length, 1);
  // Throttled: a password is not looked at, right or wrong; without one it is a plain 401.
  assert.equal(at(bad, 'guess-3', 'normal', t0 + 200), 429);
  assert.equal(at(bad, 'P', 'normal', t0 + 200), 429);
  assert.equal(at(bad, 'E', 'enable', t0 + 200), 429);
  assert.equal(at(bad, undefined, 'normal', t0 + 200), 401);
  // Other addresses and the trusted one are not affected.
  assert.equal(at('198.51.100.8', 'P', 'normal', t0 + 200), 'ok');
  assert.equal(at('192.0.2.254', 'wrong', 'enable', t0 + 200), 'ok');
  // The first guess ("stale", t0 + 0..49) ages out first: one guess below the limit again.
  assert.equal(at(bad, 'P', 'normal', t0 + 60_050), 'ok');
  assert.equal(at(bad, 'guess-4', 'normal', t0 + 60_051), 401);
  assert.equal(at(bad, 'P', 'normal', t0 + 60_052), 429);
  assert.equal(at(bad, 'E', 'enable', t0 + 60_102), 'ok', 'guess-1 and guess-2 aged out: one guess left');
});

test('auth_fail_limit 0: no throttle, every wrong password is evaluated', () => {
  const { log, lines } = recordingLogger();
  const a = new Authenticator({ password: 'P', secureIp: [], failLimit: 0 }, log);
  for (let i = 0; i < 30; i++) assert.equal(a.check(fakeRequest('198.51.100.7', [['Password', `g${i % 3}`]]), 'normal').ok, false);
  assert.equal(a.check(fakeRequest('198.51.100.7', [['Password', 'P']]), 'normal').ok, true);
  assert.equal(lines.filter((l) => l.msg === 'controller authentication refused: wrong password').length, 30);
});

test('openAccessWarning: said when a level needs neither a password nor a trusted address', () => {
  assert.equal(openAccessWarning({ password: 'P', secureIp: [] }), undefined);
  assert.equal(openAccessWarning({ password: 'P', enablePassword: 'E', secureIp: ['127.0.0.1'] }), undefined);
  assert.equal(openAccessWarning({ enablePassword: 'E', secureIp: ['127.0.0.1'] }), undefined);
  assert.match(openAccessWarning({ secureIp: ['127.0.0.1', '::1'] })!, /^no controller password is configured: only secure_ip peers \(127\.0\.0\.1, ::1\)/);
  assert.match(openAccessWarning({ secureIp: [] })!, /anyone who can connect to the controller can read statistics and change thresholds/);
  assert.match(openAccessWarning({ enablePassword: 'E', secureIp: [] })!, /^no controller read password and no secure_ip/);
});

test('over HTTP: every core endpoint per level, with Rspamd $2$ (Catena) hashed passwords', async () => {
  // The fixtures' passwords, hashed by `rspamadm pw` (controller.md §2.5 test vectors).
  const ctl = await startTestController(
    '{ bind: "127.0.0.1:0", password: "$2$15e364hh3thatg4wek4ow7n9ae5t6ij3$7mzjydqqb894eeskpczxiuc7yr3npbbikcmf3rgca5eh8phes8py", enable_password: "$2$kdjr6smxmjhcm4x3sjrxi5s183cic5z1$jmpna3y6sffiduhfzjedoifx61umdz14giqje3pns6mern5gzhoy", secure_ip: "192.0.2.254", auth_fail_limit: 0 }',
  );
  try {
    const get = (path: string, pw?: string) => request(ctl.port, { method: 'GET', path, headers: pw ? [['Password', pw]] : [] });
    for (const path of NORMAL) {
      assert.equal((await get(path)).status, 401, `${path} without password`);
      assert.equal((await get(path, 'readpass')).status, 200, `${path} with the read password`);
      assert.equal((await get(path, 'enablepass')).status, 200, `${path} with the enable password`);
    }
    for (const path of ENABLE) {
      const r = await get(path, 'readpass');
      assert.equal(r.status, 401, `${path} with the read password`);
      assert.equal(r.body.toString(), '{"error":"Unauthorized"}');
      assert.equal((await get(path, 'enablepass')).status, 200, `${path} with the enable password`);
    }
    for (const path of OPEN) assert.equal((await get(path, 'wrong')).status, 200, path);
    const ro = JSON.parse((await get('/auth', 'readpass')).body.toString()) as { read_only: boolean };
    const rw = JSON.parse((await get('/auth', 'enablepass')).body.toString()) as { read_only: boolean };
    assert.deepEqual([ro.read_only, rw.read_only], [true, false]);
    assert.ok(ctl.lines.some((l) => l.msg.startsWith('controller authentication refused') && l.extra?.peer === '127.0.0.1'));
  } finally {
    await ctl.close();
  }
});
