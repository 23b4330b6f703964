import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { decodeMessage, encodeMessage, encodeQuery, RCODE, type DnsMessage } from '../../src/net/dns-wire.js';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import { DnsResolver } from '../../src/net/index.js';
import type { DnsResult, DnsRecordValue, Task } from '../../src/plugin-api/index.js';
import { netEngine, meta, MSG } from './helpers.js';

let dns: DnsTestServer;

before(async () => {
  dns = await startDnsServer({
    zone: {
      'example.org': [
        { type: 'A', data: '192.0.2.1', ttl: 60 },
        { type: 'AAAA', data: '2001:db8::1' },
        { type: 'MX', data: { priority: 10, exchange: 'mx.example.org' } },
        { type: 'TXT', data: ['v=spf1 ', 'ip4:192.0.2.0/24 -all'] },
      ],
      'short.example.org': [{ type: 'A', data: '192.0.2.7', ttl: 1 }],
      'alias.example.org': [{ type: 'CNAME', data: 'example.org' }],
      // 80 long TXT records (~6 KB): over our 4096-byte EDNS size, so UDP is truncated and TCP must take over.
      'big.example.org': Array.from({ length: 80 }, (_, i) => ({ type: 'TXT' as const, data: `record-${i}-${'x'.repeat(60)}` })),
      '*.wild.example.org': [{ type: 'A', data: '127.0.0.2' }],
      'slow.example.org': [{ type: 'A', data: '192.0.2.9' }],
    },
  });
  dns.withheld.add('slow.example.org');
});

after(() => dns.close());

test('resolver: records by type, CNAME, wildcard, NXDOMAIN vs NODATA', async () => {
  const r = new DnsResolver({ servers: [dns.address], timeout: 0.5, retransmits: 0 });
  assert.deepEqual((await r.lookup('example.org', 'A')).records, ['192.0.2.1']);
  assert.deepEqual((await r.lookup('example.org', 'AAAA')).records, ['2001:db8::1']);
  assert.deepEqual((await r.lookup('example.org', 'MX')).records, [{ priority: 10, exchange: 'mx.example.org' }]);
  assert.deepEqual((await r.lookup('example.org', 'TXT')).records, [['v=spf1 ', 'ip4:192.0.2.0/24 -all']]);
  assert.deepEqual((await r.lookup('alias.example.org', 'A')).records, ['192.0.2.1']);
  assert.deepEqual((await r.lookup('host.wild.example.org', 'A')).records, ['127.0.0.2']);
  await assert.rejects(r.lookup('nope.example.org', 'A'), { code: 'NXDOMAIN' });
  await assert.rejects(r.lookup('short.example.org', 'TXT'), { code: 'NODATA' });
});

test('resolver: truncated UDP answer is retried over TCP', async () => {
  const r = new DnsResolver({ servers: [dns.address], timeout: 0.5, retransmits: 0 });
  const before = dns.queries.length;
  const a = await r.lookup('big.example.org', 'TXT');
  assert.equal(a.records.length, 80);
  const seen = dns.queries.slice(before).map((q) => q.transport);
  assert.ok(seen.includes('udp'), 'asked over UDP first');
  assert.ok(seen.includes('tcp'), `fell back to TCP, saw ${seen.join(',')}`);
});

test('resolver: cache honours TTL, negative answers cached, in-flight merged', async () => {
  const r = new DnsResolver({ servers: [dns.address], timeout: 0.5, retransmits: 0 });
  await Promise.all([r.lookup('example.org', 'A'), r.lookup('example.org', 'A'), r.lookup('EXAMPLE.org.', 'A')]);
  assert.equal(r.sent, 1, 'three concurrent lookups of one name: one query');
  await r.lookup('example.org', 'A');
  assert.equal(r.sent, 1, 'TTL 60: answered from cache');
  await r.lookup('short.example.org', 'A');
  await new Promise((res) => setTimeout(res, 1100));
  await r.lookup('short.example.org', 'A');
  assert.equal(r.sent, 3, 'TTL 1: asked again after it expired');
  await assert.rejects(r.lookup('gone.example.org', 'A'), { code: 'NXDOMAIN' });
  await assert.rejects(r.lookup('gone.example.org', 'A'), { code: 'NXDOMAIN' });
  assert.equal(r.sent, 4, 'NXDOMAIN cached for the SOA minimum');
});

