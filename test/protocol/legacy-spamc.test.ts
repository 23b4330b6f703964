// Conformance of the spamc/RSPAMC text protocols on the normal worker, over real sockets: every
// recorded request of shared/fixtures/spamc/direct (Debian spamc 4.0.1 and hand-written RSPAMC
// lines against Rspamd 3.4) is replayed byte for byte and our reply compared with the recorded
// one. Values that depend on the recording machine are compared by shape (see ENVIRONMENT); each
// deliberate difference of the default `legacy_compat: spamd` is stated where it is asserted, and
// a worker with `legacy_compat: rspamd` must give 3.4's replies (or its silent close) exactly.
// The client legs of via-http-proxy 07–09 are the same requests: replayed here against the worker
// directly (the proxy leg is the proxy's conformance test). Then bad input: malformed lines and
// headers, a lying Content-length, a body that never comes, a bomb: an error line or a close, in
// time, never a hang, and the other sessions unaffected.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { loadConfig } from '../../src/config/load.js';
import { isConfigError } from '../../src/config/errors.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { exchange, parseReply, startRealWorker, type CapturingLog } from './harness.js';

const SPAMC = new URL('../../../shared/fixtures/spamc/', import.meta.url).pathname;
const DIRECT = join(SPAMC, 'direct');

const fixture = (dir: string, file: string): Buffer => readFileSync(join(DIRECT, dir, file));

/**
 * Symbols of the recordings that depend on the recording machine, not on the protocol:
 * PX_ENVELOPE is a test rule of the recording config (shared/fixtures/milter/setup/px_rules.lua);
 * DMARC_DNSFAIL / DMARC_NA are the DNS answer (the recorder's resolver timed out, the test runner's
 * stub answers NXDOMAIN, so the sender's domain has no A or MX: HFILTER_FROMHOST_NORES_A_OR_MX);
 * DATE_IN_PAST depends on today's date (the messages are dated the day they were recorded).
 */
const ENVIRONMENT = new Set(['PX_ENVELOPE', 'DMARC_DNSFAIL', 'DMARC_NA', 'HFILTER_FROMHOST_NORES_A_OR_MX', 'DATE_IN_PAST']);
const withoutEnvironment = (names: string[]): string[] => names.filter((n) => !ENVIRONMENT.has(n)).sort();

interface SpamcReply {
  flag: string;
  score: string;
  required: string;
  part: Buffer;
}

function parseSpamc(data: Buffer): SpamcReply {
  const text = data.toString('latin1');
  const m = /^SPAMD\/1\.1 0 EX_OK\r\nContent-length: (\d+)\r\nSpam: (True|False) ; (-?\d+\.\d\d) \/ (-?\d+\.\d\d)\r\n\r\n/.exec(text);
  assert.ok(m, `not a SPAMC reply: ${JSON.stringify(text.slice(0, 200))}`);
  const part = data.subarray(m[0].length);
  assert.equal(part.length, Number(m[1]), 'spamc refuses a reply whose Content-length is not what follows');
  return { flag: m[2]!, score: m[3]!, required: m[4]!, part };
}

const symbolsOf = (part: Buffer): string[] => part.toString('latin1').replace(/\r\n$/, '').split(',').filter((s) => s.length > 0);

