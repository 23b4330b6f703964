// The resolver when DNS fails: a server that cannot be connected to, one that never answers,
// answers with an error code or with garbage, or whose TCP retry breaks. Each lookup ends in a
// coded DnsError (never an exception out of a socket callback, never a cached "no records").

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { DnsResolver } from '../../src/net/index.js';
import { startFaultyDns, type DnsFault, type FaultyDnsServer } from '../helpers/faulty-dns.js';

/** Connecting a UDP socket to the broadcast address fails (EACCES) on Linux: a real connect error without any network setup. */
const UNCONNECTABLE = '255.255.255.255:53';

const uncaught: unknown[] = [];
const onUncaught = (e: unknown): void => { uncaught.push(e); };
let server: FaultyDnsServer;

before(async () => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  server = await startFaultyDns('silent');
});

after(async () => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
  await server.close();
});

test('a server that cannot be connected to: every queued query fails as a network error at once, nothing thrown', async () => {
  const r = new DnsResolver({ servers: [UNCONNECTABLE], timeout: 5, retransmits: 2 });
  const t0 = performance.now();
  // Queries made together wait on one socket's connect: all of them must be failed by it.
  const names = Array.from({ length: 20 }, (_, i) => `q${i}.example.net`);
  const results = await Promise.allSettled(names.map((n) => r.lookup(n, 'A')));
  for (const res of results) assert.equal(res.status === 'rejected' && (res.reason as { code?: string }).code, 'NETWORK');
  assert.ok(performance.now() - t0 < 4000, 'failed by the connect error, not by the 5 s time-out');
  const sent = r.sent;
  await assert.rejects(r.lookup('again.example.net', 'TXT'), { code: 'NETWORK' });
  assert.equal(r.sent, sent, 'right after a failed connect the server is skipped: no new socket per query');
  await new Promise((res) => setTimeout(res, 50));
  assert.deepEqual(uncaught, []);
});

test('a reachable server among unreachable ones still answers through the retries', async () => {
  server.mode = 'servfail';
  const r = new DnsResolver({ servers: [UNCONNECTABLE, server.address], timeout: 1, retransmits: 1 });
  const before = server.count.udp;
  await assert.rejects(r.lookup('x.example.net', 'A'), { code: 'SERVFAIL' });
  assert.equal(server.count.udp - before, 1, 'the second try went to the other server');
  assert.deepEqual(uncaught, []);
});

const CASES: Array<{ mode: DnsFault; code: string }> = [
  { mode: 'silent', code: 'TIMEOUT' },
  { mode: 'servfail', code: 'SERVFAIL' },
  { mode: 'refused', code: 'REFUSED' },
  { mode: 'yxdomain', code: 'SERVFAIL' },
  // A reply that cannot be read is dropped (a spoofer could send it); the query then times out.
  { mode: 'garbage', code: 'TIMEOUT' },
  { mode: 'truncated-tcp-reset', code: 'NETWORK' },
  { mode: 'truncated-tcp-garbage', code: 'FORMERR' },
  { mode: 'truncated-tcp-silent', code: 'TIMEOUT' },
];

for (const { mode, code } of CASES) {
  test(`server fault "${mode}": the lookup fails with ${code} after its tries and is not cached`, async () => {
    server.mode = mode;
    const r = new DnsResolver({ servers: [server.address], timeout: 0.2, retransmits: 1 });
    const before = server.count.udp;
    await assert.rejects(r.lookup(`${mode}.example.net`, 'A'), (e: { code?: string }) => {
      assert.equal(e.code, code);
      return true;
    });
    assert.equal(server.count.udp - before, 2, 'asked once and retried once');
    assert.equal(r.cached(`${mode}.example.net`, 'A'), undefined, 'a failure is not an answer to remember');
    await assert.rejects(r.lookup(`${mode}.example.net`, 'A'), { code });
    assert.equal(server.count.udp - before, 4, 'asked again on the next lookup');
    assert.deepEqual(uncaught, []);
  });
}

test('a lookup whose signal is already aborted starts no query (a query started for nobody would reject unhandled)', async () => {
  server.mode = 'servfail';
  const r = new DnsResolver({ servers: [server.address], timeout: 0.2, retransmits: 0 });
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(r.lookup('aborted.example.net', 'A', ac.signal), { code: 'CANCELLED' });
  assert.equal(r.sent, 0);
  await new Promise((res) => setTimeout(res, 300));
  assert.deepEqual(uncaught, []);
});

test('lookups waiting on one signal share one abort listener; the abort ends every one of them, a later lookup none', async () => {
  server.mode = 'silent';
  const r = new DnsResolver({ servers: [server.address], timeout: 5, retransmits: 0 });
  const ac = new AbortController();
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => { warnings.push(w); };
  process.on('warning', onWarning);
  try {
    // Past EventTarget's default of 10 listeners, and merged lookups of one name among them.
    const names = Array.from({ length: 50 }, (_, i) => `w${i % 40}.example.net`);
    const pending = names.map((n) => r.lookup(n, 'A', ac.signal));
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
    const t0 = performance.now();
    ac.abort();
    const results = await Promise.allSettled(pending);
    for (const res of results) assert.equal(res.status === 'rejected' && (res.reason as { code?: string }).code, 'CANCELLED');
    assert.ok(performance.now() - t0 < 1000, 'ended by the abort, not by the 5 s time-out');
    await assert.rejects(r.lookup('after.example.net', 'A', ac.signal), { code: 'CANCELLED' });
    // A signal that never aborts keeps its one listener, however many lookups settle on it.
    server.mode = 'servfail';
    const live = new AbortController();
    for (let i = 0; i < 30; i++) await assert.rejects(r.lookup(`s${i}.example.net`, 'A', live.signal), { code: 'SERVFAIL' });
    assert.equal(getEventListeners(live.signal, 'abort').length, 1);
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning'), []);
    assert.deepEqual(uncaught, []);
  } finally {
    process.off('warning', onWarning);
  }
});

test('a name the wire cannot carry is BADNAME, not a network error retried', async () => {
  const r = new DnsResolver({ servers: [server.address], timeout: 0.2, retransmits: 2 });
  // 33 characters (a valid label length) but 65 bytes once UTF-8 encoded.
  const label = `x${'é'.repeat(32)}`;
  await assert.rejects(r.lookup(`${label}.example.net`, 'A'), { code: 'BADNAME' });
  assert.deepEqual(uncaught, []);
});
