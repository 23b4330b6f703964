// End to end: `mailsift serve` with local.d/antivirus.yaml, a private clamd, and Rspamd's own
// client (rspamc) scanning a real message: the reply carries CLAM_VIRUS, the reject and its
// SMTP text, as an MTA would read them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hashSignature, startClamd, type Clamd } from '../helpers/clamd.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { testMessage } from './helpers.js';

const run = promisify(execFile);
const INFECTED = testMessage('exe_attm.eml');
const ATTACHMENT = Buffer.from(/BASE64\r?\n\r?\n([A-Za-z0-9+/=\r\n]+?)\r?\n\r?\n/.exec(INFECTED.toString('latin1'))![1]!, 'base64');

let clamd: Clamd;
let server: ServerProcess;
let dir: string;

before(async () => {
  clamd = await startClamd({ 'test.hdb': [hashSignature('Mailsift.Serve.Exe', ATTACHMENT)] });
  server = await startServerProcess('', { 'antivirus.yaml': `rules:\n  clamav:\n    servers: "127.0.0.1:${clamd.port}"\n    action: reject\n    max_size: 10M\n` });
  dir = await mkdtemp(join(tmpdir(), 'mailsift-av-'));
});

after(async () => {
  await server?.close();
  await clamd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function rspamc(message: Buffer): Promise<Record<string, unknown>> {
  const file = join(dir, `m${Date.now()}.eml`);
  await writeFile(file, message);
  const { stdout } = await run('rspamc', ['-h', `127.0.0.1:${server.normalPort}`, '-j', file], { timeout: 20_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

test('rspamc: an infected attachment is rejected with the scanner text', async () => {
  const r = await rspamc(INFECTED);
  const symbols = r['symbols'] as Record<string, { options?: string[]; score: number }>;
  assert.deepEqual(symbols['CLAM_VIRUS']?.options, ['Mailsift.Serve.Exe.UNOFFICIAL']);
  assert.equal(r['action'], 'reject');
  assert.equal((r['messages'] as Record<string, string>)['smtp_message'], 'clamav: virus found: "Mailsift.Serve.Exe.UNOFFICIAL"');
});

test('rspamc: a clean message passes the scanner untouched', async () => {
  const r = await rspamc(testMessage('fname.eml'));
  const symbols = r['symbols'] as Record<string, unknown>;
  assert.ok(!('CLAM_VIRUS' in symbols) && !('CLAM_VIRUS_FAIL' in symbols), JSON.stringify(symbols));
  assert.notEqual(r['action'], 'reject');
});
