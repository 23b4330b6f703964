// Authentication matrix (controller.md §2.3, §2.4, §2.7): every configuration × credential ×
// level, through real requests to a real controller; hashed passwords in Rspamd's $2$ format;
// secure_ip with IPv4/IPv6 CIDRs and the forwarded-for rules; logging and throttling of refusals.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { RequestHeaders, type Request } from '../../src/http/types.js';
import { Authenticator, compileSecureIp, normaliseIp } from '../../src/workers/controller/auth.js';
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
    ['nothing configured, no secure_ip, none sent', none, undefined, 'ro', 'rw'],
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

test('refusals are logged with the peer and throttled per address (429 before any hash)', () => {
  const { log, lines } = recordingLogger();
  const a = new Authenticator({ password: 'P', secureIp: [], failLimit: 3 }, log);
  const t0 = 1_000_000;
  for (let i = 0; i < 3; i++) assert.equal(a.check(fakeRequest('198.51.100.7', [['Password', 'bad']]), 'normal', t0 + i).ok, false);
  const refused = lines.filter((l) => l.msg === 'controller authentication refused');
  assert.equal(refused.length, 3);
  assert.equal(refused[0]!.extra?.peer, '198.51.100.7');
  // Throttled now, even with the right password; another address is not affected.
  const throttled = a.check(fakeRequest('198.51.100.7', [['Password', 'P']]), 'normal', t0 + 10);
  assert.deepEqual(throttled.ok ? 'ok' : [throttled.status, throttled.message], [429, 'Too many authentication failures']);
  assert.equal(a.check(fakeRequest('198.51.100.8', [['Password', 'P']]), 'normal', t0 + 10).ok, true);
  // The window passes: let in again.
  assert.equal(a.check(fakeRequest('198.51.100.7', [['Password', 'P']]), 'normal', t0 + 61_000).ok, true);
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
    assert.ok(ctl.lines.some((l) => l.msg === 'controller authentication refused' && l.extra?.peer === '127.0.0.1'));
  } finally {
    await ctl.close();
  }
});
