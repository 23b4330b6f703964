import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer } from '../helpers/dns-server.js';
import type { DnsTestServer } from '../helpers/dns-server.js';
import type { HttpResult, RedisResult, TcpResult } from '../../src/plugin-api/index.js';
import { netEngine, meta, MSG } from './helpers.js';

let dns: DnsTestServer;
let web: http.Server;
let webPort = 0;
const webSockets = new Set<net.Socket>();
let closedHangs = 0;
let lineServer: net.Server;
let linePort = 0;
const BIG = Buffer.alloc(3 * 1024 * 1024, 'a');


/** A connection handler calling `onLine` for each `\n`-ended line; `onLine` returns false to stop reading. */
function lineConnection(onLine: (line: string, s: net.Socket) => boolean): (s: net.Socket) => void {
  return (s) => {
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString();
      let at;
      while ((at = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, at);
        buf = buf.slice(at + 1);
        if (!onLine(line, s)) return;
      }
    });
    s.on('error', () => {});
  };
}

before(async () => {
  dns = await startDnsServer({ zone: { 'web.test': [{ type: 'A', data: '127.0.0.1' }] } });
  web = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/hang') {
      req.socket.on('close', () => closedHangs++);
      return; // never answers
    }
    if (u.pathname === '/big') return res.end(BIG);
    if (u.pathname === '/echo') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.writeHead(201, { 'X-Method': req.method ?? '' }).end(Buffer.concat(chunks)));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not here');
  });
  web.on('connection', (s) => { webSockets.add(s); s.on('close', () => webSockets.delete(s)); });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  webPort = (web.address() as AddressInfo).port;
  // A line server: answers each line with "ECHO <line>\n"; "BYE" closes after answering.
  lineServer = net.createServer(lineConnection((line, s) => {
    if (line === 'BYE') { s.end('bye\n'); return false; }
    s.write(`ECHO ${line}\n`);
    return true;
  }));
  await new Promise<void>((r) => lineServer.listen(0, '127.0.0.1', r));
  linePort = (lineServer.address() as AddressInfo).port;
});

after(async () => {
  for (const s of webSockets) s.destroy();
  await new Promise<void>((r) => web.close(() => r()));
  await new Promise<void>((r) => lineServer.close(() => r()));
  await dns.close();
});

test('http: callback and awaited forms, statuses are not errors, host via our resolver, large body, time-out', async () => {
  const got: Record<string, unknown> = {};
  const { engine, net: services } = await netEngine([
    {
      name: 'HTTP_CB',
      check(task) {
        task.http.request({
          url: `http://web.test:${webPort}/missing`,
          callback: (err, code, body) => { got.cb = { err, code, body: body?.toString() }; },
        });
      },
    },
    {
      name: 'HTTP_AWAIT',
      flags: ['coro'],
      async check(task) {
        got.post = await task.http.request({ url: `http://127.0.0.1:${webPort}/echo`, body: 'payload', headers: { 'X-A': 'b' } });
        got.big = await task.http.request({ url: `http://127.0.0.1:${webPort}/big` });
        got.small = await task.http.request({ url: `http://127.0.0.1:${webPort}/big`, max_size: 1000 });
        const t0 = Date.now();
        got.hang = await task.http.request({ url: `http://127.0.0.1:${webPort}/hang`, timeout: 0.2 });
        got.hangMs = Date.now() - t0;
        got.nohost = await task.http.request({ url: `http://nowhere.test:${webPort}/` });
      },
    },
  ], dns.address);
  try {
    await engine.scan(MSG, meta());
    assert.deepEqual(got.cb, { err: undefined, code: 404, body: 'not here' });
    const post = got.post as HttpResult;
    assert.equal(post.err, undefined);
    assert.equal(post.response?.code, 201);
    assert.equal(post.response?.content, 'payload');
    assert.equal(post.response?.headers['x-method'], 'POST');
    assert.equal((got.big as HttpResult).response?.body.length, BIG.length);
    assert.match((got.small as HttpResult).err ?? '', /larger than 1000 bytes/);
    assert.equal((got.hang as HttpResult).err, 'IO timeout');
    assert.ok((got.hangMs as number) < 600);
    assert.match((got.nohost as HttpResult).err ?? '', /^unable to resolve host/);
  } finally {
    await services.close();
  }
});

