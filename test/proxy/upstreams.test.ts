// The upstream library on its own: Rspamd's host list grammar, the rotations, the failure window
// and revival (on a test clock), and the response reader's framing and caps.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHostList, type HostSpec } from '../../src/proxy/upstreams/host-list.js';
import { pickHashed, pickMasterSlave, pickRoundRobin, type Candidate } from '../../src/proxy/upstreams/rotation.js';
import { UpstreamSet } from '../../src/proxy/upstreams/upstream-set.js';
import { ResponseFormatError, ResponseParser } from '../../src/proxy/upstreams/response-parser.js';

const hosts = (text: string): HostSpec[] => {
  const r = parseHostList(text);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.list.hosts;
};

describe('host list grammar', () => {
  test('prefixes, separators, ports, priorities, IPv6 and socket paths', () => {
    const r = parseHostList('master-slave:10.0.0.1:11333:3, scan.example.org;[2001:db8::1]:11000\t::1 /run/mailsift/scan.sock\n10.0.0.2:12000');
    assert.ok(r.ok);
    assert.equal(r.list.rotation, 'master-slave');
    assert.deepEqual(r.list.hosts.map((h) => [h.name, h.priority]), [
      ['10.0.0.1:11333', 3],
      ['scan.example.org:11333', 0],
      ['[2001:db8::1]:11000', 0],
      ['[::1]:11333', 0],
      ['/run/mailsift/scan.sock', 0],
      ['10.0.0.2:12000', 0],
    ]);
    assert.equal(r.list.hosts[4]!.kind, 'unix');
    for (const p of ['random:', 'round-robin:', 'hash:', 'HASH:']) {
      const x = parseHostList(`${p}a.example`);
      assert.ok(x.ok);
      assert.equal(x.list.rotation, p.slice(0, -1).toLowerCase());
    }
    assert.equal((parseHostList('localhost') as { list: { rotation: unknown } }).list.rotation, undefined);
  });

  test('bad lists say which element is wrong and why', () => {
    const bad: Array<[string, RegExp]> = [
      ['', /no host/],
      ['round-robin:', /no host/],
      ['a.example:0', /port 0 is outside/],
      ['a.example:99999', /port 99999 is outside/],
      ['a.example:11333:x', /priority "x" is not a number/],
      ['a.example:1:2:3', /too many ":"/],
      ['[2001:db8::1', /not closed/],
      ['[not-v6]:1', /not an IPv6 address/],
      ['bad_host!:1', /neither an IP address nor a host name/],
      ['./rel.sock', /must be absolute/],
      ['a.example, a.example:11333', /listed twice/],
      [Array.from({ length: 300 }, (_, i) => `h${i}.example`).join(','), /more than 256 hosts/],
    ];
    for (const [text, why] of bad) {
      const r = parseHostList(text);
      assert.equal(r.ok, false, text.slice(0, 40));
      if (!r.ok) assert.match(r.error, why, text.slice(0, 40));
    }
  });
});

const cands = (weights: number[]): Array<Candidate & { name: string }> => weights.map((priority, i) => ({ name: `h${i}`, priority, rrCurrent: 0 }));

describe('rotations', () => {
  test('weighted round robin follows the weights, interleaved', () => {
    const c = cands([5, 1, 1]);
    const seq = Array.from({ length: 7 }, () => pickRoundRobin(c)!.name);
    assert.deepEqual(seq.filter((n) => n === 'h0').length, 5);
    assert.notDeepEqual(seq.slice(0, 5), ['h0', 'h0', 'h0', 'h0', 'h0'], 'not in a burst');
    const even = cands([0, 0, 0]);
    assert.deepEqual(Array.from({ length: 6 }, () => pickRoundRobin(even)!.name), ['h0', 'h1', 'h2', 'h0', 'h1', 'h2']);
  });

  test('master-slave takes the highest priority, then list order', () => {
    assert.equal(pickMasterSlave(cands([0, 0, 0]))!.name, 'h0');
    assert.equal(pickMasterSlave(cands([1, 5, 5]))!.name, 'h1');
  });

  test('hash keeps a key on its host, and only the keys of a host that goes away move', () => {
    const all = cands([0, 0, 0, 0]);
    const keys = Array.from({ length: 400 }, (_, i) => `192.0.2.${i % 256}-${i}`);
    const before = new Map(keys.map((k) => [k, pickHashed(all, k)!.name]));
    for (const k of keys) assert.equal(pickHashed(all, k)!.name, before.get(k), 'stable');
    const spread = new Set(before.values());
    assert.equal(spread.size, 4, 'keys spread over every host');
    const without = all.filter((c) => c.name !== 'h2');
    for (const k of keys) {
      const now = pickHashed(without, k)!.name;
      if (before.get(k) !== 'h2') assert.equal(now, before.get(k), 'a key whose host stayed up does not move');
    }
  });
});