function parseRspamc(data: Buffer): { lines: string[]; flag: string; score: string; required: string; symbols: string[] } {
  const lines = data.toString('latin1').split('\r\n');
  assert.equal(lines[0], 'RSPAMD/1.3 0 EX_OK');
  assert.equal(lines.at(-1), '', 'every line ends with CRLF');
  const m = /^Metric: default; (True|False); (-?\d+\.\d\d) \/ (-?\d+\.\d\d) \/ 0\.0$/.exec(lines[1]!);
  assert.ok(m, lines[1]);
  const symbols = lines.filter((l) => l.startsWith('Symbol: ')).map((l) => /^Symbol: ([^(]+)\(-?\d+\.\d\d\)$/.exec(l)![1]!);
  return { lines: lines.slice(0, -1), flag: m[1]!, score: m[2]!, required: m[3]!, symbols };
}

describe('spamc fixtures replayed against the worker (legacy_compat: spamd, the default)', () => {
  let port = 0;
  let log: CapturingLog;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker();
    port = w.port;
    log = w.log;
    close = w.close;
  });
  after(() => close());
  const replay = async (dir: string): Promise<Buffer> => {
    const { data, closedByServer } = await exchange(port, fixture(dir, 'client-request.bin'));
    assert.ok(closedByServer, 'the server closes after a legacy reply');
    return data;
  };

  it('01-check-clean: the recorded layout, ham stays False, the same symbols but for the environment', async () => {
    const recorded = parseSpamc(fixture('01-check-clean', 'server-response.bin'));
    const ours = parseSpamc(await replay('01-check-clean'));
    assert.equal(ours.flag, 'False');
    assert.equal(ours.required, recorded.required);
    assert.deepEqual(withoutEnvironment(symbolsOf(ours.part)), withoutEnvironment(symbolsOf(recorded.part)));
    assert.ok(Number(ours.score) < Number(ours.required));
  });

  for (const dir of ['02-check-gtube', '03-symbols-gtube']) {
    it(`${dir}: the recorded bytes, but for Spam: True (3.4 says False on a reject, so spamc -c exited 0)`, async () => {
      const recorded = fixture(dir, 'server-response.bin').toString('latin1');
      assert.match(recorded, /\r\nSpam: False ; 15\.00 \/ 15\.00\r\n/);
      assert.equal((await replay(dir)).toString('latin1'), recorded.replace('Spam: False', 'Spam: True'));
    });
  }

  it('04-report-gtube (REPORT_IFSPAM): 3.4 closed without a reply; we send the report (spam)', async () => {
    assert.equal(fixture('04-report-gtube', 'server-response.bin').length, 0);
    const ours = parseSpamc(await replay('04-report-gtube'));
    assert.equal(ours.flag, 'True');
    assert.match(ours.part.toString(), /^Content analysis details:   \(15\.00 points, 15\.00 required\)\nAction: reject\nMessage: Gtube pattern\n\n pts rule name/);
    assert.match(ours.part.toString(), /\n 0\.0 GTUBE {18}/);
  });

  it('11-report-full (REPORT): 3.4 closed; we send the report', async () => {
    assert.equal(fixture('11-report-full', 'server-response.bin').length, 0);
    assert.match(parseSpamc(await replay('11-report-full')).part.toString(), /^Content analysis details: /);
  });

  it('05-process-default (PROCESS): 3.4 closed (spamc printed the message unchanged); we return it with the X-Spam headers', async () => {
    assert.equal(fixture('05-process-default', 'server-response.bin').length, 0);
    const request = fixture('05-process-default', 'client-request.bin');
    const message = request.subarray(request.indexOf('\r\n\r\n') + 4);
    const ours = parseSpamc(await replay('05-process-default'));
    assert.equal(ours.flag, 'False');
    const text = ours.part.toString('utf8');
    const sep = text.indexOf('\r\n\r\n');
    const original = message.toString('utf8');
    assert.equal(text.slice(sep), original.slice(original.indexOf('\r\n\r\n')), 'the body is unchanged');
    assert.ok(text.startsWith(original.slice(0, original.indexOf('\r\n\r\n') + 2)), 'the original headers come first, unchanged');
    assert.match(text.slice(0, sep), /\r\nX-Spam-Status: No, score=\d+\.\d\d required=15\.00 tests=[A-Z_,\r\n\t]+\s+action=no_action$/);
    assert.ok(!text.includes('X-Spam-Flag'), 'no flag on ham');
  });

  it('08-headers (HEADERS): 3.4 closed; we return the header part with its blank line', async () => {
    assert.equal(fixture('08-headers', 'server-response.bin').length, 0);
    const part = parseSpamc(await replay('08-headers')).part.toString('utf8');
    assert.ok(part.endsWith('\r\n\r\n'));
    assert.equal(part.indexOf('\r\n\r\n'), part.length - 4, 'no body');
    assert.match(part, /^From: Alice <sender@example\.org>\r\n[\s\S]*X-Spam-Status: No, /);
  });

  it('06-ping (PING): 3.4 closed (spamc -K exited 74); we answer PONG as spamd', async () => {
    assert.equal(fixture('06-ping', 'server-response.bin').length, 0);
    assert.equal((await replay('06-ping')).toString('latin1'), 'SPAMD/1.5 0 PONG\r\n');
  });

  it('07-check-user: `User:` is SpamAssassin\'s local account, ignored as 3.4 ignores it: the reply of 01', async () => {
    const a = await replay('01-check-clean');
    const b = await replay('07-check-user');
    assert.deepEqual(parseSpamc(b), parseSpamc(a));
  });

  it('09-rspamc-legacy-symbols-direct: RSPAMC lines, envelope From honoured, same symbols but for the environment', async () => {
    const recorded = parseRspamc(fixture('09-rspamc-legacy-symbols-direct', 'server-response.bin'));
    const ours = parseRspamc(await replay('09-rspamc-legacy-symbols-direct'));
    assert.equal(ours.required, recorded.required);
    // Ham either way; which ham action depends on the environment's score (greylist at 4).
    assert.match(ours.lines[2]!, /^Action: (no action|greylist)$/);
    assert.equal(ours.flag, 'False');
    assert.ok(ours.symbols.includes('FROM_EQ_ENVFROM'), 'the From: request header is the envelope sender in RSPAMC too');
    assert.deepEqual(withoutEnvironment(ours.symbols), withoutEnvironment(recorded.symbols));
    assert.equal(ours.lines.at(-1), recorded.lines.at(-1), 'Message-ID line');
    assert.equal(ours.lines.length, 3 + ours.symbols.length + 1);
  });

  it('10-rspamc-legacy-check-gtube-direct: the recorded bytes, but for True', async () => {
    const recorded = fixture('10-rspamc-legacy-check-gtube-direct', 'server-response.bin').toString('latin1');
    assert.equal((await replay('10-rspamc-legacy-check-gtube-direct')).toString('latin1'), recorded.replace('Metric: default; False;', 'Metric: default; True;'));
  });

  it('via-http-proxy 07–09, client legs sent to the worker directly: the direct replies (User stays ignored)', async () => {
    const via = (dir: string): Buffer => readFileSync(join(SPAMC, 'via-http-proxy', dir, 'client-request.bin'));
    // Through Rspamd's proxy the upstream takes `User: bob` for an SMTP AUTH user (score −0.10
    // instead of 2.40); a direct connection ignores it, and so do we (the proxy's legacyRelayHeaders
    // drops it in spamd mode so both paths agree).
    const r07 = parseSpamc((await exchange(port, via('07-spamc-check-via-proxy'))).data);
    assert.deepEqual(r07, parseSpamc(await replay('07-check-user')));
    assert.notEqual(r07.score, parseSpamc(readFileSync(join(SPAMC, 'via-http-proxy', '07-spamc-check-via-proxy', 'server-response.bin'))).score);
    assert.deepEqual((await exchange(port, via('08-spamc-symbols-gtube-via-proxy'))).data, await replay('03-symbols-gtube'));
    assert.deepEqual(parseRspamc((await exchange(port, via('09-rspamc-legacy-symbols-via-proxy'))).data), parseRspamc(await replay('09-rspamc-legacy-symbols-direct')));
  });

  it('nothing was logged as an error', () => {
    assert.deepEqual(log.lines.filter((l) => l.level === 'error'), []);
  });
});

