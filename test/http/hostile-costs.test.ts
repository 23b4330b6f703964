// Issue 17, item 3: messages whose cost the sender controls by a count (signatures, ARC sets,
// Received hops, headers, parts, nesting, URLs, recipients, HTML tags, archive members,
// addresses, encoded words, parameters) are scanned by a real server in a child process. Each
// must (a) get a proper scan result, (b) cost the server a bounded amount of CPU, read from
// /proc (20 000 DKIM signatures took ~10-50 s before the caps), and (c) say which cap it hit:
// a MIME_LIMITS_EXCEEDED or DKIM/ARC option, or a log line. A /ping to the same server while it
// scans such a message must not wait for the whole scan.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { httpCall, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * CPU one scan may cost the server. The capped scans cost 0.05-0.7 s on a loaded 2-core machine
 * (the 38 MB ones most); the uncapped DKIM flood cost 10 s and more.
 */
const SCAN_CPU_BUDGET_MS = 2000;
/** Wall time for one reply: far above the task deadline (8 s) plus sending tens of MB on loopback. */
const REPLY_TIMEOUT_MS = 90_000;
/** Longest a /ping may wait behind a heavy scan. Before the caps it waited as long as the scan. */
const PING_BUDGET_MS = 5000;

const HEAD = 'From: a@example.com\r\nTo: b@example.org\r\nSubject: costs\r\nMessage-ID: <costs@example.com>\r\nDate: Thu, 1 Jan 2026 00:00:00 +0000\r\nMIME-Version: 1.0\r\n';

function dkimFlood(count: number): Buffer {
  const sig = 'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.com; s=sel; h=from:to:subject:date:message-id; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n';
  return Buffer.from(`${sig.repeat(count)}${HEAD}\r\nhello\r\n`);
}

function arcSets(count: number): Buffer {
  let s = '';
  for (let i = count; i >= 1; i--) {
    s += `ARC-Seal: i=${i}; a=rsa-sha256; cv=${i === 1 ? 'none' : 'pass'}; d=example.com; s=sel; b=dGVzdA==\r\n`;
    s += `ARC-Message-Signature: i=${i}; a=rsa-sha256; c=relaxed/relaxed; d=example.com; s=sel; h=from:to; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n`;
    s += `ARC-Authentication-Results: i=${i}; mx.example.com; spf=pass smtp.mailfrom=example.com\r\n`;
  }
  return Buffer.from(`${s}${HEAD}\r\nhello\r\n`);
}

function multipart(parts: string[]): Buffer {
  return Buffer.from(`${HEAD}Content-Type: multipart/mixed; boundary="b"\r\n\r\n${parts.map((p) => `--b\r\n${p}\r\n`).join('')}--b--\r\n`);
}

function nested(depth: number): Buffer {
  let s = HEAD;
  for (let i = 0; i < depth; i++) s += `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`;
  s += `${'Content-Type: message/rfc822\r\n\r\n'.repeat(depth)}Content-Type: text/plain\r\n\r\ndeep\r\n`;
  for (let i = depth - 1; i >= 0; i--) s += `--n${i}--\r\n`;
  return Buffer.from(s);
}

/** A ZIP whose central directory lists `count` entries (the end record says 65535, its maximum). */
function zipOf(count: number): Buffer {
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const name = Buffer.from(`f${i}.txt`);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(name.length, 26);
    local.push(lh, name);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(offset, 42);
    central.push(ch, name);
    offset += 30 + name.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(count, 0xffff), 8);
  end.writeUInt16LE(Math.min(count, 0xffff), 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, cd, end]);
}

/** A 7z file whose header has a kName candidate every 8 bytes, each claiming the rest of the header. */
function sevenZipCandidates(size: number): Buffer {
  const h = Buffer.alloc(size);
  h[0] = 0x01;
  for (let i = 1; i + 8 < size; i += 8) {
    const at = i + 5;
    let len = size - at;
    if ((len - 1) % 2 !== 0) len -= 1;
    h[i] = 0x11;
    h[i + 1] = 0xe0 | ((len >> 24) & 0x0f);
    h.writeUIntLE(len & 0xffffff, i + 2, 3);
    h[at] = 0;
  }
  const sig = Buffer.alloc(32);
  Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]).copy(sig);
  sig.writeBigUInt64LE(BigInt(size), 20);
  return Buffer.concat([sig, h]);
}

