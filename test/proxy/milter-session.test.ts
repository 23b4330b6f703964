// The milter server over real sockets: bad input closes only its own session with a log line,
// caps hold, time-outs fire only while we wait for the MTA, relay failures become TEMPFAIL
// and the session goes on, negotiation honours what an older MTA offers, and several messages
// on one connection do not leak into each other.

import { describe as suite, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handleMilterConnection, milterOptions } from '../../src/proxy/milter/index.js';
import { MailsiftError } from '../../src/http/errors.js';
import type { RelayRequest, RelayResponse, ScanRelay } from '../../src/proxy/relay-types.js';
import {
  collectingLogger,
  describe,
  frame,
  jsonReply,
  splitFrames,
  optneg,
  ReplayRelay,
  startMilterServer,
  TestMilterClient,
  type LogLine,
  type TestMilterServer,
} from './milter-harness.js';

const ACCEPT = jsonReply({ action: 'no action', score: 0, required_score: 15, symbols: {} });

/** A small message from MAIL to EOB, as Postfix sends it (macros, envelope, headers, body). */
function message(opts: { from?: string; rcpts?: string[]; headers?: Array<[string, string]>; body?: string; mailMacros?: Array<[string, string]> } = {}): Buffer[] {
  const macros = (stage: string, pairs: Array<[string, string]>): Buffer => frame('D', stage + pairs.map(([k, v]) => `${k}\0${v}\0`).join(''));
  const out: Buffer[] = [];
  if (opts.mailMacros) out.push(macros('M', opts.mailMacros));
  out.push(frame('M', `${opts.from ?? '<a@example.org>'}\0`));
  for (const r of opts.rcpts ?? ['<b@example.com>']) out.push(frame('R', `${r}\0`));
  out.push(frame('T'));
  for (const [k, v] of opts.headers ?? [['Subject', 'hi'], ['From', 'a@example.org']]) out.push(frame('L', `${k}\0${v}\0`));
  out.push(frame('N'));
  out.push(frame('B', opts.body ?? 'Hello\r\n'));
  out.push(frame('E'));
  return out;
}

function connect(host = 'mx.example.org', ip = '192.0.2.1', port = 2525): Buffer {
  const p = Buffer.alloc(2);
  p.writeUInt16BE(port, 0);
  return frame('C', Buffer.concat([Buffer.from(`${host}\0`), Buffer.from('4'), p, Buffer.from(`${ip}\0`)]));
}

