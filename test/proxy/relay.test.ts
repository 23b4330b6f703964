// The proxy's HTTP front end and relay against real mailsift scan workers over real sockets
// (proxy-milter.md §3): scan paths, /checkv3 boundaries, legacy lines, /ping, Host routing, the
// upstream leg's compression and encryption, the client's compression, mirrors, self-scan, and
// bad client input.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { readFile } from 'node:fs/promises';
import { decodeReply } from '../../src/client/reply.js';
import { buildV3Request } from '../../src/client/request.js';
import { ScanClient } from '../../src/client/scan-client.js';
import { formatKeypair, generateKeypair } from '../../src/crypto/keypair.js';
import { zstdCompress, zstdDecompressBounded, hasZstdMagic } from '../../src/http/zstd.js';
import { checkv2, header, MESSAGES, rawExchange, startProxy, startScanner, type FakeUpstream, type TestProxy, type TestScanner } from './harness.js';

let gtube: Buffer;
let clean: Buffer;
let a: TestScanner;
let b: TestScanner;
const toClose: Array<{ close(): Promise<void> }> = [];

before(async () => {
  gtube = await readFile(`${MESSAGES}/gtube.eml`);
  clean = await readFile(`${MESSAGES}/clean.eml`);
  a = await startScanner();
  b = await startScanner();
  toClose.push(a, b);
});
after(async () => {
  for (const c of toClose.reverse()) await c.close();
});

const json = (buf: Buffer): Record<string, unknown> => JSON.parse(buf.toString('utf8')) as Record<string, unknown>;

