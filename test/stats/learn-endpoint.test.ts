// /learnspam, /learnham and /bayes/classifiers on a real controller socket with the SQLite store,
// driven by rspamc and by plain HTTP; then a scan with the learned statistics shows BAYES_SPAM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { emptyMeta } from '../../src/plugin-api/index.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/storage/types.js';
import { startControllerWorker } from '../../src/workers/controller/index.js';
import type { RunningWorker } from '../../src/workers/listen.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { rspamdMessage } from '../message/fixtures.js';
import { devMessages } from './corpus.js';
import { BAYES_SYMBOLS } from '../../src/modules/bayes/symbols.js';
import { verdictOf } from '../../src/rule-libs/bayes/index.js';

const run = promisify(execFile);
const silent = { debug() {}, info() {}, warn() {}, error() {} };
/** Learns per class before the classifier answers, lowered so the test stays short. */
const MIN_LEARNS = 8;

let dir: string;
let stores: Stores;
let worker: RunningWorker;
let base: string;

before(async () => {
  dir = await makeConfDir({
    'mailsift.yaml': 'workers:\n  controller:\n    bind: "127.0.0.1:0"\n    password: readpass\n    enable_password: enablepass\ndata_dir: data\n',
    'local.d/bayes.yaml': `min_learns: ${MIN_LEARNS}\n`,
  });
  const config = await loadConfig(dir);
  stores = await openStores({ dataDir: join(dir, 'data'), stores: config.stores }, silent);
  const engine = await createEngine(config.engine, builtinModules, { stores });
  worker = await startControllerWorker({ host: '127.0.0.1', port: 0, log: silent, context: { log: silent, config, engine, stores } });
  base = `http://127.0.0.1:${worker.port}`;
});

after(async () => {
  await worker?.close();
  await stores?.close();
  await removeConfDir(dir);
});

async function post(path: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const r = await fetch(base + path, { method: 'POST', body, headers: { Password: 'enablepass', ...headers } });
  return { status: r.status, reason: r.statusText, body: await r.text() };
}

test('rspamc learn_spam succeeds; the same message again is 208 already learned; as ham it relearns', async () => {
  const spam = rspamdMessage('spam.eml');
  const { stdout } = await run('/usr/bin/rspamc', ['-h', `127.0.0.1:${worker.port}`, '-P', 'enablepass', 'learn_spam', join('/work/shared/fixtures/rspamd-test-messages', 'spam.eml')]);
  assert.match(stdout, /success = true/);
  const again = await post('/learnspam', spam);
  assert.equal(again.status, 208);
  assert.equal(again.reason, '<07FDB7CD95416D1EC2C78E3490CA97E8@jbshvnthwigaf.ru> has been already learned as spam, ignore it');
  assert.equal(again.body, `{"error":"${again.reason}"}`);
  const relearn = await post('/learnham', spam);
  assert.equal(relearn.status, 200);
  assert.equal(relearn.body, '{"success":true}');
  const t = await stores.bayes.totals({ classifier: 'bayes', user: '' });
  assert.equal(t.learnsSpam, 0);
  assert.equal(t.learnsHam, 1);
});

test('too few tokens, unknown classifier, empty body, read-only password', async () => {
  const tiny = await post('/learnspam', rspamdMessage('freemail.eml'));
  assert.equal(tiny.status, 204);
  assert.match(tiny.reason, /^<undef> contains less tokens than required for bayes classifier: \d+ < 11$/);
  const unknown = await post('/learnspam', rspamdMessage('spam_message.eml'), { Classifier: 'nosuch' });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.reason, 'cannot find classifier with name nosuch');
  const named = await post('/learnspam', rspamdMessage('spam_message.eml'), { Classifier: 'BAYES' });
  assert.equal(named.status, 200);
  const empty = await post('/learnham', '');
  assert.equal(empty.status, 400);
  assert.equal(empty.reason, 'Empty body is not permitted');
  const ro = await post('/learnham', rspamdMessage('spam_message.eml'), { Password: 'readpass' });
  assert.equal(ro.status, 401);
});

/** One POST on a raw socket; every byte the controller sends until it closes the connection. */
function rawPost(path: string, body: Buffer, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(worker.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    sock.on('error', reject);
    sock.setTimeout(30_000, () => sock.destroy(new Error('no reply in 30 s')));
    let head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    sock.end(Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]));
  });
}

