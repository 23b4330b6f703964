// DNS faults on the real path: a worker whose nameserver cannot be reached (connect fails), is
// silent, or answers with errors or garbage keeps answering every scan, within the task
// deadline, with the temporary-failure symbols of the lookups that needed DNS (R_SPF_DNSFAIL,
// R_DKIM_TEMPFAIL, DMARC_DNSFAIL, <RBL>_FAIL) and with the verdict of everything else (GTUBE
// still rejects). Issue 17 item 2: a failed UDP connect used to crash the worker on every scan.

import { after, before, describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestWorker, type TestWorker } from '../client/worker.js';
import { startFaultyDns, type DnsFault, type FaultyDnsServer } from '../helpers/faulty-dns.js';
import { canUseNetns, MESSAGES, post, postInNamespace, serve, sh, workerExits, type ScanReply } from './helpers.js';

/** DKIM-signed, From cacophony.za.org: SPF, DKIM, DMARC and the DNS lists all need lookups. */
const SIGNED = join(MESSAGES, 'pass_none.eml');
const GTUBE = join(MESSAGES, 'gtube.eml');
const ENVELOPE = { IP: '203.0.113.9', From: 'foo@cacophony.za.org', Helo: 'mail.cacophony.za.org', Rcpt: 'foo@rspamd.tk' };
/** The shipped task deadline. */
const TASK_TIMEOUT_S = 8;
/** Symbols every scan of SIGNED must carry when DNS fails, whatever the failure. */
const DNS_FAIL_SYMBOLS = ['R_SPF_DNSFAIL', 'R_DKIM_TEMPFAIL', 'DMARC_DNSFAIL', 'SPAMHAUS_FAIL', 'MAILSPIKE_FAIL'];

function assertDnsFailed(r: ScanReply, what: string): void {
  assert.equal(r.status, 200, `${what}: ${r.body}`);
  for (const s of DNS_FAIL_SYMBOLS) assert.ok(s in r.symbols, `${what}: ${s} missing from ${Object.keys(r.symbols).join(' ')}`);
  // The DNS lists failed; none of them may read as "listed" or be silently dropped.
  assert.ok(!Object.keys(r.symbols).some((s) => /^(RBL_SPAMHAUS|RCVD_IN_DNSWL|RBL_MAILSPIKE)_(?!.*FAIL)/.test(s)), what);
  // Failed lookups are no evidence against the host: hfilter does not call it unresolvable.
  assert.ok(!Object.keys(r.symbols).some((s) => /^HFILTER_.*NORES/.test(s)), `${what}: ${Object.keys(r.symbols).join(' ')}`);
  assert.ok(r.action !== undefined, what);
}

describe('DNS faults, in-process worker', () => {
  let dns: FaultyDnsServer;
  let worker: TestWorker;
  let unreachable: TestWorker;
  let signed: Buffer;
  let gtube: Buffer;

  before(async () => {
    signed = await readFile(SIGNED);
    gtube = await readFile(GTUBE);
    dns = await startFaultyDns('silent');
    // Short tries so time-outs cost the scan about a second, well inside its 8 s deadline.
    worker = await startTestWorker({ 'mailsift.yaml': `dns: { nameserver: ["${dns.address}"], timeout: 0.3, retransmits: 1 }\n` });
    // Connecting a UDP socket to the broadcast address fails (EACCES): a connect error without a namespace.
    unreachable = await startTestWorker({ 'mailsift.yaml': 'dns: { nameserver: ["255.255.255.255"], timeout: 0.3, retransmits: 1 }\n' });
  });

  after(async () => {
    await worker?.close();
    await unreachable?.close();
    await dns?.close();
  });

  test('nameserver that cannot be connected to: scans answer with the DNS failure symbols, GTUBE still rejects', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, () => post(unreachable.port, '/checkv2', signed, ENVELOPE)));
    for (const r of replies) assertDnsFailed(r, 'connect error');
    assert.match(replies[0]!.symbols['SPAMHAUS_FAIL']!.options?.[0] ?? '', /network error/);
    const g = await post(unreachable.port, '/checkv2', gtube, ENVELOPE);
    assert.equal(g.status, 200);
    assert.equal(g.action, 'reject', g.body);
  });

  const faults: DnsFault[] = ['silent', 'servfail', 'refused', 'yxdomain', 'garbage', 'truncated-tcp-reset', 'truncated-tcp-garbage', 'truncated-tcp-silent'];
  for (const fault of faults) {
    test(`nameserver fault "${fault}": scans answer within the deadline with the DNS failure symbols`, async () => {
      dns.mode = fault;
      const before = dns.count.udp;
      const replies = await Promise.all(Array.from({ length: 4 }, () => post(worker.port, '/checkv2', signed, ENVELOPE)));
      for (const r of replies) {
        assertDnsFailed(r, fault);
        assert.ok(r.ms < TASK_TIMEOUT_S * 1000 + 5000, `${fault}: answered in ${r.ms.toFixed(0)} ms`);
      }
      assert.ok(dns.count.udp > before, 'the lookups reached the faulty server');
      const g = await post(worker.port, '/checkv2', gtube, ENVELOPE);
      assert.equal(g.action, 'reject', g.body);
    });
  }
});

