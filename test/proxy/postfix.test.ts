// A real Postfix (Debian's 3.7) in front of `mailsift serve` (issue 18, "Tests that must exist"):
// a private Postfix instance (test/helpers/postfix.ts) whose smtpd_milters point at the proxy
// worker in milter mode (TCP, and a second smtpd on the proxy's unix socket), the proxy relaying
// to the normal worker of the same server, every accepted message delivered over LMTP to a sink
// this test reads. Over SMTP: GTUBE → 554; ham → delivered with the milter_headers fields; the
// rewrite-subject test pattern → delivered with the new Subject; a sender a multimap rule
// soft-rejects → 451; mail from the signing domain → delivered with a DKIM-Signature that
// mailauth verifies against the key served by a test DNS server; 20 messages at once.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli, type LogLine, type Running } from '../cli/run-cli.js';
import { startDnsServer, type DnsTestServer } from '../helpers/dns-server.js';
import { postfixUnavailable, startPostfix, type PostfixInstance } from '../helpers/postfix.js';
import { headerFields, sendMail, startLmtpSink, type Delivered, type LmtpSink } from '../helpers/smtp.js';
import { rsaKey } from '../modules/auth-helpers.js';

const skip = postfixUnavailable();
const GTUBE_TAIL = 'JS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

let seq = 0;
/** A message with a Message-ID the sink can find it by. */
function message(o: { from: string; subject: string; body: string }): { id: string; bytes: Buffer } {
  const id = `pf${++seq}.${process.pid}.${Date.now()}@example.net`;
  const text =
    `From: Sender <${o.from}>\r\nTo: Bob <bob@example.com>\r\nSubject: ${o.subject}\r\n` +
    `Date: Thu, 26 Nov 2026 10:00:00 +0000\r\nMessage-ID: <${id}>\r\nMIME-Version: 1.0\r\n` +
    `Content-Type: text/plain; charset=us-ascii\r\n\r\n${o.body}`;
  return { id, bytes: Buffer.from(text, 'latin1') };
}

const HAM_BODY = 'Hello Bob,\r\n\r\nshall we meet for lunch on Thursday at noon? The usual place.\r\n\r\nRegards,\r\nAlice\r\n';

