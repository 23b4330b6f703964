// The learn conditions on a real server (`mailsift serve --single`, SQLite store, real HTTP and
// the real rspamc and mailsiftc): a message the classifier already puts in the class it is taught
// is refused with 204 and a reason saying so; `Learn-Type: bulk` (mailsiftc --bulk) learns it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { httpCall, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { devMessages } from './corpus.js';

const run = promisify(execFile);
/** Learns per class before the classifier answers (and so before the conditions can refuse), lowered to keep the test short. */
const MIN_LEARNS = 8;
/** The reply text of a refusal by the learn conditions, with the classifier's certainty. */
const REFUSAL = /^all learn conditions denied learning (spam|ham) in bayes: already in class \1; probability (\d+\.\d\d)%$/;

let server: ServerProcess;
let tmp: string;
const spam = devMessages('spam-1', 0, MIN_LEARNS);
const ham = devMessages('easy-ham-1', 0, MIN_LEARNS);

/** The same message with another Message-ID and one more line: not a repeat for the learn cache, but no news to the classifier. */
function variant(msg: Buffer, tag: string): Buffer {
  const text = msg.toString('latin1').replace(/^Message-Id:[^\n]*\n/im, '');
  return Buffer.from(`Message-ID: <${tag}@variant.test>\n${text}\n${tag}\n`, 'latin1');
}

function learn(cls: 'spam' | 'ham', body: Buffer, headers: Record<string, string> = {}) {
  return httpCall(server.controllerPort, 'POST', cls === 'spam' ? '/learnspam' : '/learnham', body, { 'User-Agent': 'rspamc', ...headers });
}

/** A 204 carries no body: the reason is the status line's reason phrase, read off the raw reply. */
async function refusalReason(cls: 'spam' | 'ham', body: Buffer): Promise<{ status: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.controllerPort, method: 'POST', path: cls === 'spam' ? '/learnspam' : '/learnham', agent: false, headers: { 'User-Agent': 'rspamc' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '' }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

before(async () => {
  server = await startServerProcess('', { 'bayes.yaml': `min_learns: ${MIN_LEARNS}\n` });
  tmp = await makeConfDir({});
  // Below min_learns nothing is classified, so nothing can be refused: all of these learn.
  for (let i = 0; i < MIN_LEARNS; i++) {
    for (const [cls, msg] of [['spam', spam[i]!], ['ham', ham[i]!]] as const) {
      const r = await learn(cls, msg);
      assert.equal(r.status, 200, `${cls} ${i}: ${r.body.toString()}`);
    }
  }
});

after(async () => {
  await server?.close();
  await removeConfDir(tmp);
});

test('a spam the classifier is already sure of is refused with 204 and the reason; Learn-Type: bulk learns it', async () => {
  const msg = variant(spam[0]!, 'spam-variant-http');
  const refused = await refusalReason('spam', msg);
  assert.equal(refused.status, 204);
  const m = REFUSAL.exec(refused.reason);
  assert.ok(m, refused.reason);
  assert.ok(Number(m[2]) >= 90, `certainty ${m[2]} % is past the 95 % guard`);

  const bulk = await learn('spam', msg, { 'Learn-Type': 'bulk' });
  assert.equal(bulk.status, 200, bulk.body.toString());
  assert.equal(bulk.body.toString(), '{"success":true}');
  // Stored: the learn cache now knows it as spam.
  const again = await learn('spam', msg, { 'Learn-Type': 'bulk' });
  assert.equal(again.status, 208);
  assert.match(again.body.toString(), /has been already learned as spam, ignore it/);
});

test('the same for ham, and a message the classifier does not yet place is learned without bulk', async () => {
  const known = variant(ham[1]!, 'ham-variant-http');
  const refused = await refusalReason('ham', known);
  assert.equal(refused.status, 204);
  assert.match(refused.reason, REFUSAL);
  assert.match(refused.reason, /learning ham in bayes: already in class ham/);
  // A ham taught as spam is news to the classifier: the conditions let it through.
  const relabelled = await learn('spam', variant(ham[2]!, 'ham-taught-as-spam'));
  assert.equal(relabelled.status, 200, relabelled.body.toString());
});

test('rspamc learn_spam gets the refusal; mailsiftc counts it as refused with its reason, and --bulk learns it', async () => {
  const file = join(tmp, 'known-spam.eml');
  await writeFile(file, variant(spam[3]!, 'spam-variant-cli'));
  const rspamc = await run('/usr/bin/rspamc', ['-h', `127.0.0.1:${server.controllerPort}`, 'learn_spam', file]).catch((e: { stdout: string; stderr: string }) => e);
  assert.doesNotMatch(rspamc.stdout, /success = true/, rspamc.stdout);

  const cli = join(process.cwd(), 'src/cli/mailsiftc.ts');
  const base = ['--import', 'tsx', cli, '-h', `127.0.0.1:${server.controllerPort}`, 'learn_spam'];
  const plain = await run(process.execPath, [...base, file]);
  assert.equal(plain.stdout.trim(), 'learned: 0, skipped as duplicate: 0, refused: 1, failed: 0');
  assert.match(plain.stderr, /known-spam\.eml: not learned: all learn conditions denied learning spam in bayes: already in class spam; probability \d+\.\d\d%/);
  const bulk = await run(process.execPath, [...base, '--bulk', file]);
  assert.equal(bulk.stdout.trim(), 'learned: 1, skipped as duplicate: 0, refused: 0, failed: 0', bulk.stderr);
});