describe('relaying to one scanner', () => {
  let proxy: TestProxy;
  before(async () => {
    proxy = await startProxy({ upstreams: { local: { hosts: a.address } } });
    toClose.push(proxy);
  });

  test('/checkv2: the scanner verdict comes back with its Content-Type; the upstream saw the client headers and the proxy own Host', async () => {
    const seenBefore = a.seen.length;
    const r = await rawExchange(proxy.port, checkv2(gtube, { Host: 'mx.example.org', IP: '192.0.2.10', From: '<a@example.org>', Rcpt: '<b@example.net>' }));
    assert.equal(r.status, 200, r.raw.toString());
    assert.equal(header(r, 'content-type'), 'application/json');
    const body = json(r.body);
    assert.equal(body.action, 'reject');
    assert.ok((body.symbols as Record<string, unknown>).GTUBE);
    const seen = a.seen.slice(seenBefore);
    assert.equal(seen.length, 1);
    const up = seen[0]!;
    assert.equal(up.method, 'POST');
    assert.equal(up.path, '/checkv2');
    assert.deepEqual(up.headers.filter(([k]) => k.toLowerCase() === 'host').map(([, v]) => v), [a.address], 'one Host: the upstream as written in hosts (§3.6)');
    for (const [k, v] of [['IP', '192.0.2.10'], ['From', '<a@example.org>'], ['Rcpt', '<b@example.net>']] as const) assert.equal(header(up, k), v);
    assert.equal(up.body.length, gtube.length, 'the message is handed over inline');
  });

  test('several Rcpt headers and query arguments reach the scanner', async () => {
    const before = a.seen.length;
    const r = await rawExchange(proxy.port, checkv2(clean, { Rcpt: '<x@example.net>', 'rcpt': '<y@example.net>' }, '/checkv2?ip=198.51.100.7&helo=mx.example.com'));
    assert.equal(r.status, 200);
    const up = a.seen[before]!;
    assert.equal(up.path, '/checkv2');
    assert.deepEqual(up.headers.filter(([k]) => k.toLowerCase() === 'rcpt').map(([, v]) => v), ['<x@example.net>', '<y@example.net>']);
    assert.equal(header(up, 'ip'), '198.51.100.7', 'query arguments travel in the URL again');
    assert.equal(header(up, 'helo'), 'mx.example.com');
  });

  test('/checkv3: the multipart reply keeps the scanner boundary byte for byte', async () => {
    const req = buildV3Request(gtube, { ip: '192.0.2.1', from: 'a@example.org' });
    let head = `POST ${req.path} HTTP/1.1\r\nContent-Length: ${req.body.length}\r\nConnection: close\r\n`;
    for (const [k, v] of req.headers) head += `${k}: ${v}\r\n`;
    const r = await rawExchange(proxy.port, Buffer.concat([Buffer.from(`${head}\r\n`), req.body]));
    assert.equal(r.status, 200, r.raw.toString());
    const ct = header(r, 'content-type')!;
    const m = /boundary="?([^";]+)"?/.exec(ct);
    assert.ok(m, `multipart Content-Type with a boundary: ${ct}`);
    assert.ok(r.body.toString('latin1').startsWith(`--${m[1]}\r\n`), 'the body is delimited by the boundary the header names');
    assert.ok(r.body.toString('latin1').trimEnd().endsWith(`--${m[1]}--`));
    const decoded = decodeReply(200, { 'content-type': ct }, r.body);
    assert.equal(decoded.result.action, 'reject');
    const up = a.seen[a.seen.length - 1]!;
    assert.equal(up.path, '/checkv3');
    assert.match(header(up, 'content-type') ?? '', /^multipart\/form-data; boundary=/, 'the client request boundary reaches the scanner unchanged');
  });

  test('the v1 paths /check and /symbols are relayed as they are', async () => {
    for (const path of ['/check', '/symbols']) {
      const r = await rawExchange(proxy.port, checkv2(gtube, {}, path));
      assert.equal(r.status, 200);
      const body = json(r.body);
      assert.equal((body.default as Record<string, unknown>).action, 'reject', path);
      assert.equal(a.seen[a.seen.length - 1]!.path, path);
    }
  });

  test('legacy SPAMC and RSPAMC lines: rendered from the relayed JSON, the same bytes as a direct connection', async () => {
    for (const [line, proto] of [['SYMBOLS SPAMC/1.5', 'SPAMD/1.1 0 EX_OK'], ['CHECK RSPAMC/1.3', 'RSPAMD/1.3 0 EX_OK']] as const) {
      const req = Buffer.concat([Buffer.from(`${line}\r\nContent-length: ${gtube.length}\r\n\r\n`), gtube]);
      const before = a.seen.length;
      const via = await rawExchange(proxy.port, req, { untilClose: true });
      const direct = await rawExchange(a.port, req, { untilClose: true });
      assert.ok(via.raw.toString().startsWith(`${proto}\r\n`), via.raw.toString());
      assert.equal(via.raw.toString(), direct.raw.toString());
      assert.match(via.raw.toString(), /GTUBE/);
      const up = a.seen[before]!;
      assert.equal(up.method, 'POST');
      assert.equal(up.path, '/checkv2', 'upgraded to /checkv2 upstream (§3.2)');
    }
  });

  test('/ping is forwarded, not answered by the proxy (§3.12)', async () => {
    const before = a.seen.length;
    const r = await rawExchange(proxy.port, 'GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'pong\r\n');
    assert.equal(header(r, 'content-type'), 'text/plain');
    assert.equal(a.seen[before]?.path, '/ping');
  });

  test('a client that asks for zstd gets the whole reply wrapped (Compression: zstd); a compressed request is scanned', async () => {
    const r = await rawExchange(proxy.port, checkv2(zstdCompress(gtube), { Compression: 'zstd' }));
    assert.equal(r.status, 200);
    assert.equal(header(r, 'compression'), 'zstd');
    assert.ok(hasZstdMagic(r.body));
    assert.equal(json(zstdDecompressBounded(r.body, 1 << 24)).action, 'reject');
    const plain = await rawExchange(proxy.port, checkv2(gtube));
    assert.equal(header(plain, 'compression'), undefined, 'never compressed unasked (Haraka does not decompress)');
  });

  test('a client naming a local file is refused (400), the proxy reads nothing for it', async () => {
    const r = await rawExchange(proxy.port, checkv2(Buffer.alloc(0), { File: '/etc/passwd' }));
    assert.equal(r.status, 400);
    assert.match(json(r.body).error as string, /not allowed/);
  });

  test('Haraka rspamd plugin requests (captured, chunked, keep-alive) are relayed', async () => {
    for (const name of ['h01-haraka-default', 'h02-haraka-flags']) {
      const before = a.seen.length;
      const req = await readFile(`/work/shared/fixtures/scan/${name}/request.bin`);
      const r = await rawExchange(proxy.port, req);
      assert.equal(r.status, 200, r.raw.toString());
      const offset = header(r, 'message-offset');
      const body = json(offset === undefined ? r.body : r.body.subarray(0, Number(offset)));
      assert.equal(body['message-id'], 'fixture-crlf-1@example.com');
      assert.equal(typeof body.score, 'number');
      const up = a.seen[before]!;
      assert.equal(header(up, 'transfer-encoding'), undefined, 'the body goes upstream with a length');
      assert.deepEqual(up.headers.filter(([k]) => k.toLowerCase() === 'rcpt').map(([, v]) => v), ['bob@example.org', 'carol@example.net']);
      assert.equal(header(up, 'queue-id'), 'B3C1F2A4-5D6E-4F70-8A9B-0C1D2E3F4A5B.1');
    }
  });

  test('kept-alive connections to the scanner are reused', async () => {
    const conns = a.connections();
    for (let i = 0; i < 5; i++) assert.equal((await rawExchange(proxy.port, checkv2(clean))).status, 200);
    assert.ok(a.connections() - conns <= 1, `5 sequential scans opened ${a.connections() - conns} connections to the scanner`);
  });
});