test('resolver: names with non-ASCII characters get their answer, not the time-out', async () => {
  // Like real servers (and Rspamd's benchmark stub), this one echoes the question's bytes as
  // they came: NXDOMAIN for every name.
  const srv = dgram.createSocket('udp4');
  srv.on('message', (q, peer) => {
    const r = Buffer.from(q);
    r[2] = 0x80 | (q[2]! & 0x79);
    r[3] = 0x80 | RCODE.NXDOMAIN;
    r.writeUInt16BE(0, 10);
    let off = 12;
    while (off < q.length && q[off] !== 0) off += q[off]! + 1;
    srv.send(r.subarray(0, off + 5), peer.port, peer.address);
  });
  await new Promise<void>((res) => srv.bind(0, '127.0.0.1', () => res()));
  try {
    const r = new DnsResolver({ servers: [`127.0.0.1:${(srv.address() as AddressInfo).port}`], timeout: 0.3, retransmits: 1 });
    const t0 = Date.now();
    await assert.rejects(r.lookup('\u00a9xxxmatch.net.example.org', 'A'), { code: 'NXDOMAIN' });
    await assert.rejects(r.lookup('caf\u00e9.\u00c9COLE.example.org', 'A'), { code: 'NXDOMAIN' });
    assert.ok(Date.now() - t0 < 300, `answered at once, took ${Date.now() - t0} ms`);
  } finally {
    srv.close();
  }
});

test('resolver: withheld answer times out after the retries', async () => {
  const r = new DnsResolver({ servers: [dns.address], timeout: 0.2, retransmits: 1 });
  const t0 = Date.now();
  await assert.rejects(r.lookup('slow.example.org', 'A'), { code: 'TIMEOUT' });
  const took = Date.now() - t0;
  assert.ok(took >= 350 && took < 1500, `two tries of 200 ms, took ${took}`);
});

test('resolver: UDP queries share a few long-lived sockets; replies that do not match are ignored', async () => {
  // A server that records each query's source port, answers every name NXDOMAIN, and first
  // sends a reply with the wrong id and one with the wrong question (both must be ignored).
  const ports = new Set<number>();
  const srv = dgram.createSocket('udp4');
  srv.on('message', (q, peer) => {
    ports.add(peer.port);
    const reply = (buf: Buffer): void => { srv.send(buf, peer.port, peer.address); };
    const qm = decodeMessage(q);
    const base = { id: qm.id, response: true, opcode: 0, authoritative: false, truncated: false, recursionDesired: true, rcode: RCODE.NXDOMAIN, answers: [], authorities: [] };
    reply(encodeMessage({ ...base, id: (qm.id + 1) & 0xffff, questions: qm.questions }));
    reply(encodeMessage({ ...base, questions: [{ ...qm.questions[0]!, name: 'other.example' }] }));
    reply(encodeMessage({ ...base, questions: qm.questions }));
  });
  await new Promise<void>((res) => srv.bind(0, '127.0.0.1', () => res()));
  try {
    const r = new DnsResolver({ servers: [`127.0.0.1:${(srv.address() as AddressInfo).port}`], timeout: 1, retransmits: 0 });
    const names = Array.from({ length: 60 }, (_, i) => `n${i}.example.net`);
    const results = await Promise.allSettled(names.map((n) => r.lookup(n, 'A')));
    for (const res of results) assert.equal(res.status === 'rejected' && (res.reason as { code?: string }).code, 'NXDOMAIN');
    assert.equal(r.sent, 60);
    assert.ok(ports.size <= 4, `60 queries from ${ports.size} source ports`);
  } finally {
    srv.close();
  }
});

