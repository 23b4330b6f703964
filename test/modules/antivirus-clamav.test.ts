// The antivirus module against a real clamd (started privately, with a signature database this
// file writes) on real messages: detection, the forced action, clean mail, clamd down, max_size,
// patterns, the virus-name whitelist, whole-message scans, text parts and the verdict cache.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { bodySignature, clamdCommand, hashSignature, startClamd, type Clamd } from '../helpers/clamd.js';
import { freePort } from '../helpers/real-rspamd.js';
import { engineConfig, fixtureMessage, meta, names, symbol, testMessage } from './helpers.js';
import { sqliteStores } from './policy-stores.js';

/** A real message whose attachment (hello_world.exe, the start of an ELF file) the test signature names. */
const INFECTED = testMessage('exe_attm.eml');
/** The attachment's bytes, decoded here independently of the module's MIME parser. */
const ATTACHMENT = Buffer.from(/BASE64\r?\n\r?\n([A-Za-z0-9+/=\r\n]+?)\r?\n\r?\n/.exec(INFECTED.toString('latin1'))![1]!, 'base64');
const EXE_SIG = 'Mailsift.Test.Exe';
/** clamd reports signatures from unofficial databases with this suffix. */
const EXE_FOUND = `${EXE_SIG}.UNOFFICIAL`;
/** Real messages with attachments the signatures do not name. */
const CLEAN = testMessage('fname.eml');
const TEXT_MARKER = 'MAILSIFT-AV-TEXT-MARKER-5d1c9e';
/** A plain text message carrying the body signature's marker. */
const TEXT_MESSAGE = Buffer.from(
  'From: Ann <a@example.com>\r\nTo: Bob <b@example.net>\r\nSubject: text marker\r\nMessage-ID: <t1@example.com>\r\n' +
    'Date: Thu, 26 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n' +
    `Hello Bob,\r\nthis carries ${TEXT_MARKER} in its body.\r\n`,
);

let clamd: Clamd;

before(async () => {
  assert.ok(ATTACHMENT.length > 20, 'the fixture attachment was decoded');
  clamd = await startClamd({
    'test.hdb': [hashSignature(EXE_SIG, ATTACHMENT)],
    'test.ndb': [bodySignature('Mailsift.Test.Text', TEXT_MARKER)],
  });
});

after(async () => {
  await clamd?.stop();
});

function scannerWith(rule: Record<string, unknown>, opts: Parameters<typeof createEngine>[2] = {}) {
  return createEngine(engineConfig({ antivirus: { rules: { clamav: { servers: `127.0.0.1:${clamd.port}`, ...rule } } } }), builtinModules, opts);
}

test('the private clamd itself names the attachment (the signature is right)', async () => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(ATTACHMENT.length);
  const reply = await clamdCommand(clamd.port!, Buffer.concat([Buffer.from('zINSTREAM\0'), len, ATTACHMENT, Buffer.alloc(4)]));
  assert.equal(reply, `stream: ${EXE_FOUND} FOUND`);
});

test('an infected attachment gives CLAM_VIRUS and the configured reject', async () => {
  const r = await (await scannerWith({ action: 'reject' })).scan(INFECTED, meta());
  assert.deepEqual(symbol(r, 'CLAM_VIRUS')?.options, [EXE_FOUND]);
  assert.equal(symbol(r, 'CLAM_VIRUS')?.score, 8);
  assert.ok(!names(r).has('CLAM_VIRUS_FAIL'));
  assert.equal(r.action, 'reject');
  assert.equal(r.passthroughModule, 'clamav');
  assert.equal(r.messages['smtp_message'], `clamav: virus found: "${EXE_FOUND}"`);
});