describe('routing by Host (§3.4)', () => {
  let proxy: TestProxy;
  before(async () => {
    proxy = await startProxy({ upstreams: { first: { hosts: a.address, default: true }, Second: { hosts: b.address } } });
    toClose.push(proxy);
  });

  for (const [hostHeader, expect] of [['second', 'b'], ['SECOND', 'b'], ['second:11332', 'a'], ['unknown', 'a'], [undefined, 'a']] as const) {
    test(`Host: ${hostHeader ?? '(none)'} → scanner ${expect}`, async () => {
      const [na, nb] = [a.seen.length, b.seen.length];
      const r = await rawExchange(proxy.port, checkv2(clean, hostHeader === undefined ? {} : { Host: hostHeader }));
      assert.equal(r.status, 200);
      assert.equal(a.seen.length - na, expect === 'a' ? 1 : 0);
      assert.equal(b.seen.length - nb, expect === 'b' ? 1 : 0);
    });
  }

  test('no default group: a Host that names nothing is "404 Backend not found"', async () => {
    const p = await startProxy({ upstreams: { x: { hosts: a.address }, y: { hosts: b.address } } });
    try {
      const r = await rawExchange(p.port, checkv2(clean, { Host: 'z' }));
      assert.equal(r.statusLine, 'HTTP/1.1 404 Backend not found');
      const ok = await rawExchange(p.port, checkv2(clean, { Host: 'y' }));
      assert.equal(ok.status, 200);
    } finally {
      await p.close();
    }
  });
});

describe('the upstream leg', () => {
  test('compression: true zstd-compresses the request to the scanner (Compression: zstd), which scans it', async () => {
    const p = await startProxy({ upstreams: { zstd: { hosts: a.address, compression: true } } });
    try {
      const before = a.seen.length;
      const r = await rawExchange(p.port, checkv2(gtube, { IP: '192.0.2.3' }));
      assert.equal(r.status, 200);
      assert.equal(header(r, 'compression'), undefined, 'the client did not ask: the reply is plain');
      assert.equal(json(r.body).action, 'reject');
      const up = a.seen[before]!;
      assert.equal(header(up, 'compression'), 'zstd');
      assert.ok(hasZstdMagic(up.body), 'the body on the wire is a zstd frame');
      assert.ok(up.body.length < gtube.length);
    } finally {
      await p.close();
    }
  });

  test('key: a plaintext client reaches an encrypted scanner (encryption bridge, §3.9)', async () => {
    const kp = generateKeypair();
    const enc = await startScanner({ keypair: kp });
    const p = await startProxy({ upstreams: { enc: { hosts: enc.address, key: formatKeypair(kp).pubkey } } });
    try {
      const r = await rawExchange(p.port, checkv2(gtube, { From: '<a@example.org>' }));
      assert.equal(r.status, 200, r.raw.toString());
      assert.equal(json(r.body).action, 'reject');
      const up = enc.seen[enc.seen.length - 1]!;
      assert.equal(up.encrypted, true, 'the scanner opened an HTTPCrypt request');
      assert.equal(header(up, 'from'), '<a@example.org>');
      // A second request on the kept-alive encrypted leg.
      const again = await rawExchange(p.port, checkv2(clean));
      assert.equal(again.status, 200);
      assert.equal(enc.seen.length, 2);
    } finally {
      await p.close();
      await enc.close();
    }
  });

  test('settings_id replaces the client Settings-ID on the way to the group', async () => {
    const p = await startProxy({ upstreams: { s: { hosts: a.address, settings_id: 'forced' } } });
    try {
      const before = a.seen.length;
      await rawExchange(p.port, checkv2(clean, { 'Settings-ID': 'mine' }));
      const up = a.seen[before]!;
      assert.deepEqual(up.headers.filter(([k]) => k.toLowerCase() === 'settings-id').map(([, v]) => v), ['forced']);
    } finally {
      await p.close();
    }
  });
});