test('task.dns: callback and awaited forms, Rspamd error text', async () => {
  const got: Record<string, unknown> = {};
  const { engine, net } = await netEngine([
    {
      name: 'DNS_CB',
      check(task) {
        task.dns.request({
          type: 'a', name: 'example.org',
          callback: (err, results) => {
            got.cb = { err, results };
            // A nested lookup from the callback still belongs to DNS_CB.
            task.dns.request({ type: 'txt', name: 'nope.example.org', callback: (err2) => { got.nested = err2; task.insert('DNS_CB'); } });
          },
        });
      },
    },
    {
      name: 'DNS_CORO',
      flags: ['coro'],
      async check(task) {
        const mx: DnsResult = await task.dns.mx('example.org');
        const nd: DnsResult = await task.dns.request({ type: 'txt', name: 'short.example.org' });
        got.coro = { mx, nd };
        task.insert('DNS_CORO');
      },
    },
    {
      name: 'AFTER_CB',
      deps: ['DNS_CB'],
      check(task) {
        got.afterSawNested = got.nested !== undefined;
        task.insert('AFTER_CB');
      },
    },
  ], dns.address);
  try {
    const res = await engine.scan(MSG, meta());
    const names = res.symbols.map((s) => s.name).sort();
    assert.deepEqual(names, ['AFTER_CB', 'DNS_CB', 'DNS_CORO']);
    assert.deepEqual(got.cb, { err: undefined, results: ['192.0.2.1'] as DnsRecordValue[] });
    assert.equal(got.nested, 'no records with this name');
    assert.equal(got.afterSawNested, true, 'a dependent symbol waits for the pending lookups of its dependency');
    const coro = got.coro as { mx: DnsResult; nd: DnsResult };
    assert.equal(coro.mx.ok, true);
    assert.equal(coro.mx.is_ok, true);
    assert.deepEqual(coro.mx.ok && coro.mx.results, [{ name: 'mx.example.org', priority: 10 }]);
    assert.equal(coro.nd.ok, false);
    assert.equal(!coro.nd.ok && coro.nd.error, 'requested record is not found');
  } finally {
    await net.close();
  }
});

test('task.dns: awaited call without the coro flag is an error naming the symbol', async () => {
  const errors: string[] = [];
  const { engine, net } = await netEngine([
    {
      name: 'NO_CORO',
      async check(task) {
        await task.dns.a('example.org');
        task.insert('NO_CORO');
      },
    },
  ], dns.address, {}, {});
  try {
    const origEmit = process.emitWarning;
    process.emitWarning = ((w: string | Error) => { errors.push(String(w)); }) as typeof process.emitWarning;
    let res;
    try {
      res = await engine.scan(MSG, meta());
    } finally {
      process.emitWarning = origEmit;
    }
    assert.equal(res.symbols.length, 0);
    assert.ok(errors.some((e) => e.includes('symbol NO_CORO') && e.includes("'coro' flag")), errors.join('\n'));
  } finally {
    await net.close();
  }
});

test('task.dns: per-task lookup cap, forced lookups not counted', async () => {
  const seen: string[] = [];
  const { engine, net } = await netEngine([
    {
      name: 'MANY',
      flags: ['coro'],
      async check(task) {
        for (let i = 0; i < 3; i++) {
          const r = await task.dns.a(`h${i}.wild.example.org`);
          seen.push(r.ok ? 'ok' : r.code);
        }
        const f = await task.dns.request({ type: 'a', name: 'h9.wild.example.org', forced: true });
        seen.push(f.ok ? 'forced-ok' : f.code);
      },
    },
  ], dns.address, { dns: { maxRequests: 2 } });
  try {
    await engine.scan(MSG, meta());
    assert.deepEqual(seen, ['ok', 'ok', 'LIMIT', 'forced-ok']);
  } finally {
    await net.close();
  }
});