describe('DNS unreachable on the real path: `mailsift serve` in a network namespace without a route', { skip: canUseNetns() ? false : 'needs root and `ip netns`' }, () => {
  const ns = `msnet-dns-${process.pid}`;
  let dir: string;
  let srv: ReturnType<typeof serve> | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-netns-'));
    sh('ip', ['netns', 'add', ns]);
    // Only loopback, up: 192.0.2.53 has no route, so the resolver's connect fails with ENETUNREACH.
    sh('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    await writeFile(join(dir, 'mailsift.yaml'), [
      'workers:',
      '  normal: { bind: "127.0.0.1:11333", count: 2 }',
      '  controller: { bind: "127.0.0.1:11334" }',
      `data_dir: ${join(dir, 'data')}`,
      'dns: { nameserver: ["192.0.2.53"], timeout: 1, retransmits: 2 }',
      '',
    ].join('\n'));
  });

  after(async () => {
    await srv?.stop();
    // Delete the namespace whatever happened above (quietly: it may not have been made).
    spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    await rm(dir, { recursive: true, force: true });
  });

  test('every scan answers with the DNS failure symbols and no worker ever exits', async () => {
    srv = serve(dir, [], ['ip', 'netns', 'exec', ns]);
    await srv.waitFor((l) => /^started 2 normal worker/.test(l.msg), 'the workers to start', 120_000);
    const listening = srv.lines.filter((l) => l.worker === 'normal' && /^listening on /.test(l.msg)).map((l) => l.pid);
    assert.equal(listening.length, 2);

    // Before the fix the first lookup of each scan killed its worker (ERR_SOCKET_BAD_PORT).
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(Array.from({ length: 6 }, () => postInNamespace(ns, 11333, '/checkv2', SIGNED, ENVELOPE)));
      for (const r of replies) assertDnsFailed(r, `round ${round}`);
      assert.match(replies[0]!.symbols['MAILSPIKE_FAIL']!.options?.[0] ?? '', /network error/);
    }
    const g = await postInNamespace(ns, 11333, '/checkv2', GTUBE, ENVELOPE);
    assert.equal(g.action, 'reject', g.body);

    assert.deepEqual(workerExits(srv.lines), [], srv.output());
    const now = srv.lines.filter((l) => l.worker === 'normal' && /^listening on /.test(l.msg)).map((l) => l.pid);
    assert.deepEqual(now, listening, 'the same two worker processes served every scan');
    // The outage is logged once per worker, not once per lookup of every scan.
    const rblLines = srv.lines.filter((l) => l.msg.startsWith('rbl: DNS lookups failing'));
    assert.ok(rblLines.length >= 1 && rblLines.length <= 2, `${rblLines.length} rbl outage lines for 19 scans`);
    assert.ok(!srv.lines.some((l) => l.level >= 50), `no error logged:\n${srv.lines.filter((l) => l.level >= 50).map((l) => JSON.stringify(l)).join('\n')}`);
  });
});