describe('encrypted clients of the proxy (its own keypair)', () => {
  test('a client encrypting to the proxy key is answered, sealed to it', async () => {
    const kp = generateKeypair();
    const text = formatKeypair(kp);
    const p = await startProxy({ keypair: { pubkey: text.pubkey, privkey: text.privkey }, upstreams: { local: { hosts: a.address } } });
    const client = new ScanClient({ server: p.address, key: text.pubkey });
    try {
      const r = await client.scan(gtube);
      assert.equal(r.result.action, 'reject');
      assert.equal(a.seen[a.seen.length - 1]!.encrypted, false, 'the scanner leg is plain: the group has no key');
    } finally {
      client.close();
      await p.close();
    }
  });
});

describe('mirrors (§2.3)', () => {
  let fakeNoAction: FakeUpstream & { close(): Promise<void> };
  before(async () => {
    // A mirror that replays a recorded-style verdict: a different action from the master's reject.
    const server = http.createServer((req, res) => {
      fakeNoAction.hits++;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ is_skipped: false, score: 1.5, required_score: 15, action: 'no action', symbols: {}, messages: {} }));
      });
    });
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const port = (server.address() as net.AddressInfo).port;
    fakeNoAction = { hits: 0, port, address: `127.0.0.1:${port}`, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
    toClose.push(fakeNoAction);
  });

  const waitFor = async (cond: () => boolean, what: string): Promise<void> => {
    const until = Date.now() + 30_000;
    while (!cond()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  test('probability 1: every session is copied; a different action is logged at info; the client sees only the master', async () => {
    const p = await startProxy({ upstreams: { local: { hosts: a.address } }, mirrors: { canary: { hosts: fakeNoAction.address, probability: 1 }, real: { hosts: b.address } } });
    try {
      const [hits, nb] = [fakeNoAction.hits, b.seen.length];
      const r = await rawExchange(p.port, checkv2(gtube, { 'Queue-Id': 'Q123' }));
      assert.equal(json(r.body).action, 'reject');
      await waitFor(() => fakeNoAction.hits === hits + 1 && b.seen.length === nb + 1, 'both copies');
      await waitFor(() => p.logs.some((l) => /mirror canary action "no action" differs from the master's "reject"/.test(l.msg)), 'the compare line');
      const line = p.logs.find((l) => /mirror canary/.test(l.msg))!;
      assert.equal(line.level, 30, 'info');
      assert.equal(line.tag, 'Q123');
      assert.ok(!p.logs.some((l) => /mirror real action/.test(l.msg)), 'a mirror that agrees is not logged');
    } finally {
      await p.close();
    }
  });

  test('probability 0: no copy; one coin per session for all mirrors', async () => {
    const coins = [0.3, 0.7];
    let i = 0;
    const p = await startProxy(
      { upstreams: { local: { hosts: a.address } }, mirrors: { never: { hosts: fakeNoAction.address, probability: 0 }, half1: { hosts: b.address, probability: 0.5 }, half2: { hosts: fakeNoAction.address, probability: 0.5 } } },
      { random: () => coins[i++ % coins.length]! },
    );
    try {
      const [hits, nb] = [fakeNoAction.hits, b.seen.length];
      await rawExchange(p.port, checkv2(clean)); // coin 0.3: both halves
      await waitFor(() => b.seen.length === nb + 1 && fakeNoAction.hits === hits + 1, 'the copies of session 1');
      await rawExchange(p.port, checkv2(clean)); // coin 0.7: neither
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(b.seen.length, nb + 1);
      assert.equal(fakeNoAction.hits, hits + 1, 'probability 0 never copies; 0.5 mirrors skip together');
    } finally {
      await p.close();
    }
  });
});

describe('self-scan (§3.13)', () => {
  test('self_scan: true scans GTUBE in the proxy with no upstream at all', async () => {
    const p = await startProxy({ self_scan: true });
    try {
      const r = await rawExchange(p.port, checkv2(gtube));
      assert.equal(r.status, 200);
      assert.equal(json(r.body).action, 'reject');
      const ping = await rawExchange(p.port, 'GET /ping HTTP/1.0\r\n\r\n');
      assert.equal(ping.body.toString(), 'pong\r\n', 'a self-scanning proxy answers /ping itself');
      const legacy = await rawExchange(p.port, Buffer.concat([Buffer.from(`SYMBOLS SPAMC/1.5\r\nContent-length: ${gtube.length}\r\n\r\n`), gtube]), { untilClose: true });
      assert.match(legacy.raw.toString(), /^SPAMD\/1\.1 0 EX_OK\r\n[\s\S]*GTUBE/);
    } finally {
      await p.close();
    }
  });

  test('a self_scan group chosen by Host next to an upstream group', async () => {
    const p = await startProxy({ upstreams: { remote: { hosts: a.address, default: true }, selfscan: { self_scan: true } } });
    try {
      const before = a.seen.length;
      const r = await rawExchange(p.port, checkv2(gtube, { Host: 'selfscan' }));
      assert.equal(json(r.body).action, 'reject');
      assert.equal(a.seen.length, before, 'no upstream leg');
    } finally {
      await p.close();
    }
  });
});

describe('bad client input', () => {
  let proxy: TestProxy;
  before(async () => {
    proxy = await startProxy({ upstreams: { local: { hosts: a.address } } });
    toClose.push(proxy);
  });

  test('garbage, a bad chunk and an oversized head close their own connections; a scan in parallel is unaffected', async () => {
    const good = rawExchange(proxy.port, checkv2(gtube));
    const bad = await Promise.all([
      rawExchange(proxy.port, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00, 0x0d, 0x0a, 0x0d, 0x0a])),
      rawExchange(proxy.port, 'POST /checkv2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n'),
      rawExchange(proxy.port, `GET /ping HTTP/1.1\r\nX: ${'a'.repeat(100_000)}\r\n\r\n`),
      rawExchange(proxy.port, 'NOTAMETHOD / HTTP/1.1\r\n\r\n'),
    ]);
    for (const r of bad) assert.ok(r.status >= 400 || r.raw.length === 0, r.statusLine);
    const g = await good;
    assert.equal(g.status, 200);
    assert.equal(json(g.body).action, 'reject');
  });

  test('a client that sends half a request and stalls does not hold up others', async () => {
    const stall = net.connect({ host: '127.0.0.1', port: proxy.port });
    stall.on('error', () => undefined);
    stall.write('POST /checkv2 HTTP/1.1\r\nContent-Length: 1000\r\n\r\npartial');
    try {
      const r = await rawExchange(proxy.port, checkv2(clean));
      assert.equal(r.status, 200);
    } finally {
      stall.destroy();
    }
  });
});