describe('spamc fixtures against legacy_compat: rspamd (Rspamd 3.4 exactly)', () => {
  let port = 0;
  let log: CapturingLog;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker({ legacyCompat: 'rspamd' });
    port = w.port;
    log = w.log;
    close = w.close;
  });
  after(() => close());

  for (const dir of ['02-check-gtube', '03-symbols-gtube', '10-rspamc-legacy-check-gtube-direct']) {
    it(`${dir}: the recorded bytes`, async () => {
      assert.deepEqual((await exchange(port, fixture(dir, 'client-request.bin'))).data, fixture(dir, 'server-response.bin'));
    });
  }

  for (const dir of ['04-report-gtube', '05-process-default', '06-ping', '08-headers', '11-report-full']) {
    it(`${dir}: closed without a reply, as recorded, and the log says why`, async () => {
      const { data, closedByServer } = await exchange(port, fixture(dir, 'client-request.bin'));
      assert.equal(data.length, 0);
      assert.ok(closedByServer);
      const verb = fixture(dir, 'client-request.bin').toString('latin1').split(' ')[0];
      assert.ok(log.lines.some((l) => l.msg === 'legacy request closed without a reply' && l.extra?.command === verb));
    });
  }

  it('01 and 09: ham with False, as recorded', async () => {
    assert.equal(parseSpamc((await exchange(port, fixture('01-check-clean', 'client-request.bin'))).data).flag, 'False');
    assert.equal(parseRspamc((await exchange(port, fixture('09-rspamc-legacy-symbols-direct', 'client-request.bin'))).data).flag, 'False');
  });
});