test('task.dns: failures are summarised on the scan result (count and names), never logged lookup by lookup', async () => {
  const lines: string[] = [];
  const note = (m: string): void => { lines.push(m); };
  const log = { debug() {}, info: note, warn: note, error: note };
  dns.failing.add('broken.example.org');
  const codes: string[] = [];
  const { engine, net } = await netEngine([
    {
      name: 'MANY_LOOKUPS',
      flags: ['coro'],
      async check(task) {
        // Two time-outs, a SERVFAIL, an NXDOMAIN (an answer, not a failure), an answer, then six refused by the cap of 6.
        const first = await Promise.all([task.dns.a('slow.example.org'), task.dns.txt('slow.example.org'), task.dns.a('broken.example.org'), task.dns.a('nope.example.org'), task.dns.a('example.org')]);
        const capped = await Promise.all(Array.from({ length: 7 }, (_, i) => task.dns.a(`u${i}.wild.example.org`)));
        for (const r of [...first, ...capped]) codes.push(r.ok ? 'ok' : r.code);
      },
    },
  ], dns.address, { dns: { maxRequests: 6 } }, {}, log);
  try {
    const a = await engine.scan(MSG, meta());
    assert.deepEqual(codes, ['TIMEOUT', 'TIMEOUT', 'SERVFAIL', 'NXDOMAIN', 'ok', 'ok', 'LIMIT', 'LIMIT', 'LIMIT', 'LIMIT', 'LIMIT', 'LIMIT']);
    assert.equal(a.dnsRequests, 6);
    // The six refusals by the cap count once: past the cap every lookup is refused alike.
    // Names in the order the failures came in.
    assert.deepEqual({ ...a.dnsFailures, names: [...(a.dnsFailures?.names ?? [])].sort() }, { count: 4, capReached: true, names: ['broken.example.org SERVFAIL', 'slow.example.org TIMEOUT', 'slow.example.org TIMEOUT', 'u1.wild.example.org LIMIT'] });
    const b = await engine.scan(MSG, meta());
    assert.equal(b.dnsFailures?.count, 4, 'each task has its own summary');
    assert.deepEqual(lines, [], 'no line per failed or refused lookup');
  } finally {
    dns.failing.delete('broken.example.org');
    await net.close();
  }
});

test('task.dns: a task whose lookups all succeed has a count and no failure summary', async () => {
  const { engine, net } = await netEngine([
    { name: 'ONE', flags: ['coro'], async check(task) { await task.dns.a('example.org'); await task.dns.a('nope.example.org'); } },
  ], dns.address);
  try {
    const r = await engine.scan(MSG, meta());
    assert.equal(r.dnsRequests, 2);
    assert.equal(r.dnsFailures, undefined);
  } finally {
    await net.close();
  }
});

test('task.dns: answers from the cache match fresh ones and still count against the cap', async () => {
  const rounds: Array<Array<string | DnsRecordValue[]>> = [];
  const { engine, net } = await netEngine([
    {
      name: 'REPEAT',
      flags: ['coro'],
      async check(task) {
        const out: Array<string | DnsRecordValue[]> = [];
        for (const name of ['example.org', 'cached-nx.example.org', 'example.org', 'h1.wild.example.org']) {
          const r = await task.dns.a(name);
          out.push(r.ok ? r.results : `${r.code}: ${r.error}`);
        }
        rounds.push(out);
      },
    },
  ], dns.address, { dns: { maxRequests: 3 } });
  try {
    const before = net.resolver.sent;
    await engine.scan(MSG, meta());
    await engine.scan(MSG, meta());
    // The second scan is served from the cache; the cap of 3 stops the fourth lookup both times.
    assert.equal(net.resolver.sent - before, 2, 'example.org and the NXDOMAIN name asked once');
    const expected = [['192.0.2.1'], 'NXDOMAIN: no records with this name', ['192.0.2.1'], 'LIMIT: too many DNS requests for this task'];
    assert.deepEqual(rounds, [expected, expected]);
  } finally {
    await net.close();
  }
});

test('task.dns.cached: the cached outcome at once, nothing before a lookup, counted against the cap', async () => {
  const rounds: Array<Array<string | undefined>> = [];
  const { engine, net } = await netEngine([
    {
      name: 'PEEK',
      flags: ['coro'],
      async check(task) {
        const show = (r: ReturnType<typeof task.dns.cached>): string | undefined => (r === undefined ? undefined : r.ok ? String(r.results) : r.code);
        const out = [show(task.dns.cached({ type: 'A', name: 'example.org' })), show(task.dns.cached({ type: 'A', name: 'cached-nx.example.org' }))];
        await task.dns.a('example.org');
        await task.dns.a('cached-nx.example.org');
        out.push(show(task.dns.cached({ type: 'A', name: 'example.org' })), show(task.dns.cached({ type: 'A', name: 'cached-nx.example.org' })), String(task.dns.count));
        rounds.push(out);
      },
    },
  ], dns.address, { dns: { maxRequests: 4 } });
  try {
    await engine.scan(MSG, meta());
    await engine.scan(MSG, meta());
    // First scan: nothing is cached before the lookups; a miss does not count, the two lookups and
    // the two cached answers after them do. Second scan: both cached from the start, so the two
    // answers and the two lookups (served from the cache) reach the cap of 4 before the last peeks.
    assert.deepEqual(rounds[0], [undefined, undefined, '192.0.2.1', 'NXDOMAIN', '4']);
    assert.deepEqual(rounds[1], ['192.0.2.1', 'NXDOMAIN', undefined, undefined, '4']);
  } finally {
    await net.close();
  }
});