const header = (d: Delivered, name: string): string[] => headerFields(d.message).filter(([k]) => k.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
const byId = (id: string) => (d: Delivered): boolean => header(d, 'message-id').some((v) => v.includes(id));

describe('a real Postfix with smtpd_milters pointing at mailsift', { skip }, () => {
  let dns: DnsTestServer;
  let sink: LmtpSink;
  let confDir: string;
  let srv: Running | undefined;
  let postfix: PostfixInstance | undefined;
  const key = rsaKey(2048);

  before(async () => {
    dns = await startDnsServer({ zone: { 'mail._domainkey.example.org': [{ type: 'TXT', data: key.record }] } });
    sink = await startLmtpSink();
    const normalPort = await freePort();
    const milterPort = await freePort();
    confDir = await makeConfDir({
      'local.d/milter_headers.yaml': 'use: [x-spamd-result, x-rspamd-action]\nskip_local: false\nskip_authenticated: false\n',
      // Y, Z and A test patterns too: the Z pattern is how a test asks for `rewrite subject`.
      'local.d/gtube.yaml': 'gtube_patterns: all\n',
      'local.d/multimap.yaml': 'rules:\n  PX_DEFER: { type: from, map: ["defer@example.org"], action: "soft reject", message: "Try much later" }\n',
      'dkim.key': key.privatePem,
    });
    await writeFile(join(confDir, 'local.d/dkim_signing.yaml'), `domain:\n  example.org: { selector: mail, path: "${join(confDir, 'dkim.key')}" }\n`);
    // smtpd runs as the postfix user: the socket's directory must let it in (mkdtemp makes 0700).
    await chmod(confDir, 0o755);
    const sock = join(confDir, 'milter.sock');
    await writeFile(
      join(confDir, 'mailsift.yaml'),
      [
        'workers:',
        `  normal: { bind: "127.0.0.1:${normalPort}", count: 1 }`,
        '  controller: { enabled: false }',
        '  proxy:',
        '    enabled: true',
        '    milter: true',
        '    count: 1',
        `    bind: ["127.0.0.1:${milterPort}", "${sock}"]`,
        '    upstreams:',
        `      local: { hosts: "127.0.0.1:${normalPort}" }`,
        '',
      ].join('\n'),
    );
    srv = runCli(['serve', '-c', confDir]);
    await srv.waitFor((l: LogLine) => l.worker === 'proxy' && l.address === sock && /^listening on /.test(l.msg), 'the milter proxy on its socket', 90_000);
    await srv.waitFor((l: LogLine) => /^started 1 normal worker\(s\), 1 proxy worker\(s\)/.test(l.msg), 'the supervisor to report its workers', 90_000);
    postfix = await startPostfix({ milters: `inet:127.0.0.1:${milterPort}`, secondMilters: `unix:${sock}`, lmtpPort: sink.port });
  });

  after(async () => {
    // Whatever happened above: the Postfix instance is stopped and its directory removed.
    await postfix?.stop();
    if (srv) {
      srv.child.kill('SIGTERM');
      const t = setTimeout(() => srv!.child.kill('SIGKILL'), 15_000);
      await srv.exited;
      clearTimeout(t);
    }
    await sink?.close();
    await dns?.close();
    if (confDir) await removeConfDir(confDir);
  });

  /** Postfix's log and mailsift's output, for a failure message. */
  const context = async (): Promise<string> => `--- postfix\n${(await postfix?.log()) ?? ''}\n--- mailsift\n${srv?.output().slice(-4000) ?? ''}`;

  test('GTUBE is refused with 554 and the scanner text, and nothing is delivered', async () => {
    const m = message({ from: 'alice@example.net', subject: 'Test spam', body: `Body\r\nX${GTUBE_TAIL}\r\n` });
    const r = await sendMail(postfix!.port, { from: 'alice@example.net', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 554, `${r.final.code} ${r.final.text}\n${await context()}`);
    assert.equal(r.final.text, '5.7.1 Gtube pattern');
    assert.equal(sink.delivered.some(byId(m.id)), false);
  });

  test('ham is accepted and delivered with the milter headers', async () => {
    for (const port of [postfix!.port, postfix!.secondPort!]) {
      const m = message({ from: 'alice@example.net', subject: 'Lunch', body: HAM_BODY });
      const r = await sendMail(port, { from: 'alice@example.net', to: ['bob@example.com'] }, m.bytes);
      assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
      const d = await sink.waitFor(byId(m.id), `ham via smtpd ${port}`);
      assert.deepEqual(d.to, ['bob@example.com']);
      assert.deepEqual(header(d, 'x-rspamd-action'), ['no action']);
      const result = header(d, 'x-spamd-result');
      assert.equal(result.length, 1, 'one X-Spamd-Result');
      assert.match(result[0]!, /^default: False \[-?\d+\.\d+ \/ 15\.00\]/);
      assert.deepEqual(header(d, 'subject'), ['Lunch']);
      assert.ok(d.message.toString('latin1').endsWith(HAM_BODY), 'the body as sent');
    }
  });

  test('the rewrite-subject test pattern is delivered with the new Subject, once', async () => {
    const m = message({ from: 'alice@example.net', subject: 'Quarterly figures', body: `Figures attached.\r\nZ${GTUBE_TAIL}\r\n` });
    const r = await sendMail(postfix!.port, { from: 'alice@example.net', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
    const d = await sink.waitFor(byId(m.id), 'the rewritten message');
    assert.deepEqual(header(d, 'subject'), ['*** SPAM *** Quarterly figures']);
  });

  test('the add-header test pattern is delivered with X-Spam: Yes', async () => {
    const m = message({ from: 'alice@example.net', subject: 'Offer', body: `Cheap.\r\nY${GTUBE_TAIL}\r\n` });
    const r = await sendMail(postfix!.port, { from: 'alice@example.net', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
    const d = await sink.waitFor(byId(m.id), 'the flagged message');
    assert.deepEqual(header(d, 'x-spam'), ['Yes']);
  });

  test('a soft reject is a 451 with the scanner text', async () => {
    const m = message({ from: 'defer@example.org', subject: 'Later', body: HAM_BODY });
    const r = await sendMail(postfix!.port, { from: 'defer@example.org', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 451, `${r.final.code} ${r.final.text}\n${await context()}`);
    assert.match(r.final.text, /^4\.7\.1 Try much later$/);
    assert.equal(sink.delivered.some(byId(m.id)), false);
  });

  test('mail from the signing domain is delivered with a DKIM-Signature that verifies', async () => {
    const m = message({ from: 'carol@example.org', subject: 'Signed', body: HAM_BODY });
    const r = await sendMail(postfix!.port, { from: 'carol@example.org', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
    const d = await sink.waitFor(byId(m.id), 'the signed message');
    const sigs = header(d, 'dkim-signature');
    assert.equal(sigs.length, 1, `one DKIM-Signature:\n${d.message.toString('latin1').slice(0, 1500)}`);
    assert.match(sigs[0]!, /\bd=example\.org;/);
    assert.match(sigs[0]!, /\bs=mail;/);
    const resolver = new Resolver();
    resolver.setServers([dns.address]);
    // mailauth types its resolver as dns.resolve's overloads; resolve(name, type) is that function.
    const verdict = await dkimVerify(d.message, { resolver: ((name: string, type: string) => resolver.resolve(name, type)) as never });
    const results = verdict.results.map((x) => `${x.status.result} ${x.signingDomain ?? ''} ${x.info ?? ''}`);
    assert.deepEqual(verdict.results.map((x) => x.status.result), ['pass'], results.join('\n'));
    assert.ok(dns.queries.some((q) => q.name === 'mail._domainkey.example.org' && q.type === 'TXT'), 'the key came from the test DNS server');
  });

  test('20 messages at once: every ham delivered with its own headers, every GTUBE refused', async () => {
    const batch = Array.from({ length: 20 }, (_, i) => {
      const spam = i % 4 === 3;
      const m = message({ from: `user${i}@example.net`, subject: `Batch ${i}`, body: spam ? `X${GTUBE_TAIL}\r\n` : `${HAM_BODY}Number ${i}.\r\n` });
      return { i, spam, m };
    });
    const results = await Promise.all(
      batch.map(({ i, m }) => sendMail(i % 2 === 0 ? postfix!.port : postfix!.secondPort!, { from: `user${i}@example.net`, to: ['bob@example.com'] }, m.bytes)),
    );
    const ctx = await context();
    for (const { i, spam, m } of batch) {
      const r = results[i]!;
      if (spam) {
        assert.equal(r.final.code, 554, `message ${i}: ${r.final.code} ${r.final.text}\n${ctx}`);
        continue;
      }
      assert.equal(r.final.code, 250, `message ${i}: ${r.final.code} ${r.final.text}\n${ctx}`);
      const d = await sink.waitFor(byId(m.id), `batch message ${i}`);
      assert.deepEqual(header(d, 'subject'), [`Batch ${i}`]);
      assert.deepEqual(header(d, 'x-rspamd-action'), ['no action'], `message ${i}`);
      assert.equal(header(d, 'x-spamd-result').length, 1, `message ${i}: one X-Spamd-Result`);
      assert.ok(d.message.toString('latin1').includes(`Number ${i}.\r\n`), `message ${i}: its own body`);
    }
    for (const { m, spam } of batch) if (spam) assert.equal(sink.delivered.some(byId(m.id)), false);
  });
});