test('http: a call still running when the task ends is cancelled (connection closed)', async () => {
  let called = false;
  const { engine, net: services } = await netEngine([
    {
      name: 'HANGS',
      check(task) {
        task.http.request({ url: `http://127.0.0.1:${webPort}/hang`, timeout: 30, callback: () => { called = true; } });
      },
    },
  ], dns.address, { taskTimeout: 0.3 });
  try {
    const before = closedHangs;
    const t0 = Date.now();
    await engine.scan(MSG, meta());
    assert.ok(Date.now() - t0 < 800, 'the scan ends at its deadline');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(closedHangs, before + 1, 'the server saw the connection closed');
    assert.equal(called, false, 'no callback after the task ended');
  } finally {
    await services.close();
  }
});

test('tcp: one-shot request in both forms, connection with read_until/read_bytes/read_until_eof', async () => {
  const got: Record<string, unknown> = {};
  const { engine, net: services } = await netEngine([
    {
      name: 'TCP_CB',
      check(task) {
        task.tcp.request({ host: '127.0.0.1', port: linePort, data: ['he', 'llo\n'], stop_pattern: '\n', callback: (err, data) => { got.cb = { err, data: data?.toString() }; } });
      },
    },
    {
      name: 'TCP_AWAIT',
      flags: ['coro'],
      async check(task) {
        got.once = await task.tcp.request({ host: '127.0.0.1', port: linePort, data: 'one\n', stop_pattern: '\n' });
        got.refused = await task.tcp.request({ host: '127.0.0.1', port: 1, data: 'x' });
        const c = await task.tcp.connect({ host: '127.0.0.1', port: linePort, timeout: 2 });
        assert.ok(c.ok);
        const conn = c.conn;
        await conn.write('a\nbb\n');
        got.line1 = await conn.read_until('\n');
        got.bytes = await conn.read_bytes(5);
        got.rest = await conn.read_until('\n');
        await conn.write('BYE\n');
        got.eof = await conn.read_until_eof();
        got.after = await conn.read_once();
        conn.close();
      },
    },
  ], dns.address);
  try {
    await engine.scan(MSG, meta());
    assert.deepEqual(got.cb, { err: undefined, data: 'ECHO hello' });
    assert.equal((got.once as TcpResult).data?.toString(), 'ECHO one');
    assert.match((got.refused as TcpResult).err ?? '', /^unable to make connection to the host/);
    const txt = (k: string): string => { const r = got[k] as { ok: boolean; data?: Buffer; error?: string }; return r.ok ? r.data!.toString() : `ERR ${r.error}`; };
    assert.equal(txt('line1'), 'ECHO a');
    assert.equal(txt('bytes'), 'ECHO ');
    assert.equal(txt('rest'), 'bb');
    assert.equal(txt('eof'), 'bye\n');
    assert.equal(txt('after'), 'ERR EOF, cannot read more data');
  } finally {
    await services.close();
  }
});