test('withheld DNS answer: the scan still finishes within its deadline', async () => {
  let cbErr: string | undefined;
  const { engine, net } = await netEngine([
    {
      name: 'SLOW',
      check(task) {
        task.dns.request({ type: 'a', name: 'slow.example.org', callback: (err) => { cbErr = err; } });
      },
    },
    { name: 'FAST', check(task) { task.insert('FAST'); } },
  ], dns.address, { taskTimeout: 0.15 });
  // The resolver would wait 2 × 300 ms; the task deadline (150 ms) cuts it short, with room for a
  // slow machine below the 600 ms a scan without the cut takes.
  try {
    const t0 = Date.now();
    const res = await engine.scan(MSG, meta());
    const took = Date.now() - t0;
    assert.ok(took < 550, `scan took ${took} ms with a 150 ms deadline`);
    assert.deepEqual(res.symbols.map((s) => s.name), ['FAST']);
    assert.equal(cbErr, undefined, 'a lookup cut off by the deadline is abandoned, as Rspamd does');
  } finally {
    await net.close();
  }
});

test('encodeQuery: the same bytes and errors as encodeMessage for one question', () => {
  const names = ['example.com', 'example.com.', '4.3.2.1.zen.spamhaus.org', 'bücher.example', 'x.日本.jp', '.', 'a',
    `${'a'.repeat(63)}.b`, `${'a'.repeat(64)}.b`, 'a..b', '.a', Array(60).fill('abcd').join('.'), Array(64).fill('abc').join('.')];
  const encode = (f: () => Buffer): string => { try { return f().toString('hex'); } catch (e) { return `error: ${(e as Error).message}`; } };
  let errors = 0;
  for (const name of names) {
    for (const type of ['A', 'TXT', 'AAAA', 'mx']) {
      for (const edns of [undefined, 4096]) {
        const m: DnsMessage = { id: 4242, response: false, opcode: 0, authoritative: false, truncated: false, recursionDesired: true, rcode: 0, questions: [{ name, type }], answers: [], authorities: [] };
        const want = encode(() => encodeMessage(m, edns ? { ednsSize: edns } : {}));
        if (want.startsWith('error')) errors++;
        assert.equal(encode(() => encodeQuery(4242, name, type, edns)), want, `${name} ${type} ${edns}`);
      }
    }
  }
  // Bad labels and over-long names are among the cases, so the error paths are compared too.
  assert.ok(errors >= 4 * 2 * 4);
});

test('task.dns: a callback-form call made after an await stays attributed to its symbol', async () => {
  // Two awaiting symbols interleave; each call must still count as pending for its own symbol,
  // so a symbol depending on A runs only after A's answer arrived.
  const seen: string[] = [];
  const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 10));
  const lookupAfterAwait = (name: string, label: string) => async (task: Task): Promise<void> => {
    await tick();
    task.dns.request({ type: 'A', name, callback: (err) => { if (!err) seen.push(label); } });
  };
  const { engine, net } = await netEngine([
    { name: 'A', flags: ['coro'], check: lookupAfterAwait('a1.wild.example.org', 'A answered') },
    { name: 'B', flags: ['coro'], check: lookupAfterAwait('b1.wild.example.org', 'B answered') },
    { name: 'AFTER_A', deps: ['A'], check: (task) => { if (seen.includes('A answered')) task.insert('AFTER_A'); } },
    { name: 'AFTER_B', deps: ['B'], check: (task) => { if (seen.includes('B answered')) task.insert('AFTER_B'); } },
  ], dns.address, {}, { AFTER_A: { score: 1 }, AFTER_B: { score: 1 } });
  try {
    const res = await engine.scan(MSG, meta());
    assert.deepEqual(res.symbols.map((s) => s.name).sort(), ['AFTER_A', 'AFTER_B']);
  } finally {
    await net.close();
  }
});
