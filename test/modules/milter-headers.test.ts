import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessage } from '../../src/message/parse-message.js';
import type { MilterHeaderEntry, ScanResult } from '../../src/plugin-api/index.js';
import { fixtureMessage, meta, metaFromRecorded, recordedCase, scanner, testMessage } from './helpers.js';

/** Phase B of the fixtures (config/local.d/milter_headers.conf), in our YAML shape. */
const PHASE_B = {
  extended_spam_headers: true,
  use: [
    'x-spamd-result', 'x-rspamd-server', 'x-rspamd-queue-id', 'x-rspamd-action', 'authentication-results',
    'x-spam-status', 'x-spamd-bar', 'x-spam-level', 'spam-header', 'x-virus', 'remove-headers', 'add-headers',
    'stat-signature',
  ],
  skip_local: false,
  skip_authenticated: false,
  routines: {
    'x-rspamd-server': { hostname: 'fixture-host' },
    'x-virus': { symbols: ['FIXTURE_VIRUS'], status_clean: 'clean', status_infected: 'infected', status_fail: 'failed' },
    'remove-headers': { headers: { 'X-Remove-Me': 0 } },
    'add-headers': { headers: { 'X-Added-Static': 'static value' }, remove: 1 },
  },
};

const entry = (r: ScanResult, name: string): MilterHeaderEntry => {
  const v = r.milter?.add_headers?.[name];
  assert.ok(v && typeof v === 'object' && !Array.isArray(v), `${name} added once as an object`);
  return v;
};

test('stock config: every parsed message gets remove_headers X-Spam: 0 and nothing else', async () => {
  const c = recordedCase('a03-checkv2-envelope');
  const r = await (await scanner()).scan(c.message, metaFromRecorded(c));
  assert.deepEqual(r.milter, c.reply['milter']);
  assert.deepEqual(r.milter, { remove_headers: { 'X-Spam': 0 } });
});

test('phase B routines produce the same headers and removals as Rspamd 3.4 (b01)', async () => {
  const c = recordedCase('b01-milter-headers');
  const r = await (await scanner({ milter_headers: PHASE_B })).scan(c.message, metaFromRecorded(c));
  const want = c.reply['milter'] as { add_headers: Record<string, MilterHeaderEntry>; remove_headers: Record<string, number> };
  assert.deepEqual(r.milter?.remove_headers, want.remove_headers);
  // The Bayes signature does not exist here, so that header is not added.
  const expectedAdds = Object.keys(want.add_headers).filter((h) => h !== 'X-Stat-Signature');
  assert.deepEqual(Object.keys(r.milter?.add_headers ?? {}).sort(), expectedAdds.sort());
  // Rspamd's DNS timed out where ours answers "no such name": same rows, other results.
  assert.match(entry(r, 'Authentication-Results').value, /^[^;]+;\r\n\tdkim=none;\r\n\tspf=[a-z]+ \([^)]*\) smtp\.mailfrom=alice@example\.com;\r\n\tdmarc=[a-z]+ /);
  assert.equal(entry(r, 'Authentication-Results').order, want.add_headers['Authentication-Results']!.order);
  for (const h of ['X-Rspamd-Server', 'X-Rspamd-Queue-Id', 'X-Rspamd-Action', 'Deliver-To', 'X-Virus', 'X-Added-Static']) {
    assert.deepEqual(entry(r, h), want.add_headers[h], h);
  }
  const score = r.score.toFixed(2);
  assert.equal(entry(r, 'X-Spam-Status').value, `Yes, score=${score}`);
  assert.equal(entry(r, 'X-Spamd-Bar').value, '+'.repeat(Math.floor(r.score)));
  assert.equal(entry(r, 'X-Spam-Level').value, '*'.repeat(Math.floor(r.score)));
  const result = entry(r, 'X-Spamd-Result').value;
  assert.ok(result.startsWith(`default: False [${score} / ${r.requiredScore.toFixed(2)}];\r\n\t`), result);
  // Every symbol on its own folded line, largest |score| first, options in brackets.
  const lines = result.split(';\r\n\t').slice(1);
  assert.equal(lines.length, r.symbols.length);
  assert.ok(lines.includes('SPAM_FLAG(5.00)[]'));
  assert.ok(lines.includes('MIME_GOOD(-0.10)[text/plain]'));
  const scores = lines.map((l) => Math.abs(Number(/\((-?[\d.]+)\)/.exec(l)![1])));
  assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
});

test('milter flag folds with bare LF (b03)', async () => {
  const c = recordedCase('b03-milter-flag');
  const m = metaFromRecorded(c);
  m.flags.add('milter');
  const r = await (await scanner({ milter_headers: PHASE_B })).scan(c.message, m);
  const v = entry(r, 'X-Spamd-Result').value;
  assert.ok(v.includes(';\n\t') && !v.includes('\r'), v);
});

