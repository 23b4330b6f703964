// mailsift's client against a REAL Rspamd 3.4 with the same keypair: `mailsiftc --key` scans
// (text, JSON, zstd) and ScanClient pings the controller, all HTTP-encrypted; a wrong key gives
// a clear error (Rspamd closes the connection or answers in plaintext).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { base32Encode } from '../../src/core/base32.js';
import { ScanClient, isScanClientError } from '../../src/client/index.js';
import { mailsiftc, parseTextOutput } from '../interop/run.js';
import { loadKeypair } from './fixtures.js';
import { RSPAMD, startRealRspamd, type RealRspamd } from './real-rspamd.js';

const skip = existsSync(RSPAMD) ? false : 'rspamd not installed (apt-get install rspamd; .ci/run does)';
const GTUBE = '/work/shared/fixtures/scan/messages/gtube.eml';
const server = loadKeypair('server-keypair.json');
const PUB = base32Encode(server.publicKey);
const WRONG_PUB = base32Encode(loadKeypair('wrong-keypair.json').publicKey);

let rspamd: RealRspamd | undefined;

before(async () => {
  if (!skip) rspamd = await startRealRspamd({ pubkey: PUB, privkey: base32Encode(server.secretKey) });
});
after(async () => {
  await rspamd?.stop();
});

describe('mailsiftc --key against a real rspamd 3.4', { skip }, () => {
  it('scans a message (rspamd decrypts our request, we decrypt its reply)', async () => {
    const r = await mailsiftc(['-h', `127.0.0.1:${rspamd!.normalPort}`, '--key', PUB, GTUBE]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const v = parseTextOutput(r.stdout);
    assert.equal(v.action, 'reject');
    assert.ok(v.symbols.has('GTUBE'), r.stdout);
    assert.equal(v.messageId, 'GTUBE1.1010101@example.net');
    assert.match(await rspamd!.log(), /<[^>]+>; task; rspamd_task_write_log: id: <GTUBE1\.1010101@example\.net>/, 'rspamd logged the scan');
  });

  it('-j and -z (zstd inside the envelope)', async () => {
    const r = await mailsiftc(['-h', `127.0.0.1:${rspamd!.normalPort}`, '--key', PUB, '-j', '-z', GTUBE]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const result = JSON.parse(r.stdout) as { action: string; symbols: Record<string, unknown> };
    assert.equal(result.action, 'reject');
    assert.ok('GTUBE' in result.symbols);
  });

  it('ScanClient pings the controller encrypted', async () => {
    const client = new ScanClient({ server: `127.0.0.1:${rspamd!.controllerPort}`, key: PUB });
    try {
      assert.equal(await client.ping(), 'pong');
    } finally {
      client.close();
    }
  });

  it('a wrong key: the normal worker hangs up, the controller answers in plaintext; both reported', async () => {
    const normal = new ScanClient({ server: `127.0.0.1:${rspamd!.normalPort}`, key: WRONG_PUB, timeoutMs: 5000 });
    const controller = new ScanClient({ server: `127.0.0.1:${rspamd!.controllerPort}`, key: WRONG_PUB, timeoutMs: 5000 });
    try {
      await assert.rejects(normal.scan(Buffer.from('Subject: x\r\n\r\nhello\r\n')), (e: unknown) => isScanClientError(e) && /closed the connection without a reply/.test(e.message));
      await assert.rejects(controller.ping(), (e: unknown) => isScanClientError(e) && /cannot decrypt the reply .*outer status 500/.test(e.message));
    } finally {
      normal.close();
      controller.close();
    }
    assert.match(await rspamd!.log(), /cannot decrypt message/);
  });
});
