// The proxy's legacy SPAMC/RSPAMC front end (proxy-milter.md §5.5) against a scripted upstream
// behind the real transport: what goes upstream (/checkv2, the message inflated from
// `Compress: zlib`, `body_block` asked for PROCESS/HEADERS, `User` per legacy_compat), what the
// client gets (the rewritten message, the body block, the scanner's error statuses as its
// dialect's status lines, a body that is not JSON as is), the commands answered without a scan,
// and a malformed head answered in the dialect by the transport.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { deflateSync } from 'node:zlib';
import { createTransport, type Transport } from '../../src/http/server.js';
import type { Handler, Reply } from '../../src/http/types.js';
import { rawExchange, startProxy, type TestProxy } from './harness.js';

const MESSAGE = Buffer.from('From: a@example.org\r\nTo: b@example.net\r\nSubject: hello\r\nMessage-Id: <l1@example.org>\r\n\r\nbody text\r\n');
const REWRITTEN = Buffer.from('From: a@example.org\r\nTo: b@example.net\r\nSubject: *** SPAM *** hello\r\nMessage-Id: <l1@example.org>\r\n\r\nbody text\r\n');
const RESULT = {
  is_skipped: false,
  score: 9.5,
  required_score: 15,
  action: 'rewrite subject',
  subject: '*** SPAM *** hello',
  symbols: { TEST_RULE: { name: 'TEST_RULE', score: 9.5, metric_score: 9.5 } },
  messages: {},
  'message-id': 'l1@example.org',
};

interface Seen {
  path: string;
  headers: Array<[string, string]>;
  body: Buffer;
}
const seen: Seen[] = [];
/** The next reply of the scripted upstream; by default the result, with the body block when asked. */
let script: ((req: Seen) => Reply) | undefined;

const defaultReply = (req: Seen): Reply => {
  const json = Buffer.from(JSON.stringify(RESULT));
  const wantsBlock = req.headers.some(([k, v]) => k.toLowerCase() === 'flags' && v.split(',').includes('body_block'));
  if (!wantsBlock) return { status: 200, contentType: 'application/json', body: json };
  return { status: 200, contentType: 'application/json', headers: [['Message-Offset', String(json.length)]], body: Buffer.concat([json, REWRITTEN]) };
};

const handler: Handler = (req) => {
  const s = { path: req.path, headers: [...req.headers.raw], body: req.body };
  seen.push(s);
  return (script ?? defaultReply)(s);
};

let upstream: Transport;
let upstreamAddress: string;
let spamd: TestProxy;
let rspamd: TestProxy;