async function withServer(relay: ScanRelay, opts: Parameters<typeof startMilterServer>[1], fn: (s: TestMilterServer) => Promise<void>): Promise<void> {
  const server = await startMilterServer(relay, opts);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/** Open a session with a v6 OPTNEG and CONNECT, as Postfix does. */
async function session(server: TestMilterServer): Promise<TestMilterClient> {
  const c = await TestMilterClient.connect(server.port);
  c.send(optneg());
  const r = await c.readFrame();
  assert.notEqual(r, 'eof');
  c.send(connect());
  return c;
}

function protocolErrors(logs: LogLine[]): string[] {
  return logs.filter((l) => l.level === 'warn' && l.msg.startsWith('milter protocol error')).map((l) => String(l.extra.error));
}

/** Send bytes, expect the server to close without sending anything, and a protocol-error line. */
async function expectClosedSilently(server: TestMilterServer, bytes: Buffer, errorPattern: RegExp, afterOptneg = true): Promise<void> {
  const c = await TestMilterClient.connect(server.port);
  let before = 0;
  if (afterOptneg) {
    c.send(optneg());
    assert.notEqual(await c.readFrame(), 'eof');
    before = c.received.length;
  }
  c.send(bytes);
  assert.ok(await c.waitEnd(), 'the server closes the connection');
  assert.equal(c.received.length, before, 'nothing is sent back for bad input');
  const errors = protocolErrors(server.logs);
  assert.ok(errors.some((e) => errorPattern.test(e)), `a log line matching ${errorPattern}; got ${JSON.stringify(errors)}`);
  c.close();
}

suite('milter sessions: bad input', () => {
  const cases: Array<[string, Buffer, RegExp, boolean?]> = [
    ['a frame of length 0', Buffer.from([0, 0, 0, 0, 0x4f]), /frame length 0/],
    ['an unknown command', frame('Z', 'x'), /unknown command 0x5a/],
    ['a macro name without a NUL', frame('D', 'Cj'), /macro name without a NUL/],
    ['a macro value without a NUL', frame('D', 'Cj\0mx.example.org'), /macro value without a NUL/],
    ['a header without its value NUL', frame('L', 'Subject\0hi'), /HEADER value without a NUL/],
    ['a header without any NUL', frame('L', 'Subject'), /HEADER without a NUL/],
    ['CONNECT with a bad IPv4 address', frame('C', Buffer.concat([Buffer.from('h\x004'), Buffer.from([0, 25]), Buffer.from('300.1.1.1\0')])), /bad IP address/],
    ['CONNECT without an address family', frame('C', 'host\0'), /without an address family/],
    ['CONNECT with an unknown family', frame('C', 'host\0X'), /address family "X"/],
    ['OPTNEG of the wrong length', frame('O', Buffer.alloc(11)), /OPTNEG of 11 bytes/, false],
    ['OPTNEG below version 2', optneg(1), /version 1/, false],
    ['a 100 MB body chunk', Buffer.concat([Buffer.from([0x05, 0xf5, 0xe1, 0x01, 0x42]), Buffer.alloc(64 * 1024, 0x61)]), /frame length 100000001 over/],
    ['an HTTP POST on the milter port', Buffer.from('POST /checkv2 HTTP/1.1\r\nContent-Length: 0\r\n\r\n'), /POST request is not supported/, false],
    ['an HTTP GET that is not /ping', Buffer.from('GET /checkv2 HTTP/1.1\r\n\r\n'), /GET request is not supported in milter mode, url: \/checkv2/, false],
  ];
  for (const [name, bytes, pattern, afterOptneg] of cases) {
    it(`${name}: the session is closed without a reply, with a log line`, async () => {
      await withServer(new ReplayRelay([]), {}, (server) => expectClosedSilently(server, bytes, pattern, afterOptneg ?? true));
    });
  }

  it('a 100 MB chunk is refused from its frame head, before its data arrives', async () => {
    await withServer(new ReplayRelay([]), {}, async (server) => {
      const c = await TestMilterClient.connect(server.port);
      // Only the 5-byte head of a 100 MB frame: the server must not wait for the rest.
      c.send(Buffer.from([0x05, 0xf5, 0xe1, 0x01, 0x42]));
      assert.ok(await c.waitEnd(5_000), 'closed on the frame head alone');
      c.close();
    });
  });

  it('a session that garbles its stream does not disturb a concurrent one', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const relay: ScanRelay & { requests: RelayRequest[] } = {
      requests: [],
      async relay(req) {
        this.requests.push(req);
        await gate; // the good session's scan is in flight while the bad one misbehaves
        return ACCEPT;
      },
    };
    await withServer(relay, {}, async (server) => {
      const good = await session(server);
      for (const f of message().slice(0, -1)) good.send(f); // everything but EOB
      const bad = await session(server);
      bad.send(frame('H', 'helo\0'));
      bad.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x42, 1, 2, 3]));
      good.send(frame('E'));
      assert.ok(await bad.waitEnd(), 'the garbling session is closed');
      release();
      const v = await good.readVerdict();
      assert.deepEqual(v.map(describe), ['a ']);
      // The good session goes on: a second message, then QUIT.
      for (const f of message()) good.send(f);
      assert.deepEqual((await good.readVerdict()).map(describe), ['a ']);
      good.send(frame('Q'));
      assert.ok(await good.waitEnd());
      assert.equal(relay.requests.length, 2);
      assert.equal(protocolErrors(server.logs).length, 1);
    });
  });

  it('many sessions at once, half of them sending garbage mid-message, all good ones get verdicts', async () => {
    await withServer({ relay: async () => ACCEPT }, {}, async (server) => {
      const runs = Array.from({ length: 20 }, async (_, i) => {
        const c = await session(server);
        const frames = message({ body: `message ${i}\r\n` });
        for (const [n, f] of frames.entries()) {
          if (i % 2 === 1 && n === 3) {
            c.send(frame('D', 'Cbroken')); // a macro without NULs
            assert.ok(await c.waitEnd());
            return 'closed';
          }
          c.send(f);
        }
        const v = await c.readVerdict();
        c.close();
        return v.map(describe).join('|');
      });
      const results = await Promise.all(runs);
      assert.deepEqual(results, results.map((_, i) => (i % 2 === 1 ? 'closed' : 'a ')));
    });
  });
});

