// The milter front end in front of a real mailsift scan worker (shipped conf/ plus a
// milter_headers config with a footer): MTA frames → scan request over HTTP → the engine's
// real JSON reply (milter block, body block) → reply frames. The relay here is a bare HTTP
// POST to one host, standing in for the proxy's upstream library, which is tested on its own.

import { after, before, describe as suite, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { RelayRequest, RelayResponse, ScanRelay } from '../../src/proxy/relay-types.js';
import { startTestWorker, type TestWorker } from '../client/worker.js';
import { describe, frame, macros, optneg, startMilterServer, TestMilterClient, transaction, type Frame, type TestMilterServer } from './milter-harness.js';

const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

/** One POST to one scanner: the transport the relay contract hides, nothing more. */
function httpRelay(host: string, port: number): ScanRelay & { requests: RelayRequest[] } {
  const requests: RelayRequest[] = [];
  return {
    requests,
    relay(req: RelayRequest): Promise<RelayResponse> {
      requests.push(req);
      return new Promise((resolve, reject) => {
        const r = http.request({ host, port, method: req.method, path: req.path, headers: [...req.headers.flat(), 'Content-Length', String(req.body.length)] }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const headers: Array<[string, string]> = [];
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
              const k = res.rawHeaders[i]!;
              if (!['content-length', 'connection'].includes(k.toLowerCase())) headers.push([k, res.rawHeaders[i + 1]!]);
            }
            resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '', headers, body: Buffer.concat(chunks), upstream: `${host}:${port}` });
          });
        });
        r.on('error', reject);
        r.end(req.body);
      });
    },
  };
}

suite('milter in front of a real scan worker', () => {
  let worker: TestWorker;
  let relay: ReturnType<typeof httpRelay>;
  let server: TestMilterServer;

  before(async () => {
    worker = await startTestWorker({
      'milter_headers.yaml': 'use: [x-spamd-result, x-rspamd-action]\nskip_local: false\nskip_authenticated: false\nfooter:\n  text: "-- scanned by mailsift"\n',
    });
    relay = httpRelay(worker.host, worker.port);
    server = await startMilterServer(relay);
  });
  after(async () => {
    await server.close();
    await worker.close();
  });

  async function run(...messages: Buffer[][]): Promise<Frame[][]> {
    const c = await TestMilterClient.connect(server.port);
    c.send(optneg());
    assert.notEqual(await c.readFrame(), 'eof');
    c.send(macros('C', [['j', 'mx.test'], ['{daemon_name}', 'smtpd'], ['v', 'Postfix 3.7.11']]));
    const port = Buffer.alloc(2);
    port.writeUInt16BE(41234, 0);
    c.send(frame('C', Buffer.concat([Buffer.from('mail.example.org\x004'), port, Buffer.from('192.0.2.10\0')])));
    c.send(frame('H', 'mail.example.org\0'));
    const out: Frame[][] = [];
    for (const m of messages) {
      for (const f of m) c.send(f);
      out.push(await c.readVerdict());
    }
    c.send(frame('Q'));
    assert.ok(await c.waitEnd());
    return out;
  }

  it('GTUBE is rejected with the scanner smtp_message; a clean message on the same connection gets its headers and footer', async () => {
    const [gtube, ham] = await run(transaction('Test spam', `Body\r\n${GTUBE}\r\n`), transaction('Lunch', 'Shall we meet at noon?\r\n'));
    assert.equal(describe(gtube![gtube!.length - 1]!), 'y 554 5.7.1 Gtube pattern\\0');

    const final = ham![ham!.length - 1]!;
    assert.equal(final.cmd, 'a', `ham accepted: ${ham!.map(describe).join(' | ')}`);
    const added = ham!.filter((f) => f.cmd === 'h').map((f) => f.data.toString().split('\0')[0]);
    assert.ok(added.includes('X-Spamd-Result') && added.includes('X-Rspamd-Action'), `milter_headers frames: ${added.join(', ')}`);
    const body = ham!.filter((f) => f.cmd === 'b');
    assert.equal(body.length, 1, 'the footer rewrites the body');
    assert.match(body[0]!.data.toString(), /^Shall we meet at noon\?\r?\n[\s\S]*-- scanned by mailsift/);

    const req = relay.requests[relay.requests.length - 1]!;
    const h = new Map(req.headers.map(([k, v]) => [k, v]));
    assert.equal(h.get('IP'), '192.0.2.10:41234');
    assert.equal(h.get('User'), 'alice');
    assert.equal(h.get('Queue-ID'), 'QID1');
    assert.equal(h.get('MTA-Name'), 'smtpd');
  });

  it('an empty message (EOB right after the envelope) is scanned and answered', async () => {
    const [v] = await run([frame('M', '<alice@example.org>\0'), frame('R', '<bob@example.com>\0'), frame('E')]);
    const final = v![v!.length - 1]!;
    assert.ok('aty'.includes(final.cmd), `a verdict: ${v!.map(describe).join(' | ')}`);
    assert.equal(relay.requests[relay.requests.length - 1]!.body.length, 0);
  });
});