before(async () => {
  upstream = createTransport(handler);
  await new Promise<void>((resolve) => upstream.server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  upstreamAddress = `127.0.0.1:${(upstream.server.address() as net.AddressInfo).port}`;
  spamd = await startProxy({ max_retries: 2, upstreams: { local: { hosts: upstreamAddress } } });
  rspamd = await startProxy({ legacy_compat: 'rspamd', upstreams: { local: { hosts: upstreamAddress } } });
});
after(async () => {
  await spamd?.close();
  await rspamd?.close();
  await upstream?.close();
});

function legacyRequest(line: string, body: Buffer, headers: Record<string, string> = {}): Buffer {
  let head = `${line}\r\nContent-length: ${body.length}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]);
}

async function exchange(p: TestProxy, request: Buffer): Promise<{ text: string; upstream: Seen[] }> {
  const before = seen.length;
  const r = await rawExchange(p.port, request, { untilClose: true });
  return { text: r.raw.toString('latin1'), upstream: seen.slice(before) };
}

const headerOf = (s: Seen, name: string): string[] => s.headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);

describe('legacy lines through the proxy', () => {
  test('PROCESS: body_block is asked for (merged into the client Flags) and the rewritten message comes back with X-Spam headers', async () => {
    script = undefined;
    const r = await exchange(spamd, legacyRequest('PROCESS SPAMC/1.5', MESSAGE, { Flags: 'pass_all' }));
    assert.equal(r.upstream.length, 1);
    const up = r.upstream[0]!;
    assert.equal(up.path, '/checkv2');
    assert.deepEqual(headerOf(up, 'flags'), ['pass_all,body_block'], 'one Flags line');
    assert.ok(up.body.equals(MESSAGE));
    const m = /^SPAMD\/1\.1 0 EX_OK\r\nContent-length: (\d+)\r\nSpam: True ; 9\.50 \/ 15\.00\r\n\r\n([\s\S]*)$/.exec(r.text);
    assert.ok(m, r.text);
    assert.equal(Buffer.byteLength(m[2]!, 'latin1'), Number(m[1]), 'Content-length counts the message');
    assert.match(m[2]!, /^Subject: \*\*\* SPAM \*\*\* hello\r$/m, 'the scanner rewrote the subject');
    assert.match(m[2]!, /^X-Spam-Status: /m);
    assert.match(m[2]!, /\r\n\r\nbody text\r\n$/);
  });

  test('HEADERS: the rewritten header block; no Flags from the client gets its own', async () => {
    const r = await exchange(spamd, legacyRequest('HEADERS SPAMC/1.5', MESSAGE));
    assert.deepEqual(headerOf(r.upstream[0]!, 'flags'), ['body_block']);
    assert.match(r.text, /^Subject: \*\*\* SPAM \*\*\* hello\r$/m);
    assert.doesNotMatch(r.text, /body text/);
  });

  test('CHECK asks for no body block; a client that sent Flags: body_block gets it after the reply', async () => {
    const plain = await exchange(spamd, legacyRequest('CHECK SPAMC/1.5', MESSAGE));
    assert.deepEqual(headerOf(plain.upstream[0]!, 'flags'), []);
    assert.equal(plain.text, 'SPAMD/1.1 0 EX_OK\r\nContent-length: 11\r\nSpam: True ; 9.50 / 15.00\r\n\r\nTEST_RULE\r\n');
    const withBlock = await exchange(spamd, legacyRequest('SYMBOLS RSPAMC/1.3', MESSAGE, { Flags: 'body_block' }));
    assert.ok(withBlock.text.startsWith('RSPAMD/1.3 0 EX_OK\r\nMetric: default; True; 9.50 / 15.00 / 0.0\r\nAction: rewrite subject\r\nSubject: *** SPAM *** hello\r\nSymbol: TEST_RULE(9.50)\r\n'), withBlock.text);
    assert.ok(withBlock.text.endsWith(REWRITTEN.toString('latin1')), 'the rewritten message follows the lines');
  });

  test('Compress: zlib: the scanner gets the message itself, without the Compress header', async () => {
    const r = await exchange(spamd, legacyRequest('SYMBOLS SPAMC/1.5', deflateSync(MESSAGE), { Compress: 'zlib' }));
    const up = r.upstream[0]!;
    assert.ok(up.body.equals(MESSAGE));
    assert.deepEqual(headerOf(up, 'compress'), []);
    assert.match(r.text, /^SPAMD\/1\.1 0 EX_OK\r\n/);
    const bomb = await exchange(spamd, legacyRequest('SYMBOLS SPAMC/1.5', Buffer.from('not zlib at all'), { Compress: 'zlib' }));
    assert.equal(bomb.upstream.length, 0, 'a body that does not inflate is not relayed');
    assert.match(bomb.text, /^SPAMD\/1\.0 \d+ Decompression error/);
  });

  test("the scanner's error statuses become the dialect's status line", async () => {
    const cases: Array<[number, string]> = [
      [413, 'SPAMD/1.0 65 upstream: message too large\r\n'],
      [400, 'SPAMD/1.0 76 upstream: message too large\r\n'],
      [500, 'SPAMD/1.0 75 upstream: message too large\r\n'],
    ];
    try {
      for (const [status, want] of cases) {
        script = () => ({ status, contentType: 'application/json', body: JSON.stringify({ error: 'message too large', error_domain: 'task-error' }) });
        const r = await exchange(spamd, legacyRequest('CHECK SPAMC/1.5', MESSAGE));
        assert.equal(r.text, want, `upstream ${status}`);
      }
      script = () => ({ status: 200, contentType: 'text/plain', body: 'not a result' });
      const r = await exchange(spamd, legacyRequest('CHECK RSPAMC/1.3', MESSAGE));
      assert.equal(r.text, 'RSPAMD/1.3 0 EX_OK\r\nnot a result', 'a reply that is not JSON is passed on under the status line (§5.5)');
    } finally {
      script = undefined;
    }
  });

  test('PING, SKIP and TELL are answered by the proxy without a scan', async () => {
    const ping = await exchange(spamd, Buffer.from('PING SPAMC/1.5\r\n\r\n'));
    assert.equal(ping.text, 'SPAMD/1.5 0 PONG\r\n');
    const skip = await exchange(spamd, legacyRequest('SKIP SPAMC/1.5', MESSAGE));
    assert.equal(skip.text, '');
    const tell = await exchange(spamd, legacyRequest('TELL SPAMC/1.5', MESSAGE, { 'Message-class': 'spam', Set: 'local' }));
    assert.match(tell.text, /^SPAMD\/1\.0 69 TELL commands are not enabled/);
    assert.equal(ping.upstream.length + skip.upstream.length + tell.upstream.length, 0);
  });

  test('legacy_compat: rspamd: REPORT is closed without a reply, the spamc User goes upstream, the flag stays False', async () => {
    const report = await exchange(rspamd, legacyRequest('REPORT SPAMC/1.5', MESSAGE));
    assert.equal(report.text, '');
    assert.equal(report.upstream.length, 0);
    script = () => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ ...RESULT, action: 'reject', score: 20 }) });
    try {
      const check = await exchange(rspamd, legacyRequest('CHECK SPAMC/1.5', MESSAGE, { User: 'bob' }));
      assert.deepEqual(headerOf(check.upstream[0]!, 'user'), ['bob']);
      assert.match(check.text, /^Spam: False ; 20\.00 \/ 15\.00\r$/m);
      const spamdCheck = await exchange(spamd, legacyRequest('CHECK SPAMC/1.5', MESSAGE, { User: 'bob' }));
      assert.deepEqual(headerOf(spamdCheck.upstream[0]!, 'user'), [], 'spamd mode: a spamc User names a local account, not an SMTP user');
      assert.match(spamdCheck.text, /^Spam: True ; 20\.00 \/ 15\.00\r$/m);
    } finally {
      script = undefined;
    }
  });

  test('a malformed legacy head is answered with a status line of its dialect, not HTTP', async () => {
    const r = await exchange(spamd, Buffer.from(`CHECK SPAMC/1.5\r\nContent-length: ${MESSAGE.length}\r\nBad header\r\n\r\n${MESSAGE.toString('latin1')}`, 'latin1'));
    assert.equal(r.text, 'SPAMD/1.0 76 Malformed header line\r\n');
    assert.equal(r.upstream.length, 0);
    const log = spamd.logs.find((l) => l.msg === 'legacy request refused');
    assert.ok(log, 'logged');
  });
});