test('tcp: a host that is an absolute path is a Unix-domain socket (port ignored); a missing or too long path is an err result', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-net-sock-'));
  const path = join(dir, 'line.sock');
  const missing = join(dir, 'missing.sock');
  const tooLong = join(dir, 'x'.repeat(120));
  // The same line protocol as the TCP line server, on a socket.
  const seen: string[] = [];
  const server = net.createServer(lineConnection((line, s) => {
    seen.push(line);
    s.write(`SOCK ${line}\n`);
    return true;
  }));
  await new Promise<void>((r) => server.listen(path, r));
  const got: Record<string, unknown> = {};
  const { engine, net: services } = await netEngine([
    {
      name: 'SOCK_CB',
      check(task) {
        task.tcp.request({ host: path, port: 0, data: 'cb\n', stop_pattern: '\n', callback: (err, data) => { got.cb = { err, data: data?.toString() }; } });
      },
    },
    {
      name: 'SOCK_AWAIT',
      flags: ['coro'],
      async check(task) {
        // A literal path needs no port at all.
        got.once = await task.tcp.request({ host: '/nonexistent-mailsift-dir/x.sock', data: 'x' });
        got.reply = await task.tcp.request({ host: path, port: 12345, data: ['he', 'llo\n'], stop_pattern: '\n', timeout: 2 });
        got.missing = await task.tcp.request({ host: missing, port: 0, data: 'x\n' });
        got.tooLong = await task.tcp.request({ host: tooLong, port: 0, data: 'x\n' });
        got.nul = await task.tcp.request({ host: `${path}\0tail`, port: 0, data: 'x\n' });
        const c = await task.tcp.connect({ host: path, port: 0, timeout: 2 });
        assert.ok(c.ok);
        await c.conn.write('a\nb\n');
        got.line1 = await c.conn.read_until('\n');
        got.line2 = await c.conn.read_until('\n');
        c.conn.close();
        got.connMissing = await task.tcp.connect({ host: missing, port: 0 });
      },
    },
  ], dns.address);
  try {
    await engine.scan(MSG, meta());
    assert.deepEqual(got.cb, { err: undefined, data: 'SOCK cb' });
    assert.equal((got.reply as TcpResult).err, undefined);
    assert.equal((got.reply as TcpResult).data?.toString(), 'SOCK hello');
    assert.match((got.once as TcpResult).err ?? '', /^unable to make connection to the host \/nonexistent-mailsift-dir\/x\.sock: connect ENOENT/);
    assert.equal((got.missing as TcpResult).err, `unable to make connection to the host ${missing}: connect ENOENT ${missing}`);
    assert.match((got.tooLong as TcpResult).err ?? '', /^unable to make connection to the host .*: the socket path is \d+ bytes, longer than the 107 a socket address holds$/);
    assert.match((got.nul as TcpResult).err ?? '', /line\.sock\\0tail: the socket path contains a NUL byte$/);
    const line = (k: string): string => { const r = got[k] as { ok: boolean; data?: Buffer; error?: string }; return r.ok ? r.data!.toString() : `ERR ${r.error}`; };
    assert.equal(line('line1'), 'SOCK a');
    assert.equal(line('line2'), 'SOCK b');
    const cm = got.connMissing as { ok: boolean; error?: string };
    assert.equal(cm.ok, false);
    assert.match(cm.error ?? '', /connect ENOENT/);
    // The refused paths never reached the server: only the good exchanges did.
    assert.deepEqual(seen.sort(), ['a', 'b', 'cb', 'hello']);
  } finally {
    await services.close();
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  }
});

test('redis: request in both forms, nil, error reply, connection batch (127.0.0.1:6379, db 9, own prefix)', async () => {
  const key = `mailsift-net-test:${process.pid}`;
  const got: Record<string, unknown> = {};
  const params = { servers: '127.0.0.1:6379', db: 9 };
  const { engine, net: services } = await netEngine([
    {
      name: 'REDIS_CB',
      check(task) {
        task.redis.request(params, { is_write: true, callback: (err, data) => {
          got.set = { err, data };
          task.redis.request(params, { callback: (err2, data2) => { got.get = { err: err2, data: data2 }; } }, ['GET', `${key}:a`]);
        } }, ['SET', `${key}:a`, 'v1']);
      },
    },
    {
      name: 'REDIS_AWAIT',
      flags: ['coro'],
      deps: ['REDIS_CB'],
      async check(task) {
        got.nil = await task.redis.request(params, {}, ['GET', `${key}:none`]);
        got.wrong = await task.redis.request(params, {}, ['HGET', `${key}:a`, 'f']);
        const c = await task.redis.connect(params);
        assert.ok(c.ok);
        c.conn.add_cmd('INCRBY', [`${key}:n`, 5]);
        c.conn.add_cmd('INCRBY', [`${key}:n`, 2]);
        c.conn.add_cmd('DEL', [`${key}:a`, `${key}:n`]);
        got.batch = await c.conn.exec();
        got.down = await task.redis.request({ servers: '127.0.0.1:1', timeout: 0.2 }, {}, ['PING']);
      },
    },
  ], dns.address);
  try {
    await engine.scan(MSG, meta());
    assert.deepEqual(got.set, { err: undefined, data: 'OK' });
    assert.deepEqual(got.get, { err: undefined, data: 'v1' });
    assert.deepEqual(got.nil, { ok: true, data: null });
    const wrong = got.wrong as RedisResult;
    assert.equal(wrong.ok, false);
    assert.match(!wrong.ok ? wrong.error : '', /^WRONGTYPE/);
    assert.deepEqual(got.batch, { ok: true, data: [5, 7, 2] });
    assert.equal((got.down as RedisResult).ok, false);
  } finally {
    await services.close();
  }
});
