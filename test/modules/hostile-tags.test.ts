// Fuzzer findings (hardening issue, item 4): values in a message that made a module's callback
// throw, so the scheduler's generic handler caught an exception instead of the module giving a
// result. Each message here goes through a real engine (rbl, dkim, arc on a loopback DNS
// server); every check must give its result and no callback may fail.
//   - rbl: a bad %-escape in a URL or mailto: address (`%ff`, `%E0%A4%A`) → URIError;
//   - dkim: a DKIM-Signature whose t= or x= is no time (`t=99999999999999999`) → RangeError
//     (mailauth's toISOString() of an invalid Date), and the same in an ARC set.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';
import { arcModule } from '../../src/modules/arc/index.js';
import { dkimModule } from '../../src/modules/dkim/index.js';
import { rblModule } from '../../src/modules/rbl/index.js';
import { hashKey } from '../../src/modules/rbl/hash.js';
import { createNetServices, type NetServices } from '../../src/net/index.js';
import type { ScanResult } from '../../src/plugin-api/index.js';
import { startDnsServer, type DnsTestServer } from '../helpers/dns-server.js';
import { baseConfig, recordingLogger, type LogLine } from '../engine/helpers.js';
import { meta, rsaKey, sign, symbolMap } from './auth-helpers.js';

const key = rsaKey();
let dns: DnsTestServer;
let net: NetServices;
let engine: Engine;
const lines: LogLine[] = [];

before(async () => {
  dns = await startDnsServer({
    zone: {
      [`${hashKey('spammer@bad-mail.com', 'sha1', 'hex')}.ebl.msbl.org`]: [{ type: 'A', data: '127.0.0.2' }],
      'spam-domain.com.multi.uribl.com': [{ type: 'A', data: '127.0.0.2' }],
      'sel._domainkey.example.org': [{ type: 'TXT', data: key.record }],
    },
  });
  net = createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 1 } });
  engine = await createEngine(baseConfig({ taskTimeout: 3 }), [dkimModule, arcModule, rblModule], { net, log: recordingLogger(lines) });
});

after(async () => {
  await net?.close();
  await dns?.close();
});

function msg(headers: string, body: string, id: string): Buffer {
  return Buffer.from(`${headers}From: a@example.org\r\nTo: b@example.net\r\nSubject: hostile values\r\nMessage-ID: <${id}@example.org>\r\n\r\n${body}\r\n`);
}

/** Scans `m` and fails if any callback threw (the engine logs those at error level). */
async function scan(m: Buffer): Promise<ScanResult> {
  const before = lines.length;
  const r = await engine.scan(m, meta({ ip: '192.0.2.99' }));
  const failed = lines.slice(before).filter((l) => l.level === 'error');
  assert.deepEqual(failed.map((l) => `${l.msg} ${JSON.stringify(l.extra?.error)}`), []);
  return r;
}

test('rbl: URLs and mailto: addresses with bad %-escapes are looked up, the listed ones still hit', async () => {
  const body = [
    '<a href="http://ex%E0%A4%A.com/">a</a> http://ex%E0%A4%A.com/ http://a%ff.example/ http://spam-domain.com/x%ff',
    'mailto:%ff@example.com mailto:%E0%A4%A@example.com mailto:spam%6Der@bad-mail.com',
  ].join('\r\n');
  const r = await scan(msg('Content-Type: text/html\r\n', body, 'rbl-escapes'));
  const s = symbolMap(r);
  // The valid escape was decoded (spam%6Der → spammer) and the address hashed and found listed.
  assert.deepEqual(s.MSBL_EBL, ['spammer@bad-mail.com:email']);
  assert.deepEqual(s.URIBL_BLACK, ['spam-domain.com:url']);
});

test('dkim: a t= or x= that is no time is a permanent failure of that signature, with the reason', async () => {
  const sig = (tags: string): string =>
    `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org; s=sel; ${tags}; h=from:subject; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n`;
  const cases: Array<[string, string]> = [
    ['t=99999999999999999', 'invalid timestamp t=99999999999999999'],
    ['x=1e400', 'invalid timestamp x=1e400'],
    ['t=-99999999999999999', 'invalid timestamp t=-99999999999999999'],
    // Fuzz finding mime #17401: a numeric string with U+FEFF after it, which Number() (and so
    // mailauth) reads as the number.
    [`t=9007199254740992${'\uFEFF'.repeat(40)}`, 'invalid timestamp t=9007199254740992'],
  ];
  for (const [i, [tags, reason]] of cases.entries()) {
    const r = await scan(msg(sig(tags), 'body', `dkim-t-${i}`));
    const s = symbolMap(r);
    assert.deepEqual(s.R_DKIM_PERMFAIL, ['example.org:s=sel', reason], tags);
    assert.deepEqual(s.DKIM_TRACE, ['example.org:~'], tags);
  }
});

test('dkim: a valid signature beside one with an unusable t= still verifies', async () => {
  const good = await sign(msg('', 'hello there, a signed body', 'dkim-mixed'), 'example.org', 'sel', key);
  const bad = 'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=other.example; s=x; t=99999999999999999; h=from; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n';
  const r = await scan(Buffer.concat([Buffer.from(bad), good]));
  const s = symbolMap(r);
  assert.deepEqual(s.R_DKIM_ALLOW, ['example.org:s=sel']);
  assert.deepEqual(s.R_DKIM_PERMFAIL, ['other.example:s=x', 'invalid timestamp t=99999999999999999']);
});

test('arc: a set whose t= is no time makes the chain invalid, with the reason', async () => {
  const arc =
    'ARC-Seal: i=1; a=rsa-sha256; t=99999999999999999; cv=none; d=example.net; s=arc; b=dGVzdA==\r\n' +
    'ARC-Message-Signature: i=1; a=rsa-sha256; c=relaxed/relaxed; d=example.net; s=arc; h=from:subject; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n' +
    'ARC-Authentication-Results: i=1; mx.example.net; spf=pass\r\n';
  const r = await scan(msg(arc, 'body', 'arc-t'));
  assert.deepEqual(symbolMap(r).ARC_INVALID, ['ARC-Seal i=1: invalid timestamp t=99999999999999999']);
});