test('a non-reject action is a floor under the score; the message template of a reject', async () => {
  // CLAM_VIRUS weighs nothing here, so only the forced floor can move this low-scoring message.
  const cfg = engineConfig({ antivirus: { rules: { clamav: { servers: `127.0.0.1:${clamd.port}`, scan_text_mime: true, action: 'add header', message: 'infected by ${VIRUS} (${SCANNER})' } } } });
  cfg.symbols = { CLAM_VIRUS: { score: 0 } };
  const s = await createEngine(cfg, builtinModules);
  const r = await s.scan(TEXT_MESSAGE, meta());
  assert.ok(names(r).has('CLAM_VIRUS'));
  const sum = r.symbols.reduce((a, x) => a + x.score, 0);
  assert.ok(sum < 6, `the symbols' ${sum} is below add header`);
  // As Rspamd: the floor lifts the reported score to the action's threshold.
  assert.equal(r.action, 'add header');
  assert.equal(r.score, 6);
  // A least pre-result does not stop the scan: the other rules still ran.
  assert.ok(r.symbols.some((x) => x.name !== 'CLAM_VIRUS'), 'other symbols were inserted too');
  // Without an action nothing is forced: the score alone decides.
  const plain = await (await scannerWith({ scan_text_mime: true })).scan(TEXT_MESSAGE, meta());
  assert.ok(names(plain).has('CLAM_VIRUS'));
  assert.equal(plain.passthroughModule, undefined);
  assert.equal(plain.messages['smtp_message'], undefined);
  // The message template of a forced reject.
  const rej = await (await scannerWith({ scan_text_mime: true, action: 'reject', message: 'infected by ${VIRUS} (${SCANNER})' })).scan(TEXT_MESSAGE, meta());
  assert.equal(rej.action, 'reject');
  assert.equal(rej.messages['smtp_message'], 'infected by Mailsift.Test.Text.UNOFFICIAL (clamav)');
});

test('a clean message has no antivirus symbol and no forced action', async () => {
  const s = await scannerWith({ action: 'reject' });
  for (const msg of [CLEAN, fixtureMessage('ham.eml')]) {
    const r = await s.scan(msg, meta());
    assert.ok(!names(r).has('CLAM_VIRUS'), 'no detection');
    assert.ok(!names(r).has('CLAM_VIRUS_FAIL'), 'no failure');
    assert.equal(r.passthroughModule, undefined);
    assert.notEqual(r.action, 'reject');
  }
});

test('clamd down: CLAM_VIRUS_FAIL, and the scan goes on to a verdict', async () => {
  const dead = await freePort();
  const s = await createEngine(engineConfig({ antivirus: { rules: { clamav: { servers: `127.0.0.1:${dead}`, action: 'reject', retransmits: 1, timeout: 1 } } } }), builtinModules);
  const started = Date.now();
  const r = await s.scan(INFECTED, meta());
  assert.ok(Date.now() - started < 3000, 'a refused connection does not wait for the timeout');
  const fail = symbol(r, 'CLAM_VIRUS_FAIL');
  assert.ok(fail, 'fail symbol');
  assert.match(fail.options?.[0] ?? '', /maximum retransmits exceed .*127\.0\.0\.1/);
  assert.equal(fail.score, 0);
  assert.ok(!names(r).has('CLAM_VIRUS'));
  assert.notEqual(r.action, 'reject', 'no action is forced on a failure');
  assert.ok(r.symbols.some((x) => x.name !== 'CLAM_VIRUS_FAIL'), 'the other rules ran');
});

test('a scanner that accepts and never answers: the attempt times out into CLAM_VIRUS_FAIL', async () => {
  const held: net.Socket[] = [];
  const silent = net.createServer((c) => held.push(c));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    const s = await createEngine(engineConfig({ antivirus: { rules: { clamav: { servers: `127.0.0.1:${port}`, retransmits: 0, timeout: 0.5 } } } }), builtinModules);
    const started = Date.now();
    const r = await s.scan(INFECTED, meta());
    const took = Date.now() - started;
    assert.ok(took >= 450 && took < 3000, `took ${took} ms`);
    assert.match(symbol(r, 'CLAM_VIRUS_FAIL')?.options?.[0] ?? '', /IO timeout/);
  } finally {
    for (const c of held) c.destroy();
    silent.close();
  }
});