suite('milter sessions: caps and time-outs', () => {
  it('more distinct macros than maxMacros closes the session', async () => {
    await withServer(new ReplayRelay([]), { maxMacros: 3 }, (server) =>
      expectClosedSilently(server, Buffer.concat([frame('D', 'Ca\0x\0b\0x\0c\0x\0'), frame('D', 'Ma\0y\0d\0y\0')]), /more than 3 distinct macros/),
    );
  });

  it('redefining the same macros never hits the cap', async () => {
    await withServer(new ReplayRelay([ACCEPT]), { maxMacros: 3 }, async (server) => {
      const c = await session(server);
      // 600 frames in one write: more than one turn of the frame loop (it yields in between).
      c.send(Buffer.concat(Array.from({ length: 600 }, (_, i) => frame('D', `Ci\0q${i}\0`))));
      for (const f of message()) c.send(f);
      assert.deepEqual((await c.readVerdict()).map(describe), ['a ']);
      c.close();
    });
  });

  it('more header fields than maxHeaders closes the session', async () => {
    const headers: Array<[string, string]> = Array.from({ length: 5 }, (_, i) => [`X-H${i}`, 'v']);
    await withServer(new ReplayRelay([]), { maxHeaders: 4 }, (server) => expectClosedSilently(server, Buffer.concat(message({ headers })), /more than 4 header fields/));
  });

  it('more recipients than maxRecipients closes the session', async () => {
    const rcpts = ['<a@x.org>', '<b@x.org>', '<c@x.org>'];
    await withServer(new ReplayRelay([]), { maxRecipients: 2 }, (server) => expectClosedSilently(server, Buffer.concat(message({ rcpts })), /more than 2 recipients/));
  });

  it('a message over maxMessage is accepted without a scan, and the next one is scanned', async () => {
    const relay = new ReplayRelay([ACCEPT]);
    await withServer(relay, { maxMessage: 1000 }, async (server) => {
      const c = await session(server);
      const big = message({ body: 'x'.repeat(600) });
      big.splice(-1, 0, frame('B', 'y'.repeat(600)));
      for (const f of big) c.send(f);
      assert.deepEqual((await c.readVerdict()).map(describe), ['a ']);
      assert.equal(relay.requests.length, 0, 'not scanned');
      assert.ok(server.logs.some((l) => l.msg.includes('over max_message') && l.extra.size === 1236));
      for (const f of message()) c.send(f);
      assert.deepEqual((await c.readVerdict()).map(describe), ['a ']);
      assert.equal(relay.requests.length, 1);
      assert.match(relay.requests[0]!.body.toString(), /^Subject: hi\r\nFrom: a@example.org\r\n\r\nHello\r\n$/);
      c.close();
    });
  });

  it('a connection that goes silent (never sends EOB) is closed after idleTimeoutMs, with a log line', async () => {
    await withServer(new ReplayRelay([]), { idleTimeoutMs: 300 }, async (server) => {
      const c = await session(server);
      for (const f of message().slice(0, -1)) c.send(f);
      const t0 = Date.now();
      assert.ok(await c.waitEnd(10_000), 'closed by the idle time-out');
      assert.ok(Date.now() - t0 >= 250, 'not before the time-out');
      assert.ok(server.logs.some((l) => l.msg.includes('idle too long')));
    });
  });

  it('a scan longer than idleTimeoutMs does not trip the idle time-out', async () => {
    const slow: ScanRelay = { relay: () => new Promise((r) => setTimeout(() => r(ACCEPT), 900)) };
    await withServer(slow, { idleTimeoutMs: 300 }, async (server) => {
      const c = await session(server);
      for (const f of message()) c.send(f);
      assert.deepEqual((await c.readVerdict()).map(describe), ['a ']);
      assert.ok(!c.ended);
      c.close();
    });
  });

  it('an MTA that hangs up during a scan aborts the relay request; nothing is logged as an error', async () => {
    let aborted: () => void = () => undefined;
    const sawAbort = new Promise<void>((r) => (aborted = r));
    const relay: ScanRelay = {
      relay: (_req, signal) =>
        new Promise<RelayResponse>((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            aborted();
            reject(new MailsiftError('ERR_RELAY_FAILED', 'aborted'));
          });
        }),
    };
    await withServer(relay, {}, async (server) => {
      const c = await session(server);
      for (const f of message()) c.send(f);
      await new Promise((r) => setTimeout(r, 100));
      c.close();
      await sawAbort;
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(server.logs.filter((l) => l.level === 'error'), []);
    });
  });
});