describe('workers.normal.legacy_compat', () => {
  it('defaults to spamd, takes rspamd, refuses anything else with a suggestion', async () => {
    const ok = await makeConfDir({ 'mailsift.yaml': 'workers:\n  normal:\n    legacy_compat: rspamd\n' });
    const bad = await makeConfDir({ 'mailsift.yaml': 'workers:\n  normal:\n    legacy_compat: spamassassin\n' });
    const none = await makeConfDir({ 'mailsift.yaml': 'workers:\n  normal:\n    count: 1\n' });
    try {
      assert.equal((await loadConfig(ok)).workers.normal.legacyCompat, 'rspamd');
      assert.equal((await loadConfig(none)).workers.normal.legacyCompat, 'spamd');
      await assert.rejects(loadConfig(bad), (err: unknown) => {
        assert.ok(isConfigError(err));
        const issue = err.issues.find((i) => i.path === 'workers.normal.legacy_compat');
        assert.ok(issue, JSON.stringify(err.issues));
        assert.match(issue.expected, /spamd/);
        return true;
      });
    } finally {
      for (const d of [ok, bad, none]) await removeConfDir(d);
    }
  });
  it('the shipped conf/mailsift.yaml sets and documents it', async () => {
    const text = readFileSync('conf/mailsift.yaml', 'utf8');
    assert.match(text, /\n {4}legacy_compat: spamd\n/);
    assert.equal((await loadConfig('conf')).workers.normal.legacyCompat, 'spamd');
  });
});

/** Opens a connection, writes `bytes`, keeps it open (no half-close), returns what arrives and when it closed. */
function openSession(port: number, bytes: Buffer, limitMs: number): Promise<{ data: Buffer; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ data: Buffer.concat(parts), closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), limitMs);
    sock.on('data', (d: Buffer) => parts.push(d));
    sock.on('end', () => finish(true));
    sock.on('close', () => finish(true));
    sock.on('error', () => finish(true));
    sock.on('connect', () => sock.write(bytes));
  });
}