test('x-virus reports the infected symbol options (b14)', async () => {
  const c = recordedCase('b14-virus-symbol');
  const m = metaFromRecorded(c);
  m.settings = { symbols: { FIXTURE_VIRUS: { score: 0.0, options: ['Eicar-Test-Signature'] } } };
  const r = await (await scanner({ milter_headers: PHASE_B })).scan(c.message, m);
  const want = (c.reply['milter'] as { add_headers: Record<string, MilterHeaderEntry> }).add_headers['X-Virus'];
  assert.deepEqual(entry(r, 'X-Virus'), want);
});

test('skip_local / skip_authenticated keep only remove-spam-flag unless a routine is listed as allowed', async () => {
  const s = await scanner({ milter_headers: { use: ['x-spam-status', 'x-spamd-bar'], local_headers: ['x-spamd-bar'] } });
  const msg = fixtureMessage('crlf-simple.eml');
  const local = await s.scan(msg, meta({ ip: '127.0.0.1' }));
  assert.deepEqual(Object.keys(local.milter?.add_headers ?? {}), ['X-Spamd-Bar']);
  const authed = await s.scan(msg, meta({ ip: '203.0.113.5', user: 'alice' }));
  assert.deepEqual(authed.milter, { remove_headers: { 'X-Spam': 0 } });
  const outside = await s.scan(msg, meta({ ip: '203.0.113.5' }));
  assert.deepEqual(Object.keys(outside.milter?.add_headers ?? {}).sort(), ['X-Spam-Status', 'X-Spamd-Bar']);
});

test('extended_headers_rcpt forces routines for listed recipients even from local senders', async () => {
  const s = await scanner({ milter_headers: { use: ['x-spam-status'], extended_headers_rcpt: ['@example.org'] } });
  const msg = fixtureMessage('crlf-simple.eml');
  const listed = await s.scan(msg, meta({ ip: '127.0.0.1', rcpt: ['bob@example.org'] }));
  assert.ok(listed.milter?.add_headers?.['X-Spam-Status']);
  const other = await s.scan(msg, meta({ ip: '127.0.0.1', rcpt: ['bob@example.com'] }));
  assert.equal(other.milter?.add_headers, undefined);
});

test('settings plugins.milter_headers.routines replaces the routine list; an empty list removes the block', async () => {
  const s = await scanner({ milter_headers: PHASE_B });
  const msg = fixtureMessage('crlf-simple.eml');
  const only = await s.scan(msg, meta({ ip: '127.0.0.1', settings: { plugins: { milter_headers: { routines: ['x-spam-status', 'remove-spam-flag'] } } } }));
  assert.deepEqual(Object.keys(only.milter?.add_headers ?? {}), ['X-Spam-Status']);
  assert.deepEqual(only.milter?.remove_headers, { 'X-Spam-Status': 0, 'X-Spam': 0 });
  const none = await s.scan(msg, meta({ settings: { plugins: { milter_headers: { routines: [] } } } }));
  assert.equal(none.milter, undefined);
});

test('authentication-results: auth=pass for an authenticated sender, inserted at position 1', async () => {
  const s = await scanner({ milter_headers: { use: ['authentication-results'], skip_authenticated: false } });
  const r = await s.scan(fixtureMessage('crlf-simple.eml'), meta({ user: 'alice', from: 'alice@example.com', mtaName: 'mx1.example.org' }));
  assert.deepEqual(entry(r, 'Authentication-Results'), {
    value: 'mx1.example.org;\r\n\tauth=pass smtp.auth=alice smtp.mailfrom=alice@example.com',
    order: 1,
  });
  // Unauthenticated: the DKIM/DMARC rows of the auth modules, no auth= row.
  const anon = await s.scan(fixtureMessage('crlf-simple.eml'), meta());
  assert.ok(entry(anon, 'Authentication-Results').value.startsWith('test-host;\r\n\tdkim=none'));
  assert.ok(!entry(anon, 'Authentication-Results').value.includes('auth=pass'));
  assert.equal(anon.milter?.remove_headers?.['Authentication-Results'], 0);
});

test('x-service-action carries the action and tells the milter not to enforce it', async () => {
  const s = await scanner({ milter_headers: { use: ['x-service-action'] } });
  const r = await s.scan(fixtureMessage('crlf-simple.eml'), meta());
  assert.equal(r.milter?.no_action, true);
  assert.equal(entry(r, 'X-Service-Action').value, r.action);
});

test('GTUBE (skipped task) gets no milter block even with routines', async () => {
  const r = await (await scanner({ milter_headers: PHASE_B })).scan(fixtureMessage('gtube.eml'), meta());
  assert.equal(r.milter, undefined);
});

// ---- body footer: the message-rewriting routine behind the body_block protocol path ----

const FOOTER = { text: 'Scanned by mailsift: clean', html: '<p>Scanned by mailsift: clean</p>' };

