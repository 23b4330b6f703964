// Milter envelope instructions carried out by a real Postfix (issue 20, item 5): `mailsift serve`
// with its proxy worker in milter mode behind a private Postfix (test/helpers/postfix.ts), every
// delivered message landing in an LMTP sink this test reads. The instructions come from
//  - a settings rule matched by sender (`apply.milter`: change_from, add_rcpt, del_rcpt),
//  - force_actions forcing a custom action configured with `milter: quarantine`,
//  - a user plugin through the typed task.milter (discard, add a recipient);
// and the same instructions are checked in the normal worker's /checkv2 reply.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chmod } from 'node:fs/promises';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli, type LogLine, type Running } from '../cli/run-cli.js';
import { postfixUnavailable, startPostfix, type PostfixInstance } from '../helpers/postfix.js';
import { headerFields, sendMail, startLmtpSink, type Delivered, type LmtpSink } from '../helpers/smtp.js';

const skip = postfixUnavailable();

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
function message(from: string, subject: string): { id: string; bytes: Buffer } {
  const id = `env${++seq}.${process.pid}.${Date.now()}@example.net`;
  const text =
    `From: Sender <${from}>\r\nTo: Bob <bob@example.com>\r\nSubject: ${subject}\r\n` +
    `Date: Thu, 26 Nov 2026 10:00:00 +0000\r\nMessage-ID: <${id}>\r\nMIME-Version: 1.0\r\n` +
    'Content-Type: text/plain; charset=us-ascii\r\n\r\nHello Bob,\r\n\r\nthe minutes of Thursday are below.\r\n\r\nRegards\r\n';
  return { id, bytes: Buffer.from(text, 'latin1') };
}

/** Postfix logs the hold (not the milter's reason text). */
const HOLD_LINE = /milter-hold: END-OF-MESSAGE from [^:]+: milter triggers HOLD action; from=<hold@example\.org>/;

/** The reply's milter block without the header keys milter_headers adds to every reply. */
function envelopeKeys(reply: Record<string, unknown>): Record<string, unknown> {
  const { add_headers: _a, remove_headers: _r, ...rest } = (reply['milter'] ?? {}) as Record<string, unknown>;
  return rest;
}

const byId = (id: string) => (d: Delivered): boolean => headerFields(d.message).some(([k, v]) => k.toLowerCase() === 'message-id' && v.includes(id));

/** A user plugin using the typed milter API: drop one sender's mail, copy another's to a recipient. */
const PLUGIN = `
export function plugin({ defineModule }) {
  return defineModule({
    name: 'envelope_router',
    symbols: { ENVELOPE_ROUTED: { score: 0, group: 'envelope_router', description: 'envelope changed by the router' } },
    setup(ctx) {
      ctx.symbol({
        name: 'ENVELOPE_ROUTED',
        check(task) {
          const from = task.envelopeFrom?.address;
          if (from === 'drop@example.org') task.milter.discard({ module: 'envelope_router' });
          else if (from === 'copy@example.org') { task.milter.addRcpt('copies@example.com'); task.insert('ENVELOPE_ROUTED'); }
        },
      });
    },
  });
}
`;