test('max_size: a larger attachment (or message) is not sent; one that fits is', async () => {
  const below = await (await scannerWith({ max_size: ATTACHMENT.length - 1 })).scan(INFECTED, meta());
  assert.ok(!names(below).has('CLAM_VIRUS'));
  assert.ok(!names(below).has('CLAM_VIRUS_FAIL'), 'a skipped part is not a failure');
  const exact = await (await scannerWith({ max_size: ATTACHMENT.length })).scan(INFECTED, meta());
  assert.ok(names(exact).has('CLAM_VIRUS'));
  // Whole-message mode: the limit applies to the message. clamd decodes MIME itself, so the
  // attachment's signature matches inside the whole message.
  const whole = await (await scannerWith({ scan_mime_parts: false })).scan(INFECTED, meta());
  assert.deepEqual(symbol(whole, 'CLAM_VIRUS')?.options, [EXE_FOUND]);
  const wholeTooBig = await (await scannerWith({ scan_mime_parts: false, max_size: '100' })).scan(INFECTED, meta());
  assert.ok(!names(wholeTooBig).has('CLAM_VIRUS'));
});

test('patterns map virus names to symbols; whitelisted names are not reported', async () => {
  const r = await (await scannerWith({ action: 'reject', patterns: { TEST_EXE_VIRUS: '^Mailsift\\.Test\\.Exe', OTHER: '^Nope' } })).scan(INFECTED, meta());
  assert.deepEqual(symbol(r, 'TEST_EXE_VIRUS')?.options, [EXE_FOUND]);
  assert.equal(symbol(r, 'TEST_EXE_VIRUS')?.score, 8, 'a pattern symbol is scored like the detection');
  assert.ok(!names(r).has('CLAM_VIRUS'));
  assert.equal(r.action, 'reject');
  const w = await (await scannerWith({ action: 'reject', whitelist: [EXE_FOUND] })).scan(INFECTED, meta());
  assert.ok(!names(w).has('CLAM_VIRUS'));
  assert.notEqual(w.action, 'reject', 'a whitelisted name forces nothing');
});

test('text parts are scanned only with scan_text_mime', async () => {
  const off = await (await scannerWith({})).scan(TEXT_MESSAGE, meta());
  assert.ok(!names(off).has('CLAM_VIRUS'));
  const on = await (await scannerWith({ scan_text_mime: true })).scan(TEXT_MESSAGE, meta());
  assert.deepEqual(symbol(on, 'CLAM_VIRUS')?.options, ['Mailsift.Test.Text.UNOFFICIAL']);
});

test('verdicts are cached per content digest: a second scan needs no clamd', async () => {
  const st = await sqliteStores();
  try {
    const first = await (await scannerWith({}, { stores: st.stores })).scan(INFECTED, meta());
    assert.ok(names(first).has('CLAM_VIRUS'));
    const dead = await freePort();
    const offline = await createEngine(engineConfig({ antivirus: { rules: { clamav: { servers: `127.0.0.1:${dead}` } } } }), builtinModules, { stores: st.stores });
    const again = await offline.scan(INFECTED, meta());
    assert.deepEqual(symbol(again, 'CLAM_VIRUS')?.options, [EXE_FOUND], 'from the cache');
    assert.ok(!names(again).has('CLAM_VIRUS_FAIL'));
    // A part never seen is not in the cache: the dead server is asked and fails.
    assert.ok(names(await offline.scan(CLEAN, meta())).has('CLAM_VIRUS_FAIL'));
    // cache_expire: 0 keeps no cache.
    const noCache = await createEngine(engineConfig({ antivirus: { rules: { clamav: { servers: `127.0.0.1:${dead}`, cache_expire: 0 } } } }), builtinModules, { stores: st.stores });
    assert.ok(names(await noCache.scan(INFECTED, meta())).has('CLAM_VIRUS_FAIL'));
  } finally {
    await st.cleanup();
  }
});