async function withFooter(msg: Buffer): Promise<ScanResult> {
  return (await scanner({ milter_headers: { footer: FOOTER } })).scan(msg, meta());
}

const toCrlf = (b: Buffer): Buffer => Buffer.from(b.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');
const hasBareLf = (b: Buffer): boolean => /(^|[^\r])\n/.test(b.toString('latin1'));

function assertFooterEverywhere(original: Buffer, r: ScanResult): void {
  assert.ok(r.rewritten, 'message rewritten');
  const before = parseMessage(original);
  const after = parseMessage(r.rewritten);
  assert.equal(after.parts.length, before.parts.length, 'same MIME structure');
  assert.deepEqual(after.headers.all.map((h) => h.name), before.headers.all.map((h) => h.name), 'headers untouched');
  let texts = 0;
  for (let i = 0; i < after.parts.length; i++) {
    const a = after.parts[i]!;
    const b = before.parts[i]!;
    assert.equal(a.contentType.type, b.contentType.type);
    const inline = !b.isAttachment && (b.contentType.type === 'text/plain' || b.contentType.type === 'text/html');
    if (!inline || b.isMultipart) {
      assert.ok(a.content.equals(b.content), `part ${b.id} unchanged`);
      continue;
    }
    texts++;
    const text = a.content.toString('utf8');
    assert.ok(text.includes(b.contentType.type === 'text/html' ? FOOTER.html : FOOTER.text), `footer in part ${b.id}: ${text}`);
    assert.ok(text.startsWith(b.content.toString('utf8').slice(0, 20)), 'original text kept first');
  }
  assert.ok(texts > 0, 'at least one text part');
}

test('footer on a CRLF message keeps CRLF and every other byte', async () => {
  const msg = fixtureMessage('crlf-simple.eml');
  const r = await withFooter(msg);
  assertFooterEverywhere(msg, r);
  assert.equal(hasBareLf(r.rewritten!), false);
  assert.ok(r.rewritten!.subarray(0, msg.length - 20).equals(msg.subarray(0, msg.length - 20)), 'prefix untouched');
  assert.equal(r.rewrittenBodyOffset, parseMessage(msg).bodyOffset);
});

test('footer on an LF message adds no CR', async () => {
  const msg = fixtureMessage('lf-simple.eml');
  const r = await withFooter(msg);
  assertFooterEverywhere(msg, r);
  assert.ok(!r.rewritten!.includes('\r'));
});

test('footer in quoted-printable multipart/alternative parts, LF and CRLF', async () => {
  for (const msg of [testMessage('arcallow.eml'), toCrlf(testMessage('arcallow.eml')), testMessage('empty_part.eml')]) {
    const r = await withFooter(msg);
    assertFooterEverywhere(msg, r);
    if (msg.includes('\r\n')) assert.equal(hasBareLf(r.rewritten!), false);
  }
});

test('footer in a base64 text part is re-encoded', async () => {
  const src = fixtureMessage('crlf-simple.eml').toString('latin1');
  const split = src.indexOf('\r\n\r\n');
  const body = Buffer.from(src.slice(split + 4), 'latin1').toString('base64').replace(/.{76}/g, '$&\r\n');
  const msg = Buffer.from(`${src.slice(0, split)}\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n`, 'latin1');
  const r = await withFooter(msg);
  assertFooterEverywhere(msg, r);
  assert.equal(hasBareLf(r.rewritten!), false);
  const bodyLines = r.rewritten!.toString('latin1').slice(split).split('\r\n').filter((l) => l.length);
  assert.ok(bodyLines.slice(2).every((l) => l.length <= 76 && /^[A-Za-z0-9+/=]+$/.test(l)), 'base64 lines');
});

test('footer limited to some actions, and no rewrite without a footer', async () => {
  const msg = fixtureMessage('crlf-simple.eml');
  const s = await scanner({ milter_headers: { footer: { ...FOOTER, actions: ['reject'] } } });
  assert.equal((await s.scan(msg, meta())).rewritten, undefined);
  assert.equal((await (await scanner()).scan(msg, meta())).rewritten, undefined);
});

test('rewrite_subject_in_message writes the new Subject into the message', async () => {
  const c = recordedCase('a43-rewrite-subject');
  const s = await scanner({ milter_headers: { rewrite_subject_in_message: true } });
  const m = metaFromRecorded(c);
  // The fixture's own Settings: only `rewrite subject` enabled, custom template.
  m.settings = { actions: { 'rewrite subject': 1, greylist: null, 'add header': null, reject: null }, subject: '[FIXTURE %d] %s' };
  const r = await s.scan(c.message, m);
  assert.equal(r.action, 'rewrite subject');
  assert.ok(r.subject?.startsWith('[FIXTURE '));
  const after = parseMessage(r.rewritten!);
  assert.equal(after.subject, r.subject);
  assert.equal(after.headers.get('subject').length, 1);
});