suite('milter sessions: failures become TEMPFAIL and the session goes on', () => {
  const failing: Array<[string, RelayResponse | Error, RegExp]> = [
    ['the relay fails (all upstreams down)', new MailsiftError('ERR_RELAY_REFUSED', 'Gateway connection refused'), /ERR_RELAY_REFUSED/],
    ['the reply is an HTML error page', { status: 500, reason: 'Internal Server Error', headers: [['Content-Type', 'text/html']], body: Buffer.from('<h1>oops</h1>'), upstream: 'u' }, /not JSON/],
    ['the JSON does not parse', { status: 200, reason: 'OK', headers: [['Content-Type', 'application/json']], body: Buffer.from('{"action": "reject",'), upstream: 'u' }, /does not parse/],
    ['the result has no action', jsonReply({ score: 3 }), /no action$/],
    ['the action is not declared in the proxy', jsonReply({ action: 'quarantine' }), /"quarantine" is not known/],
    ['the reply body is empty', { status: 200, reason: 'OK', headers: [['Content-Type', 'application/json']], body: Buffer.alloc(0), upstream: 'u' }, /empty reply/],
  ];
  for (const [name, reply, pattern] of failing) {
    it(`${name}: one TEMPFAIL, then the next message is scanned`, async () => {
      const relay = new ReplayRelay([reply, ACCEPT]);
      await withServer(relay, {}, async (server) => {
        const c = await session(server);
        for (const f of message()) c.send(f);
        assert.deepEqual((await c.readVerdict()).map(describe), ['t ']);
        assert.ok(server.logs.some((l) => (l.level === 'warn' || l.level === 'error') && pattern.test(l.msg)), `a log line matching ${pattern}`);
        for (const f of message()) c.send(f);
        assert.deepEqual((await c.readVerdict()).map(describe), ['a ']);
        c.close();
      });
    });
  }
});