describe('failure window and revival', () => {
  const make = (n: number, limits = { errorTimeMs: 10_000, maxErrors: 2, reviveTimeMs: 60_000, reviveJitter: 0.4 }) => {
    let now = 5_000_000;
    const events: string[] = [];
    const set = new UpstreamSet(hosts(Array.from({ length: n }, (_, i) => `10.0.0.${i + 1}`).join(',')), {
      rotation: 'round-robin',
      limits,
      now: () => now,
      random: () => 1,
      events: { down: (h) => events.push(`down ${h.name}`), revived: (h) => events.push(`up ${h.name}`) },
    });
    return { set, events, advance: (ms: number) => (now += ms) };
  };

  test('more than max_errors failures inside the window take a host out until revive_time plus jitter', () => {
    const { set, events, advance } = make(2);
    const [h0] = set.hosts;
    assert.equal(set.fail(h0!, 'x'), false);
    assert.equal(set.fail(h0!, 'x'), false);
    assert.equal(set.fail(h0!, 'x'), true);
    assert.deepEqual(events, ['down 10.0.0.1:11333']);
    assert.deepEqual(set.alive().map((h) => h.name), ['10.0.0.2:11333']);
    advance(60_000 * 1.4 - 1);
    assert.equal(set.alive().length, 1, 'still out before revive_time × (1 + jitter)');
    advance(2);
    assert.equal(set.alive().length, 2);
    assert.deepEqual(events, ['down 10.0.0.1:11333', 'up 10.0.0.1:11333']);
  });

  test('failures older than the window are forgotten; a success clears the count', () => {
    const { set, advance } = make(2);
    const [h0] = set.hosts;
    set.fail(h0!, 'x');
    set.fail(h0!, 'x');
    advance(10_001);
    assert.equal(set.fail(h0!, 'x'), false, 'the first two slid out of the window');
    set.fail(h0!, 'x');
    set.ok(h0!);
    assert.equal(set.fail(h0!, 'x'), false);
  });

  test('the last host up is never taken out', () => {
    const { set } = make(1, { errorTimeMs: 10_000, maxErrors: 0, reviveTimeMs: 1000, reviveJitter: 0 });
    for (let i = 0; i < 10; i++) assert.equal(set.fail(set.hosts[0]!, 'x'), false);
    assert.equal(set.alive().length, 1);
  });

  test('pick avoids the hosts a request already failed on while another is up', () => {
    const { set } = make(3);
    const tried = new Set([set.hosts[0]!, set.hosts[1]!]);
    for (let i = 0; i < 5; i++) assert.equal(set.pick(undefined, tried)!.name, '10.0.0.3:11333');
    tried.add(set.hosts[2]!);
    assert.ok(set.pick(undefined, tried), 'all tried: any host up');
  });
});

describe('response reader', () => {
  const feedAll = (p: ResponseParser, bytes: string | Buffer, step = 1) => {
    const b = Buffer.from(bytes);
    let res;
    for (let i = 0; i < b.length; i += step) res = p.feed(b.subarray(i, i + step)) ?? res;
    return res;
  };

  test('Content-Length, chunked (split anywhere, with trailers) and close-delimited bodies', () => {
    const cl = feedAll(new ResponseParser(1000), 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\npong\r\n');
    assert.equal(cl?.body.toString(), 'pong\r\n');
    assert.equal(cl?.keepAlive, true);
    const ch = feedAll(new ResponseParser(1000), 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nX-T: 1\r\n\r\n');
    assert.equal(ch?.body.toString(), 'abcde');
    const p = new ResponseParser(1000);
    assert.equal(feedAll(p, 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close'), undefined);
    const closed = p.end();
    assert.equal(closed.body.toString(), 'until close');
    assert.equal(closed.keepAlive, false);
    const cont = feedAll(new ResponseParser(1000), 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n', 7);
    assert.equal(cont?.status, 204);
    assert.equal(feedAll(new ResponseParser(1000), 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')?.keepAlive, false);
  });

  test('garbage, oversized bodies and heads, and a cut-off reply are errors', () => {
    const bad: Array<[string | Buffer, RegExp]> = [
      ['SMTP 220 hello\r\n\r\n', /not an HTTP reply/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n', /over the 1000-byte limit/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffff\r\n', /over the 1000-byte limit/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /bad chunk size/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', /bad Content-Length/],
      [`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(70_000)}`, /head longer than/],
    ];
    for (const [bytes, why] of bad) assert.throws(() => feedAll(new ResponseParser(1000), bytes, 4096), (e: unknown) => e instanceof ResponseFormatError && why.test((e as Error).message), String(why));
    const cut = new ResponseParser(1000);
    cut.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    assert.throws(() => cut.end(), /middle of the body/);
  });
});