const attachment = (name: string, type: string, bytes: Buffer): string =>
  `Content-Type: ${type}; name="${name}"\r\nContent-Disposition: attachment; filename="${name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${bytes.toString('base64').replace(/.{76}/g, '$&\r\n')}`;

/** A /checkv3 request body: JSON metadata (here: the envelope) and the message. */
function v3Form(meta: unknown, message: Buffer): { body: Buffer; contentType: string } {
  const b = 'costs-form';
  const body = Buffer.concat([
    Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="metadata"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n`),
    Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="message"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    message,
    Buffer.from(`\r\n--${b}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${b}` };
}

interface ScanJson {
  action: string;
  score: number;
  symbols: Record<string, { options?: string[] }>;
}

/** The scan result of a v2 reply, or of a v3 reply's `result` part. */
function scanResult(body: Buffer): ScanJson {
  const text = body.toString('utf8');
  if (text.startsWith('{')) return JSON.parse(text) as ScanJson;
  const at = text.indexOf('name="result"');
  assert.ok(at >= 0, `no result part in ${text.slice(0, 200)}`);
  const start = text.indexOf('\r\n\r\n', at) + 4;
  return JSON.parse(text.slice(start, text.indexOf('\r\n--', start))) as ScanJson;
}

/** How an attack's cap shows in the reply or the log. */
type Reported =
  | { limits: string[] }
  | { symbol: string; option: RegExp }
  | { log: RegExp }
  | { none: string };

interface Attack {
  name: string;
  make(): { path: string; body: Buffer; headers?: Record<string, string> };
  reported: Reported;
}

const v2 = (body: Buffer) => ({ path: '/checkv2', body });

const ATTACKS: Attack[] = [
  { name: '20 000 DKIM-Signature headers', make: () => v2(dkimFlood(20_000)), reported: { symbol: 'DKIM_SIGS_SKIPPED', option: /signatures not checked \(max_sigs 5\)/ } },
  { name: '5 000 ARC sets', make: () => v2(arcSets(5000)), reported: { symbol: 'ARC_INVALID', option: /ARC sets, more than the 50 RFC 8617 allows/ } },
  {
    name: '50 000 Received headers',
    make: () => v2(Buffer.from(`${'Received: from mail.example.com (mail.example.com [192.0.2.1]) by mx.example.net with ESMTPS id abc for <b@example.org>; Thu, 1 Jan 2026 00:00:00 +0000\r\n'.repeat(50_000)}${HEAD}\r\nhello\r\n`)),
    reported: { limits: ['too_many_headers', 'too_many_received'] },
  },
  { name: '100 000 short headers', make: () => v2(Buffer.from(`${'X-A: b\r\n'.repeat(100_000)}${HEAD}\r\nhello\r\n`)), reported: { limits: ['too_many_headers'] } },
  {
    name: '10 000 MIME parts',
    make: () => v2(multipart(Array.from({ length: 10_000 }, (_, i) => `Content-Type: text/plain\r\n\r\npart ${i} http://example${i % 50}.com/`))),
    reported: { limits: ['too_many_parts'] },
  },
  { name: 'multiparts and message/rfc822 nested 2 000 deep', make: () => v2(nested(2000)), reported: { limits: ['too_deep'] } },
  {
    name: '100 000 URLs',
    make: () => v2(Buffer.from(`${HEAD}\r\n${Array.from({ length: 100_000 }, (_, i) => `http://host${i}.example${i % 100}.com/p${i}`).join(' ')}\r\n`)),
    reported: { limits: ['too_many_urls'] },
  },
  {
    name: '50 000 envelope recipients (/checkv3 metadata)',
    make: () => {
      const f = v3Form({ from: 'a@example.com', ip: '192.0.2.7', rcpt: Array.from({ length: 50_000 }, (_, i) => `u${i}@example${i % 50}.org`) }, Buffer.from(`${HEAD}\r\nhello\r\n`));
      return { path: '/checkv3', body: f.body, headers: { 'Content-Type': f.contentType } };
    },
    reported: { log: /recipients past the cap dropped/ },
  },
  {
    name: 'a 40 MB plain-text body (size, not count: the text scans and the Bayes tokeniser)',
    make: () => v2(Buffer.from(`${HEAD}Content-Type: text/plain; charset=utf-8\r\n\r\n${'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod http://x.example.com/\r\n'.repeat(450_000)}`)),
    reported: { limits: ['url_scan_truncated'] },
  },
  { name: '1 000 000 HTML tags', make: () => v2(Buffer.from(`${HEAD}Content-Type: text/html\r\n\r\n<html><body>${'<b>x</b>'.repeat(1_000_000)}</body></html>\r\n`)), reported: { limits: ['html_too_long'] } },
  {
    name: '40 HTML parts of 1 MB',
    make: () => v2(multipart(Array.from({ length: 40 }, () => `Content-Type: text/html\r\n\r\n${'<div><a href="http://x.example.com/">x</a></div>'.repeat(20_000)}`))),
    reported: { limits: ['html_too_long'] },
  },
  {
    name: 'a ZIP listing 100 000 members',
    make: () => v2(multipart(['Content-Type: text/plain\r\n\r\nsee the file', attachment('a.zip', 'application/zip', zipOf(100_000))])),
    reported: { log: /archive members past the caps not checked/ },
  },
  {
    name: 'a To: header with 100 000 addresses, and 128 To: headers of 4 000',
    make: () => {
      const one = Array.from({ length: 100_000 }, (_, i) => `u${i}@example${i % 50}.com`).join(', ');
      const wide = `To: ${Array.from({ length: 4000 }, (_, i) => `v${i}@example.net`).join(', ')}\r\n`.repeat(128);
      return v2(Buffer.from(`From: a@example.com\r\nTo: ${one}\r\n${wide}Subject: t\r\n\r\nhello\r\n`));
    },
    reported: { limits: ['too_many_addresses'] },
  },
  {
    name: '384 000 encoded words',
    make: () => v2(Buffer.from(`${HEAD}${`X-E: ${'=?koi8-r?B?YQ==?= =?windows-1251?Q?b?= '.repeat(1500)}\r\n`.repeat(128)}\r\nhello\r\n`)),
    reported: { limits: ['too_many_encoded_words'] },
  },
  {
    name: '200 parts of 4 000 Content-Type parameters',
    make: () => v2(multipart(Array.from({ length: 200 }, () => `Content-Type: text/plain; ${Array.from({ length: 4000 }, (_, i) => `p${i}*${i}=x`).join('; ')}\r\n\r\nhello`))),
    reported: { limits: ['too_many_params'] },
  },
  // Found while capping: regexps and loops that were quadratic in one value.
  { name: 'a Date header of 64 KiB of blanks', make: () => v2(Buffer.from(`From: a@example.com\r\nSubject: t\r\nDate: a${' '.repeat(65_000)}x\r\n\r\nhello\r\n`)), reported: { none: 'a fix, not a cap' } },
  {
    name: 'Received headers of 10 000 unclosed "for <" clauses',
    make: () => v2(Buffer.from(`${`Received: from a by b${' for <'.repeat(10_000)}\r\n`.repeat(16)}${HEAD}\r\nhello\r\n`)),
    reported: { none: 'a fix, not a cap' },
  },
  {
    name: '1 000 HTML parts whose heads are all <meta',
    make: () => v2(multipart(Array.from({ length: 1000 }, () => `Content-Type: text/html\r\n\r\n${'<meta '.repeat(400)}`))),
    reported: { none: 'a fix, not a cap' },
  },
  {
    name: 'HTML of 100 000 open elements then 150 000 end tags of none of them',
    make: () => v2(Buffer.from(`${HEAD}Content-Type: text/html\r\n\r\n${'<b>'.repeat(100_000)}${'</x>'.repeat(150_000)}\r\n`)),
    reported: { none: 'a fix, not a cap' },
  },
  { name: 'a 1 MB body of "data:"', make: () => v2(Buffer.from(`${HEAD}\r\n${'data:'.repeat(200_000)}\r\n`)), reported: { none: 'a fix, not a cap' } },
  { name: 'a 300 KB body of "aa." (Bayes words)', make: () => v2(Buffer.from(`${HEAD}\r\n${'aa.'.repeat(100_000)}\r\n`)), reported: { none: 'a fix, not a cap' } },
  {
    name: 'header values the rule regexps backtracked over',
    make: () => v2(Buffer.from([
      'From: a@example.com', 'To: b@example.org', 'Subject: t', 'Date: Thu, 1 Jan 2026 00:00:00 +0000',
      `Message-Id: ${'('.repeat(60_000)}`, `Reply-To: ${'"'.repeat(60_000)}`, `List-Unsubscribe: ${'<mailto:'.repeat(7000)}`,
      `Authentication-Results: mx.example.org; ${'dkim=a'.repeat(10_000)}`, `X-Mailer: ${'=?'.repeat(30_000)}`, 'List-Id: <x>', `List-Post: ${'<'.repeat(60_000)}`,
      'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"', '', '--b', 'Content-Type: application/octet-stream',
      `Content-Disposition: inline; ${'filename='.repeat(7000)}`, '', 'x', '--b', 'Content-Type: text/plain', '', 'see', '--b--', '',
    ].join('\r\n'))),
    reported: { none: 'a fix, not a cap' },
  },
  {
    name: 'a 7z header of 50 000 kName candidates',
    make: () => v2(multipart(['Content-Type: text/plain\r\n\r\nsee the file', attachment('a.7z', 'application/x-7z-compressed', sevenZipCandidates(400_000))])),
    reported: { none: 'a fix, not a cap' },
  },
];

describe('hostile message costs on a real server', () => {
  let srv: ServerProcess;
  before(async () => {
    srv = await startServerProcess();
    // Warm up: the first scan loads code and tables no hostile message should be charged for.
    const ham = readFileSync('/work/shared/fixtures/scan/messages/ham.eml');
    for (let i = 0; i < 3; i++) assert.equal((await httpCall(srv.normalPort, 'POST', '/checkv2', ham, {}, REPLY_TIMEOUT_MS)).status, 200);
  });
  after(() => srv.close());

  for (const attack of ATTACKS) {
    it(`${attack.name}: a scan result, bounded CPU, the cap reported`, { timeout: 180_000 }, async (t) => {
      const req = attack.make();
      const logBefore = srv.lines.length;
      const cpu0 = srv.cpuMs();
      const r = await httpCall(srv.normalPort, 'POST', req.path, req.body, req.headers ?? {}, REPLY_TIMEOUT_MS);
      const cpu = srv.cpuMs() - cpu0;
      t.diagnostic(`${cpu} ms of server CPU, ${r.ms.toFixed(0)} ms wall, ${(req.body.length / 1e6).toFixed(1)} MB`);
      assert.equal(r.status, 200, r.body.toString().slice(0, 300));
      const json = scanResult(r.body);
      assert.equal(typeof json.action, 'string');
      assert.equal(typeof json.score, 'number');
      assert.ok(Object.keys(json.symbols).length > 0);
      assert.ok(cpu < SCAN_CPU_BUDGET_MS, `${attack.name}: ${cpu} ms of server CPU (${(req.body.length / 1e6).toFixed(1)} MB)`);
      const rep = attack.reported;
      if ('limits' in rep) {
        const options = json.symbols['MIME_LIMITS_EXCEEDED']?.options ?? [];
        for (const l of rep.limits) assert.ok(options.includes(l), `MIME_LIMITS_EXCEEDED ${JSON.stringify(options)} lacks ${l}`);
      } else if ('symbol' in rep) {
        const options = json.symbols[rep.symbol]?.options ?? [];
        assert.ok(options.some((o) => rep.option.test(o)), `${rep.symbol}: ${JSON.stringify(options)}`);
      } else if ('log' in rep) {
        const lines = srv.lines.slice(logBefore);
        assert.ok(lines.some((l) => rep.log.test(l.msg)), `no log line like ${rep.log} in ${lines.map((l) => l.msg).join(' | ')}`);
      }
      assert.ok(srv.alive(), srv.output().slice(-2000));
    });
  }

  it('a /ping to the server scanning the DKIM flood does not wait for the scan', { timeout: 180_000 }, async (t) => {
    const flood = dkimFlood(20_000);
    let scanning = true;
    const scan = httpCall(srv.normalPort, 'POST', '/checkv2', flood, {}, REPLY_TIMEOUT_MS).finally(() => {
      scanning = false;
    });
    const waits: number[] = [];
    while (scanning) {
      const p = await httpCall(srv.normalPort, 'GET', '/ping', undefined, {}, REPLY_TIMEOUT_MS);
      assert.equal(p.body.toString().trim(), 'pong');
      waits.push(p.ms);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal((await scan).status, 200);
    assert.ok(waits.length > 0);
    t.diagnostic(`${waits.length} pings, longest ${Math.max(...waits).toFixed(0)} ms`);
    assert.ok(Math.max(...waits) < PING_BUDGET_MS, `pings waited ${waits.map((w) => w.toFixed(0)).join(', ')} ms`);
  });
});
