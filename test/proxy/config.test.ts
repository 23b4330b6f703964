// `workers.proxy` resolved for the code: defaults, the failure window derived from max_retries and
// timeout (§2.2), which group is the default (§3.4), lists of hosts, and the shipped conf/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { ProxyWorkerSchema } from '../../src/proxy/config-schema.js';
import { proxyRuntimeConfig } from '../../src/proxy/config.js';

const resolve = (section: Record<string, unknown>) => proxyRuntimeConfig(ProxyWorkerSchema.parse(section), {});

test('the shipped configuration has the proxy off, with Rspamd defaults', async () => {
  const cfg = await loadConfig('conf');
  const p = cfg.workers.proxy;
  assert.equal(p.enabled, false);
  assert.deepEqual(p.listen, [{ kind: 'tcp', host: '127.0.0.1', port: 11332, text: '127.0.0.1:11332' }]);
  assert.equal(p.mode, 'http');
  assert.equal(p.timeoutMs, 120_000);
  assert.equal(p.maxRetries, 5);
  assert.deepEqual(p.failure, { errorTimeMs: 600_000, maxErrors: 4, reviveTimeMs: 60_000, reviveJitter: 0.4 });
  assert.equal(p.milter.spamHeader, 'X-Spam');
  assert.equal(p.milter.rejectMessage, 'Spam message rejected');
  assert.equal(p.milter.actions.get('reject'), 'reject', 'the milter front end sees the configured actions');
  assert.equal(p.milter.maxMessage, 50 * 1024 * 1024, 'max_message bounds what a milter session buffers');
  assert.equal(p.legacyCompat, 'spamd');
});

test('legacy_compat: the normal worker\'s unless the proxy sets its own', () => {
  const parse = (section: Record<string, unknown>) => ProxyWorkerSchema.parse(section);
  assert.equal(proxyRuntimeConfig(parse({}), {}, 'rspamd').legacyCompat, 'rspamd');
  assert.equal(proxyRuntimeConfig(parse({}), {}, 'spamd').legacyCompat, 'spamd');
  assert.equal(proxyRuntimeConfig(parse({ legacy_compat: 'spamd' }), {}, 'rspamd').legacyCompat, 'spamd');
  assert.equal(proxyRuntimeConfig(parse({ legacy_compat: 'rspamd' }), {}).legacyCompat, 'rspamd');
  assert.throws(() => parse({ legacy_compat: 'spamassassin' }));
});

test('milter options: the proxy keys, and actions typed from the engine config', () => {
  const p = proxyRuntimeConfig(
    ProxyWorkerSchema.parse({ milter: true, spam_header: 'X-Junk', reject_message: 'No thanks', discard_on_reject: true, client_ca_name: 'CN=Mail CA', max_message: '1M' }),
    { quarantine: { threshold: 12, milter: 'quarantine' }, 'my action': { threshold: 20 } },
  );
  assert.equal(p.mode, 'milter');
  assert.equal(p.milter.spamHeader, 'X-Junk');
  assert.equal(p.milter.rejectMessage, 'No thanks');
  assert.equal(p.milter.discardOnReject, true);
  assert.equal(p.milter.quarantineOnReject, false);
  assert.equal(p.milter.clientCaName, 'CN=Mail CA');
  assert.equal(p.milter.maxMessage, 1024 * 1024);
  assert.equal(p.milter.actions.get('quarantine'), 'quarantine');
  assert.equal(p.milter.actions.get('my action'), 'custom');
  assert.equal(p.milter.actions.get('soft reject'), 'soft reject');
});