describe('bad legacy input: an error line in the dialect, in time, and the worker carries on', () => {
  /** Short so the stalled-session cases finish quickly; the assertions allow any slowness below LIMIT. */
  const REQUEST_TIMEOUT_MS = 1500;
  const LIMIT_MS = 30_000;
  const MAX_MESSAGE = 64 * 1024;
  let port = 0;
  let log: CapturingLog;
  let close: () => Promise<void>;
  before(async () => {
    const w = await startRealWorker({ maxMessage: MAX_MESSAGE, transport: { requestTimeoutMs: REQUEST_TIMEOUT_MS } });
    port = w.port;
    log = w.log;
    close = w.close;
  });
  after(() => close());

  const MSG = 'From: a@example.org\r\nTo: b@example.net\r\nSubject: t\r\n\r\nbody\r\n';
  const cases: Array<[string, string | Buffer, RegExp]> = [
    ['a header line without a colon', `CHECK SPAMC/1.5\r\nContent-length: ${MSG.length}\r\nBad header\r\n\r\n${MSG}`, /^SPAMD\/1\.0 76 Malformed header line\r\n$/],
    ['a header name with a space', `SYMBOLS RSPAMC/1.3\r\nBad name: x\r\n\r\n`, /^RSPAMD\/1\.3 76 Malformed header name\r\n$/],
    ['an unknown verb', 'FOO SPAMC/1.5\r\n\r\n', /^SPAMD\/1\.0 76 Unknown spamc command: FOO\r\n$/],
    ['a Content-length that is not a number', 'CHECK SPAMC/1.5\r\nContent-length: 12x\r\n\r\n', /^SPAMD\/1\.0 76 Invalid Content-Length\r\n$/],
    ['two Content-lengths that disagree', 'CHECK SPAMC/1.5\r\nContent-length: 5\r\nContent-length: 6\r\n\r\nhello!', /^SPAMD\/1\.0 76 Conflicting Content-Length values\r\n$/],
    ['a Content-length above max_message', `CHECK SPAMC/1.5\r\nContent-length: ${MAX_MESSAGE + 1}\r\n\r\n`, /^SPAMD\/1\.0 65 Request entity too large\r\n$/],
    ['a Content-length longer than the body (then EOF)', `CHECK RSPAMC/1.3\r\nContent-length: ${MSG.length + 100}\r\n\r\n${MSG}`, /^RSPAMD\/1\.3 76 Request body truncated\r\n$/],
    ['a header block that never ends (then EOF)', 'PROCESS SPAMC/1.5\r\nContent-length: 10\r\nUser: x', /^SPAMD\/1\.0 76 Incomplete request header\r\n$/],
    ['a zlib bomb', Buffer.concat([Buffer.from(`CHECK SPAMC/1.5\r\nCompress: zlib\r\nContent-length: ${deflateSync(Buffer.alloc(MAX_MESSAGE * 4)).length}\r\n\r\n`), deflateSync(Buffer.alloc(MAX_MESSAGE * 4))]), /^SPAMD\/1\.0 76 Decompression error: message larger than max_message\r\n$/],
    ['Compress with an unknown method', `CHECK SPAMC/1.5\r\nCompress: lz4\r\nContent-length: ${MSG.length}\r\n\r\n${MSG}`, /^SPAMD\/1\.0 76 Invalid compression method\r\n$/],
    ['TELL', `TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nContent-length: ${MSG.length}\r\n\r\n${MSG}`, /^SPAMD\/1\.0 69 TELL commands are not enabled: learn through the controller/],
    ['PROCESS in the RSPAMC dialect', `PROCESS RSPAMC/1.3\r\nContent-length: ${MSG.length}\r\n\r\n${MSG}`, /^RSPAMD\/1\.3 76 PROCESS is a spamc command/],
  ];
  for (const [what, bytes, want] of cases) {
    it(what, async () => {
      const { data, closedByServer } = await exchange(port, Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes), { timeoutMs: LIMIT_MS });
      assert.ok(closedByServer, 'the server closes the session');
      assert.match(data.toString('latin1'), want);
    });
  }

  it('SKIP: closed without a reply, as spamd does', async () => {
    const { data, closedByServer } = await exchange(port, Buffer.from('SKIP SPAMC/1.5\r\n\r\n'), { timeoutMs: LIMIT_MS });
    assert.equal(data.length, 0);
    assert.ok(closedByServer);
  });

  it('a Content-length shorter than the body: only the declared bytes are the message, the rest is ignored', async () => {
    const gtube = fixture('02-check-gtube', 'client-request.bin');
    const message = gtube.subarray(gtube.indexOf('\r\n\r\n') + 4);
    const headersOnly = message.subarray(0, message.indexOf('\r\n\r\n') + 4);
    const req = Buffer.concat([Buffer.from(`SYMBOLS SPAMC/1.5\r\nContent-length: ${headersOnly.length}\r\n\r\n`), message]);
    const r = parseSpamc((await exchange(port, req, { timeoutMs: LIMIT_MS })).data);
    assert.ok(!symbolsOf(r.part).includes('GTUBE'), 'the GTUBE line lay past the declared length');
    assert.equal(r.flag, 'False');
  });

  it('a body that never comes, a head that never ends: the request time-out answers with EX_TIMEOUT and closes', async () => {
    const [noBody, noHead] = await Promise.all([
      openSession(port, Buffer.from(`CHECK SPAMC/1.5\r\nContent-length: ${MSG.length}\r\n\r\n`), LIMIT_MS),
      openSession(port, Buffer.from('SYMBOLS RSPAMC/1.3\r\nContent-le'), LIMIT_MS),
    ]);
    assert.equal(noBody.data.toString('latin1'), 'SPAMD/1.0 79 Request timed out\r\n');
    assert.equal(noHead.data.toString('latin1'), 'RSPAMD/1.3 79 Request timed out\r\n');
    for (const s of [noBody, noHead]) {
      assert.ok(s.closed);
      assert.ok(s.ms >= REQUEST_TIMEOUT_MS - 100 && s.ms < LIMIT_MS, `${s.ms} ms`);
    }
  });

  it('a stalled session does not hold up another one', async () => {
    const stalled = openSession(port, Buffer.from(`PROCESS SPAMC/1.5\r\nContent-length: ${MSG.length}\r\n\r\nFrom:`), LIMIT_MS);
    const r = parseSpamc((await exchange(port, fixture('03-symbols-gtube', 'client-request.bin'), { timeoutMs: LIMIT_MS })).data);
    assert.equal(r.flag, 'True');
    assert.deepEqual(symbolsOf(r.part), ['GTUBE']);
    assert.match((await stalled).data.toString('latin1'), /^SPAMD\/1\.0 79 /);
  });

  it('the worker still answers, logged every refusal, and logged no error', async () => {
    const { data } = await exchange(port, Buffer.from('GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n'));
    assert.equal(parseReply(data).body.toString(), 'pong\r\n');
    assert.equal((await exchange(port, Buffer.from('PING SPAMC/1.5\r\n\r\n'))).data.toString(), 'SPAMD/1.5 0 PONG\r\n');
    assert.ok(log.lines.filter((l) => l.msg === 'legacy request refused').length >= cases.length);
    assert.deepEqual(log.lines.filter((l) => l.level === 'error'), []);
  });
});