describe('hash rotation (§2.2)', () => {
  const countFor = async (p: TestProxy, headers: Record<string, string>): Promise<'a' | 'b'> => {
    const [na, nb] = [a.seen.length, b.seen.length];
    const r = await rawExchange(p.port, checkv2(clean, headers));
    assert.equal(r.status, 200);
    if (a.seen.length === na + 1 && b.seen.length === nb) return 'a';
    if (b.seen.length === nb + 1 && a.seen.length === na) return 'b';
    throw new Error('the request reached neither or both scanners');
  };

  test('hash_by: ip keeps a client on one scanner whatever its source port; clients spread over both', async () => {
    const p = await startProxy({ upstreams: { h: { hosts: `hash:${a.address},${b.address}`, hash_by: 'ip' } } });
    try {
      const first = await countFor(p, { IP: '192.0.2.10:1111' });
      assert.equal(await countFor(p, { IP: '192.0.2.10:2222' }), first);
      assert.equal(await countFor(p, { IP: '192.0.2.10' }), first);
      const seenHosts = new Set<string>();
      for (let i = 1; i <= 16; i++) seenHosts.add(await countFor(p, { IP: `198.51.100.${i}` }));
      assert.equal(seenHosts.size, 2, '16 clients all on one host would not be hashing');
    } finally {
      await p.close();
    }
  });

  test('hash_by: from keeps a sender on one scanner', async () => {
    const p = await startProxy({ upstreams: { h: { hosts: `hash:${a.address} ${b.address}`, hash_by: 'from' } } });
    try {
      const first = await countFor(p, { From: '<Alice@Example.org>', IP: '192.0.2.1' });
      for (let i = 2; i < 6; i++) assert.equal(await countFor(p, { From: '<alice@example.org>', IP: `192.0.2.${i}` }), first);
    } finally {
      await p.close();
    }
  });
});