test('the default group: marked, named, a self_scan group, the only group, or none', () => {
  assert.equal(resolve({ upstreams: { a: { hosts: 'x' }, b: { hosts: 'y', default: true } } }).defaultUpstream, 'b');
  assert.equal(resolve({ default_upstream: 'a', upstreams: { a: { hosts: 'x' }, b: { hosts: 'y' } } }).defaultUpstream, 'a');
  assert.equal(resolve({ upstreams: { a: { hosts: 'x' }, s: { self_scan: true } } }).defaultUpstream, 's');
  assert.equal(resolve({ upstreams: { only: { hosts: 'x' } } }).defaultUpstream, 'only');
  assert.equal(resolve({ upstreams: { a: { hosts: 'x' }, b: { hosts: 'y' } } }).defaultUpstream, undefined);
  const self = resolve({ self_scan: true, upstreams: { a: { hosts: 'x' }, b: { hosts: 'y' } } });
  assert.equal(self.defaultUpstream, undefined);
  assert.equal(self.selfScan, true);
  assert.deepEqual(Object.keys(resolve({ upstreams: { a: { hosts: 'x' }, off: { hosts: 'y', enabled: false } } }).upstreams), ['a'], 'a disabled group is left out');
});

test('groups: rotation from the prefix or the key, hosts as a list, per-group timeout and settings', () => {
  const p = resolve({ timeout: '30s', max_retries: 3, upstreams: { g: { hosts: ['hash:10.0.0.1:11333:2', '[::1]:12000', '/run/s.sock'], timeout: '5s', settings_id: 'in' }, h: { hosts: 'a.example', rotation: 'master-slave' } } });
  const g = p.upstreams.g!;
  assert.equal(g.rotation, 'hash');
  assert.deepEqual(g.hosts.map((h) => h.name), ['10.0.0.1:11333', '[::1]:12000', '/run/s.sock']);
  assert.equal(g.timeoutMs, 5000);
  assert.equal(g.settingsId, 'in');
  assert.equal(p.upstreams.h!.rotation, 'master-slave');
  assert.equal(p.upstreams.h!.timeoutMs, 30_000, 'the worker timeout by default');
  assert.deepEqual(p.failure, { errorTimeMs: 90_000, maxErrors: 2, reviveTimeMs: 60_000, reviveJitter: 0.4 });
});

test('cross-key mistakes are refused', () => {
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ enabled: true }, /at least one enabled upstream group/],
    [{ enabled: true, milter: true, upstreams: { a: { hosts: 'x' }, b: { hosts: 'y' } } }, /a default group for milter sessions/],
    [{ self_scan: true, upstreams: { a: { hosts: 'x', default: true } } }, /self_scan: true or a default group/],
    [{ upstreams: { s: { self_scan: true, hosts: 'x' } } }, /no hosts in a self_scan group/],
    [{ upstreams: { s: { self_scan: true, compression: true } } }, /no key or compression in a self_scan group/],
    [{ default_upstream: 'off', upstreams: { off: { hosts: 'x', enabled: false } } }, /an enabled group/],
    [{ upstreams: { a: { hosts: 'x', settings_id: 'a\r\nInjected: 1' } } }, /one line of text/],
    [{ bind: ['127.0.0.1:11332', '/run/p.sock', '127.0.0.1:11332'] }, /each address once/],
  ];
  for (const [section, why] of bad) {
    const r = ProxyWorkerSchema.safeParse(section);
    assert.equal(r.success, false, JSON.stringify(section));
    assert.match(JSON.stringify(r.error?.issues), why, JSON.stringify(section));
  }
});

test('a proxy bind on the scan or controller port is refused (the workers would share the socket)', async () => {
  const { makeConfDir, removeConfDir } = await import('../config/conf-dir.js');
  const { readConfig } = await import('../../src/config/load.js');
  const dir = await makeConfDir({ 'mailsift.yaml': 'workers:\n  proxy:\n    enabled: true\n    self_scan: true\n    bind: ["127.0.0.1:11332", "127.0.0.1:11334", "127.0.0.1:11333"]\n' });
  try {
    const r = await readConfig(dir);
    assert.equal(r.config, undefined);
    const lines = r.issues.map((i) => `${i.line}:${i.column}: ${i.path}: ${i.expected}`);
    assert.deepEqual(lines, [
      '5:31: workers.proxy.bind[1]: an address no other worker listens on (workers.controller.bind is 127.0.0.1:11334)',
      '5:50: workers.proxy.bind[2]: an address no other worker listens on (workers.normal.bind is 127.0.0.1:11333)',
    ]);
  } finally {
    await removeConfDir(dir);
  }
});
