// The fuzzer's milter and exception machinery (bench/fuzz/milter-wire.ts, findings.ts), where a
// mistake would hide findings: the model of where the server's frame reader stops (it decides
// which closes need a log line), the session sender against the real milter front end (the
// canary's verdicts, who closed first, the peer the server's log line names), the key of an
// exception line as the real engine and logger write it, and the same bytes for input N.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canarySummary, CANARY_SESSION, frame, GTUBE_REJECT, postfixOptneg, readerEnd, sendMilter } from '../../bench/fuzz/milter-wire.js';
import { exceptionKey } from '../../bench/fuzz/findings.js';
import type { LogRecord } from '../../bench/fuzz/server.js';
import { loadSeeds } from '../../bench/fuzz/seeds.js';
import type { SurfaceContext } from '../../bench/fuzz/surface.js';
import { milterSurface } from '../../bench/fuzz/surfaces/milter.js';
import { spamcSurface } from '../../bench/fuzz/surfaces/spamc.js';
import { Rng } from '../../bench/fuzz/rng.js';
import { createLogger } from '../../src/observability/log.js';
import { defineModule } from '../../src/plugin-api/index.js';
import { startProxy, startScanner, type TestProxy, type TestScanner } from '../proxy/harness.js';
import { MILTER_FIXTURES } from '../proxy/milter-harness.js';
import { baseConfig, meta } from '../engine/helpers.js';
import { createEngine } from '../../src/engine/index.js';

const session = (client: string, name: string): Buffer => readFileSync(join(MILTER_FIXTURES, client, name, 'mta-to-rspamd.bin'));

describe('fuzz: where the server frame reader stops (readerEnd)', () => {
  it('reads the recorded sessions as the server does', () => {
    assert.equal(readerEnd(session('python-client', '01-accept-clean')), 'quit');
    assert.equal(readerEnd(session('postfix-3.7', '02-postfix-gtube-reject')), 'quit');
    assert.equal(readerEnd(session('python-client', '14-http-ping-on-milter-port')), 'http');
    // OPTNEG v2 only, EOB only: well framed, no QUIT: the server waits (or closes with a log line).
    assert.equal(readerEnd(session('python-client', '15-optneg-too-old')), 'more');
    assert.equal(readerEnd(session('python-client', '21-eob-without-data')), 'more');
  });
  it('stops at the frames the server refuses, and at a cut frame', () => {
    const ok = postfixOptneg();
    assert.equal(readerEnd(Buffer.concat([ok, frame('X', 'a'), frame('Q')])), 'bad-frame');
    assert.equal(readerEnd(Buffer.concat([ok, Buffer.from([0, 0, 0, 0, 0x51])])), 'bad-frame');
    const huge = frame('B', 'abc');
    huge.writeUInt32BE(100 * 1024 * 1024, 0);
    assert.equal(readerEnd(Buffer.concat([ok, huge, frame('Q')])), 'bad-frame');
    const long = frame('B', 'abc');
    long.writeUInt32BE(50, 0);
    assert.equal(readerEnd(Buffer.concat([ok, long, frame('Q')])), 'more', 'the QUIT is inside the declared frame');
  });
});

describe('fuzz: milter sessions against the real milter front end', () => {
  let scanner: TestScanner;
  let proxy: TestProxy;
  before(async () => {
    scanner = await startScanner();
    proxy = await startProxy({ milter: true, upstreams: { local: { hosts: scanner.address, default: true } } });
  });
  after(async () => {
    await proxy.close();
    await scanner.close();
  });

  it('the canary gets a verdict for the ham, the GTUBE reject, and the close after QUIT', async () => {
    const r = await sendMilter({ host: '127.0.0.1', port: proxy.port }, CANARY_SESSION);
    const summary = canarySummary(r);
    assert.match(summary, /^optneg; a {2}\| y 554 5\.7\.1 Gtube pattern\\0; closed after QUIT$/);
    assert.ok(summary.includes(GTUBE_REJECT));
    assert.equal(r.serverClosedFirst, true);
  });

  it('a session without QUIT is half-closed by the sender, then closed by the server', async () => {
    const r = await sendMilter({ host: '127.0.0.1', port: proxy.port }, Buffer.concat([postfixOptneg(), frame('H', 'x\0')]));
    assert.equal(r.outcome.kind, 'reply');
    assert.equal(r.frames[0]?.cmd, 'O');
    assert.equal(r.serverClosedFirst, false, 'we ended it');
    // A macro name without its NUL (well framed, no QUIT): the server closes on its own, and
    // says so naming our port.
    const bad = Buffer.concat([postfixOptneg(), frame('D', 'Cj')]);
    assert.equal(readerEnd(bad), 'more');
    const refused = await sendMilter({ host: '127.0.0.1', port: proxy.port }, bad);
    assert.equal(refused.serverClosedFirst, true);
    assert.equal(refused.frames[0]?.cmd, 'O');
    assert.equal(refused.frames.length, 1);
    const peer = `127.0.0.1:${refused.localPort}`;
    const line = proxy.logs.find((l) => l.peer === peer);
    assert.ok(line, `a log line names ${peer}`);
    assert.equal(line.level, 40);
    assert.match(line.msg, /milter protocol error/);
  });
});

describe('fuzz: exception keys', () => {
  it('key an engine exception line by message, module, symbol and error without numbers', async () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'warn', format: 'json', destination: { write: (l: string) => lines.push(l) } });
    const mod = defineModule({
      name: 'fragile',
      setup(ctx) {
        ctx.symbol({ name: 'FRAGILE_RULE', check: () => { throw new RangeError(`offset ${'abc'.length * 1000} out of range`); } });
      },
    });
    const engine = await createEngine(baseConfig(), [mod], { log });
    await engine.scan(Buffer.from('From: a@example.com\r\nSubject: x\r\n\r\nbody\r\n'), meta());
    const records = lines.map((l) => JSON.parse(l) as LogRecord).filter((r) => r.level >= 50);
    assert.equal(records.length, 1, lines.join(''));
    assert.equal(exceptionKey(records[0]!), 'symbol callback failed | fragile | FRAGILE_RULE | offset N out of range');
  });
});

describe('fuzz: milter and spamc inputs are the same bytes for the same seed', () => {
  it('generates input N identically twice', async () => {
    const seeds = await loadSeeds(process.cwd(), false);
    assert.ok(seeds.milterSessions.length >= 20, 'the recorded milter sessions are seeds');
    assert.ok(seeds.spamcRequests.length >= 10, 'the recorded spamc requests are seeds');
    const ctx: SurfaceContext = { seeds, mapIds: [], writableMapIds: [] };
    for (const make of [milterSurface, spamcSurface]) {
      const digest = (): string => {
        const s = make(ctx);
        const h = createHash('sha256');
        for (let i = 0; i < 200; i++) {
          const input = s.generate(Rng.forInput(7, s.name, i));
          h.update(`${input.port} ${input.note}\n`).update(input.bytes);
        }
        return h.digest('hex');
      };
      assert.equal(digest(), digest());
    }
  });
});
