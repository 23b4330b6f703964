// A REAL Rspamd 3.4 scanner (the Debian binary) behind mailsift's proxy: the plain leg, the
// encrypted leg (the group's `key` is Rspamd's pubkey) and the zstd leg all get Rspamd's verdict,
// several times in a row so connection reuse meets Rspamd's own keep-alive handling, and /ping.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { base32Encode } from '../../src/core/base32.js';
import { loadKeypair } from '../crypt/fixtures.js';
import { RSPAMD, startRealRspamd, type RealRspamd } from '../crypt/real-rspamd.js';
import { checkv2, header, MESSAGES, rawExchange, startProxy, type TestProxy } from './harness.js';

const skip = existsSync(RSPAMD) ? false : 'rspamd not installed (apt-get install rspamd; .ci/run does)';
const server = loadKeypair('server-keypair.json');
const PUB = base32Encode(server.publicKey);

describe('mailsift proxy → Rspamd 3.4 scanner', { skip }, () => {
  let rspamd: RealRspamd | undefined;
  let proxy: TestProxy | undefined;
  let gtube: Buffer;

  before(async () => {
    gtube = await readFile(`${MESSAGES}/gtube.eml`);
    rspamd = await startRealRspamd({ pubkey: PUB, privkey: base32Encode(server.secretKey) });
    const at = `127.0.0.1:${rspamd.normalPort}`;
    proxy = await startProxy({
      timeout: 30,
      upstreams: { plain: { hosts: at, default: true }, enc: { hosts: at, key: PUB }, zstd: { hosts: at, compression: true } },
    });
  });
  after(async () => {
    await proxy?.close();
    await rspamd?.stop();
  });

  for (const group of ['plain', 'enc', 'zstd']) {
    it(`${group}: Rspamd's verdict, three times in a row`, async () => {
      for (let i = 0; i < 3; i++) {
        const r = await rawExchange(proxy!.port, checkv2(gtube, { Host: group, From: '<a@example.org>' }));
        assert.equal(r.status, 200, r.raw.toString());
        assert.equal(header(r, 'content-type'), 'application/json');
        const body = JSON.parse(r.body.toString()) as { action: string; symbols: Record<string, unknown> };
        assert.equal(body.action, 'reject');
        assert.ok('GTUBE' in body.symbols);
      }
      assert.ok(!proxy!.logs.some((l) => /failed/.test(l.msg)), proxy!.logs.map((l) => l.msg).join('\n'));
    });
  }

  it('/ping is answered by Rspamd through the proxy', async () => {
    const r = await rawExchange(proxy!.port, 'GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString().trim(), 'pong');
  });
});