suite('milter sessions: negotiation', () => {
  it('a version-2 MTA without NR bits gets CONTINUE for each stage and only granted actions', async () => {
    const reply = jsonReply({ action: 'no action', milter: { change_from: '<x@y.org>', add_headers: { 'X-A': 'b' } } });
    await withServer(new ReplayRelay([reply]), {}, async (server) => {
      const c = await TestMilterClient.connect(server.port);
      c.send(optneg(2, 0x3f, 0x7f));
      assert.equal(describe((await c.readFrame()) as never), 'O v2 actions=0x3f protocol=0x0');
      const steps: Buffer[] = [connect(), frame('H', 'helo.example\0'), ...message()];
      const got: string[] = [];
      for (const f of steps) {
        c.send(f);
        if (f[4] === 0x45) got.push(...(await c.readVerdict()).map(describe));
        else got.push(describe((await c.readFrame()) as never));
      }
      // CONNECT, HELO, MAIL, RCPT, DATA, 2 headers, EOH, BODY; then the verdict without CHGFROM.
      assert.deepEqual(got, [...Array(9).fill('c '), 'h X-A\\0b\\0', 'a ']);
      assert.ok(server.logs.some((l) => l.msg.includes('did not grant') && JSON.stringify(l.extra.dropped) === '["chgfrom"]'));
      c.close();
    });
  });

  it('a v6 MTA that offers only some NR bits gets CONTINUE for the others', async () => {
    await withServer(new ReplayRelay([ACCEPT]), {}, async (server) => {
      const c = await TestMilterClient.connect(server.port);
      c.send(optneg(6, 0x1ff, 0x80 /* NR_HDR only */ | 0x1000 /* NR_CONN */));
      assert.equal(describe((await c.readFrame()) as never), 'O v6 actions=0x1ff protocol=0x1080');
      c.send(connect()); // NR_CONN granted: no reply
      c.send(frame('H', 'helo\0')); // not granted: CONTINUE
      assert.equal(describe((await c.readFrame()) as never), 'c ');
      c.send(frame('L', 'Subject\0x\0')); // NR_HDR granted: no reply
      c.send(frame('N')); // not granted
      assert.equal(describe((await c.readFrame()) as never), 'c ');
      c.send(frame('E'));
      assert.deepEqual((await c.readVerdict()).map(describe), ['a ']);
      c.close();
    });
  });

  it('the whole session in one write, or trickled one byte at a time, gets the same frames', async () => {
    const stream = Buffer.concat([optneg(), connect(), frame('H', 'helo\0'), ...message(), frame('Q')]);
    const run = async (chunks: Buffer[]): Promise<string[]> => {
      let out: string[] = [];
      await withServer(new ReplayRelay([jsonReply({ action: 'reject', messages: { smtp_message: 'No thanks' } })]), {}, async (server) => {
        const c = await TestMilterClient.connect(server.port);
        for (const ch of chunks) c.send(ch);
        assert.ok(await c.waitEnd(30_000));
        out = splitFrames(c.received).frames.map(describe);
      });
      return out;
    };
    const expected = ['O v6 actions=0x1ff protocol=0xff080', 'y 554 5.7.1 No thanks\\0'];
    assert.deepEqual(await run([stream]), expected);
    const bytes: Buffer[] = [];
    for (let i = 0; i < stream.length; i++) bytes.push(stream.subarray(i, i + 1));
    assert.deepEqual(await run(bytes), expected);
  });
});