test('a 204 learn refusal ends at its header block: no Content-Length, no body; 208 keeps its body', async () => {
  // Even with gzip asked for: nothing may follow the head of a 204.
  const raw = await rawPost('/learnspam', rspamdMessage('freemail.eml'), { Password: 'enablepass', 'Accept-Encoding': 'gzip' });
  const end = raw.indexOf('\r\n\r\n');
  assert.ok(end > 0, raw);
  const head = raw.slice(0, end);
  assert.match(head, /^HTTP\/1\.1 204 <undef> contains less tokens than required for bayes classifier: \d+ < 11\r\n/);
  assert.doesNotMatch(head, /^content-(length|type|encoding):/im);
  assert.equal(raw.slice(end + 4), '');

  const spam = rspamdMessage('spam_message.eml');
  await rawPost('/learnspam', spam, { Password: 'enablepass', 'Learn-Type': 'bulk' });
  const again = await rawPost('/learnspam', spam, { Password: 'enablepass', 'Learn-Type': 'bulk' });
  const cut = again.indexOf('\r\n\r\n');
  assert.match(again, /^HTTP\/1\.1 208 /);
  const body = again.slice(cut + 4);
  assert.match(again.slice(0, cut), new RegExp(`\r\nContent-Length: ${body.length}\r\n`));
  assert.match(body, /^\{"error":".* has been already learned as spam, ignore it"\}$/);
});

test('/bayes/classifiers lists the classifier', async () => {
  const r = await fetch(`${base}/bayes/classifiers`, { headers: { Password: 'readpass' } });
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { classifiers: [{ name: 'bayes', type: 'binary', per_user: false, classes: ['spam', 'ham'] }] });
});

test('after enough learns a scan carries BAYES_SPAM scaled by confidence', async () => {
  for (const m of devMessages('spam-1', 100, MIN_LEARNS + 4)) {
    const r = await post('/learnspam', m, { 'Learn-Type': 'bulk' });
    assert.ok(r.status === 200 || r.status === 208, `${r.status} ${r.reason}`);
  }
  for (const m of devMessages('easy-ham-1', 100, MIN_LEARNS + 4)) {
    const r = await post('/learnham', m, { 'Learn-Type': 'bulk' });
    assert.ok(r.status === 200 || r.status === 208, `${r.status} ${r.reason}`);
  }
  const config = await loadConfig(dir);
  const engine = await createEngine(config.engine, builtinModules, { stores });
  const [spam] = devMessages('spam-1', 100, 1);
  const r = await engine.scan(spam!, emptyMeta());
  const b = r.symbols.find((s) => s.name === 'BAYES_SPAM');
  assert.ok(b, JSON.stringify(r.symbols.map((s) => s.name)));
  const pct = Number.parseFloat(b.options![0]!);
  assert.match(b.options![0]!, /^\d+\.\d\d%$/);
  const q = 0.5 + pct / 200;
  // The option carries the probability to 0.01 %: enough to recompute the log-odds weight closely.
  const expected = BAYES_SYMBOLS['BAYES_SPAM']!.score! * verdictOf(q)!.weight;
  assert.ok(Math.abs(b.score - expected) < 0.02, `score ${b.score} for ${b.options![0]}, expected ${expected}`);
});

test('mailsiftc learn_ham reads a Maildir and an mbox, and sums up learned, duplicate and failed', async () => {
  const [a, b, c] = devMessages('hard-ham-1', 0, 3);
  const tmp = await makeConfDir({
    'Maildir/cur/1.eml': a!,
    'Maildir/new/2.eml': b!,
    'Maildir/tmp/partial.eml': 'From: x\r\n',
    'box.mbox': Buffer.concat([Buffer.from('From alice@example.org Sat Jan  3 01:05:34 2004\n'), c!, Buffer.from('\nFrom bob@example.org Sat Jan  3 01:05:35 2004\n'), a!]),
  });
  try {
    const cli = join(process.cwd(), 'src/cli/mailsiftc.ts');
    const args = ['--import', 'tsx', cli, '-h', `127.0.0.1:${worker.port}`, '-P', 'enablepass', 'learn_ham', join(tmp, 'Maildir'), join(tmp, 'box.mbox')];
    const r = await run(process.execPath, args).catch((e: { stdout: string; stderr: string; code: number }) => e);
    // a is in the Maildir and again in the mbox: learned once, then a duplicate; tmp/ is skipped.
    assert.equal(r.stdout.trim(), 'learned: 3, skipped as duplicate: 1, refused: 0, failed: 0', r.stderr);
  } finally {
    await removeConfDir(tmp);
  }
});