describe('milter envelope instructions performed by a real Postfix', { skip }, () => {
  let sink: LmtpSink;
  let confDir: string;
  let srv: Running | undefined;
  let postfix: PostfixInstance | undefined;
  let normalPort = 0;

  before(async () => {
    sink = await startLmtpSink();
    normalPort = await freePort();
    const milterPort = await freePort();
    confDir = await makeConfDir({
      'local.d/multimap.yaml': 'rules:\n  HOLD_SENDER: { type: from, map: ["hold@example.org"], score: 0.1 }\n',
      'local.d/force_actions.yaml': 'rules:\n  HOLD: { expression: "HOLD_SENDER", action: quarantine, message: "Held for review" }\n',
      'local.d/plugins/envelope_router.mjs': PLUGIN,
    });
    await chmod(confDir, 0o755);
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
        `    bind: "127.0.0.1:${milterPort}"`,
        '    upstreams:',
        `      local: { hosts: "127.0.0.1:${normalPort}" }`,
        'actions:',
        '  reject: 15',
        '  add_header: 6',
        '  greylist: 4',
        '  quarantine: { threshold: null, milter: quarantine }',
        'settings:',
        '  redirect:',
        '    from: ["redirect@example.org"]',
        '    apply:',
        '      milter: { change_from: "bounces@example.org", add_rcpt: ["archive@example.com"], del_rcpt: ["bob@example.com"] }',
        '',
      ].join('\n'),
    );
    srv = runCli(['serve', '-c', confDir]);
    await srv.waitFor((l: LogLine) => /^started 1 normal worker\(s\), 1 proxy worker\(s\)/.test(l.msg), 'the supervisor to report its workers', 90_000);
    postfix = await startPostfix({ milters: `inet:127.0.0.1:${milterPort}`, lmtpPort: sink.port });
  });

  after(async () => {
    await postfix?.stop();
    if (srv) {
      srv.child.kill('SIGTERM');
      const t = setTimeout(() => srv!.child.kill('SIGKILL'), 15_000);
      await srv.exited;
      clearTimeout(t);
    }
    await sink?.close();
    if (confDir) await removeConfDir(confDir);
  });

  const context = async (): Promise<string> => `--- postfix\n${(await postfix?.log()) ?? ''}\n--- mailsift\n${srv?.output().slice(-4000) ?? ''}`;

  /** /checkv2 of the normal worker for the same envelope. */
  async function checkv2(from: string, rcpt: string[], bytes: Buffer): Promise<Record<string, unknown>> {
    const headers = new Headers({ From: from, IP: '127.0.0.1' });
    for (const r of rcpt) headers.append('Rcpt', r);
    const res = await fetch(`http://127.0.0.1:${normalPort}/checkv2`, { method: 'POST', headers, body: bytes });
    assert.equal(res.status, 200);
    return (await res.json()) as Record<string, unknown>;
  }

  test('a settings rule changes the sender and the recipients (CHGFROM, ADDRCPT, DELRCPT)', async () => {
    const m = message('redirect@example.org', 'Redirected');
    const reply = await checkv2('redirect@example.org', ['bob@example.com'], m.bytes);
    // milter_headers' default remove-spam-flag routine adds `remove_headers` beside them.
    assert.deepEqual(envelopeKeys(reply), { change_from: '<bounces@example.org>', add_rcpt: ['<archive@example.com>'], del_rcpt: ['<bob@example.com>'] });
    const r = await sendMail(postfix!.port, { from: 'redirect@example.org', to: ['bob@example.com', 'carol@example.com'] }, m.bytes);
    assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
    const d = await sink.waitFor(byId(m.id), 'the redirected message');
    assert.equal(d.from, 'bounces@example.org', await context());
    assert.deepEqual([...d.to].sort(), ['archive@example.com', 'carol@example.com']);
  });

  test('force_actions forces the quarantine action: Postfix holds the message, nothing is delivered', async () => {
    const m = message('hold@example.org', 'Hold me');
    const reply = await checkv2('hold@example.org', ['bob@example.com'], m.bytes);
    assert.equal(reply['action'], 'quarantine');
    assert.equal(reply['reject'], 'quarantine');
    assert.equal((reply['messages'] as Record<string, string>)['smtp_message'], 'Held for review');
    assert.ok(Object.hasOwn(reply['symbols'] as object, 'FORCE_ACTION_HOLD'));
    const r = await sendMail(postfix!.port, { from: 'hold@example.org', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
    // Postfix logs the hold and moves the queue file to hold/.
    const deadline = Date.now() + 30_000;
    let held: string[] = [];
    while (Date.now() < deadline) {
      held = await readdir(join(postfix!.dir, 'spool', 'hold')).catch(() => []);
      if (held.length > 0 && HOLD_LINE.test(await postfix!.log())) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.equal(held.length, 1, `one message on hold\n${await context()}`);
    assert.match(await postfix!.log(), HOLD_LINE);
    assert.equal(sink.delivered.some(byId(m.id)), false);
  });

  test('a plugin discards through task.milter: accepted, never delivered', async () => {
    const m = message('drop@example.org', 'Drop me');
    const reply = await checkv2('drop@example.org', ['bob@example.com'], m.bytes);
    assert.equal(reply['action'], 'reject');
    assert.deepEqual(envelopeKeys(reply), { reject: 'discard' });
    const r = await sendMail(postfix!.port, { from: 'drop@example.org', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !/milter-discard: END-OF-MESSAGE/.test(await postfix!.log())) await new Promise((res) => setTimeout(res, 200));
    assert.match(await postfix!.log(), /milter-discard: END-OF-MESSAGE/);
    assert.equal(sink.delivered.some(byId(m.id)), false);
  });

  test('a plugin adds a recipient through task.milter', async () => {
    const m = message('copy@example.org', 'Copy me');
    const r = await sendMail(postfix!.port, { from: 'copy@example.org', to: ['bob@example.com'] }, m.bytes);
    assert.equal(r.final.code, 250, `${r.final.code} ${r.final.text}\n${await context()}`);
    const d = await sink.waitFor(byId(m.id), 'the copied message');
    assert.equal(d.from, 'copy@example.org');
    assert.deepEqual([...d.to].sort(), ['bob@example.com', 'copies@example.com']);
  });
});