suite('milter sessions: several messages on one connection', () => {
  it('message macros, envelope and headers do not leak into the next message; QUIT_NC forgets the connection', async () => {
    const relay = new ReplayRelay([ACCEPT, ACCEPT, ACCEPT]);
    await withServer(relay, {}, async (server) => {
      const c = await TestMilterClient.connect(server.port);
      c.send(optneg());
      await c.readFrame();
      c.send(frame('D', 'Cj\0mx.local\0{daemon_name}\0smtpd\0v\0Postfix 3.7\0'));
      c.send(connect('client.example', '198.51.100.9', 4000));
      c.send(frame('D', 'H{cipher}\0TLS_AES\0'));
      c.send(frame('H', 'client.example\0'));
      for (const f of message({ from: '<one@example.org>', rcpts: ['<r1@example.com>', '<r2@example.com>'], mailMacros: [['{auth_authen}', 'alice'], ['i', 'Q1']] })) c.send(f);
      await c.readVerdict();
      // Message 2: no AUTH macros this time, one recipient, other headers.
      for (const f of message({ from: '<two@example.org>', headers: [['Subject', 'two']] })) c.send(f);
      await c.readVerdict();
      c.send(frame('K')); // QUIT_NC: a new SMTP connection follows
      c.send(connect('unknown', '203.0.113.5', 5000));
      for (const f of message({ from: '<three@example.org>' })) c.send(f);
      await c.readVerdict();
      c.close();

      const h = relay.requests.map((r) => r.headers.filter(([k]) => k !== 'Content-Type').map(([k, v]) => `${k}: ${v}`));
      assert.deepEqual(h[0], [
        'Hostname: client.example',
        'Helo: client.example',
        'From: <one@example.org>',
        'Rcpt: <r1@example.com>',
        'Rcpt: <r2@example.com>',
        'IP: 198.51.100.9:4000',
        'Queue-ID: Q1',
        'User-Agent: Postfix 3.7',
        'TLS-Cipher: TLS_AES',
        'User: alice',
        'MTA-Name: smtpd',
        'Flags: milter,body_block',
      ]);
      // Connection macros (C, H stages) stay; the MAIL-stage ones (User, Queue-ID) do not.
      assert.deepEqual(h[1], ['Hostname: client.example', 'Helo: client.example', 'From: <two@example.org>', 'Rcpt: <b@example.com>', 'IP: 198.51.100.9:4000', 'User-Agent: Postfix 3.7', 'TLS-Cipher: TLS_AES', 'MTA-Name: smtpd', 'Flags: milter,body_block']);
      assert.equal(relay.requests[1]!.body.toString(), 'Subject: two\r\n\r\nHello\r\n');
      // After QUIT_NC: no macros, new address, `unknown` host name not sent; HELO kept (Rspamd too).
      assert.deepEqual(h[2], ['Helo: client.example', 'From: <three@example.org>', 'Rcpt: <b@example.com>', 'IP: 203.0.113.5:5000', 'Flags: milter,body_block']);
    });
  });

  it('ABORT forgets the message in progress', async () => {
    const relay = new ReplayRelay([ACCEPT]);
    await withServer(relay, {}, async (server) => {
      const c = await session(server);
      const first = message({ from: '<aborted@example.org>', headers: [['X-Gone', '1']] });
      for (const f of first.slice(0, -1)) c.send(f);
      c.send(frame('A'));
      for (const f of message({ from: '<kept@example.org>' })) c.send(f);
      await c.readVerdict();
      c.close();
      const req = relay.requests[0]!;
      assert.deepEqual(req.headers.filter(([k]) => k === 'From' || k === 'Rcpt'), [['From', '<kept@example.org>'], ['Rcpt', '<b@example.com>']]);
      assert.ok(!req.body.toString().includes('X-Gone'));
    });
  });

  it('a body rewrite over 64 KiB goes out as several REPLBODY frames of at most 65 535 bytes', async () => {
    const newBody = Buffer.alloc(150_000, 0x41);
    newBody.write('start', 0);
    newBody.write('end', newBody.length - 3);
    await withServer(new ReplayRelay([jsonReply({ action: 'no action' }, [], newBody)]), {}, async (server) => {
      const c = await session(server);
      for (const f of message()) c.send(f);
      const v = await c.readVerdict();
      assert.deepEqual(v.map((f) => `${f.cmd}${f.data.length}`), ['b65535', 'b65535', 'b18930', 'a0']);
      assert.ok(Buffer.concat(v.slice(0, 3).map((f) => f.data)).equals(newBody));
      c.close();
    });
  });

  it('MAIL and RCPT values that are not addresses are left out, like Rspamd', async () => {
    const relay = new ReplayRelay([ACCEPT]);
    await withServer(relay, {}, async (server) => {
      const c = await session(server);
      for (const f of message({ from: 'not an address', rcpts: ['<postmaster>', '<ok@example.com>', '<>'] })) c.send(f);
      await c.readVerdict();
      c.close();
      assert.deepEqual(relay.requests[0]!.headers.filter(([k]) => k === 'From' || k === 'Rcpt'), [['Rcpt', '<ok@example.com>'], ['Rcpt', '<>']]);
    });
  });
});

suite('milter sessions: unix socket listener', () => {
  it('a session over a unix socket works, with a family-L CONNECT giving the socket path as IP', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailsift-milter-'));
    const path = join(dir, 'milter.sock');
    const relay = new ReplayRelay([ACCEPT]);
    const logs: LogLine[] = [];
    const server = net.createServer((s) => handleMilterConnection(s, { relay, config: milterOptions(), log: collectingLogger(logs) }));
    await new Promise<void>((r) => server.listen(path, r));
    try {
      const sock = net.connect(path);
      const chunks: Buffer[] = [];
      sock.on('data', (d: Buffer) => chunks.push(d));
      const closed = new Promise<void>((r) => sock.on('close', () => r()));
      const p = Buffer.alloc(2);
      sock.write(Buffer.concat([optneg(), frame('C', Buffer.concat([Buffer.from('localhost\0L'), p, Buffer.from('/run/mta.sock\0')])), ...message(), frame('Q')]));
      await closed;
      assert.deepEqual(splitFrames(Buffer.concat(chunks)).frames.map(describe), ['O v6 actions=0x1ff protocol=0xff080', 'a ']);
      assert.ok(relay.requests[0]!.headers.some(([k, v]) => k === 'IP' && v === '/run/mta.sock'));
      assert.equal(logs.find((l) => l.msg === 'milter verdict')?.extra.peer, 'unix');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
