// `mailsift serve --single` with `workers.fuzzy` enabled: the storage worker answers the UDP
// protocol from the embedded SQLite FuzzyStore, and stops with the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseMessage } from '../../src/message/parse-message.js';
import { exchange, randomTag } from '../../src/rule-libs/fuzzy/client.js';
import { messageHashes } from '../../src/rule-libs/fuzzy/message-hashes.js';
import { compileRule } from '../../src/rule-libs/fuzzy/rule.js';
import { FuzzyCheckConfig } from '../../src/rule-libs/fuzzy/rule-config.js';
import { FUZZY_CHECK, FUZZY_WRITE, type FuzzyCommand } from '../../src/rule-libs/fuzzy/wire.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli } from '../cli/run-cli.js';
import { freeUdpPort } from './rspamd-instance.js';

test('serve --single runs the fuzzy storage worker on the SQLite store', async () => {
  const port = await freeUdpPort();
  const yaml = ['workers:', '  normal: { bind: "127.0.0.1:0" }', '  controller: { enabled: false }', `  fuzzy: { enabled: true, bind: "127.0.0.1:${port}" }`, 'data_dir: data', ''].join('\n');
  const dir = await makeConfDir({ 'mailsift.yaml': yaml });
  const srv = runCli(['serve', '--single', '-c', dir]);
  try {
    const line = await srv.waitFor((l) => l.worker === 'fuzzy' && l.port === port, 'the fuzzy listener');
    assert.match(line.msg, /fuzzy storage listening on udp/);
    const cfg = FuzzyCheckConfig.parse({ rules: { r: { servers: `127.0.0.1:${port}` } } });
    const [h] = messageHashes(parseMessage(readFileSync('/work/shared/fixtures/rspamd-test-messages/ham.eml')), compileRule('r', cfg.rules['r']!, cfg));
    assert.ok(h?.shingles);
    const server = { host: '127.0.0.1', port };
    const io = { timeoutMs: 1000, retransmits: 2 };
    const w: FuzzyCommand = { version: 4, cmd: FUZZY_WRITE, flag: 3, value: 2, tag: randomTag(), digest: h.digest, shingles: h.shingles };
    assert.equal((await exchange(server, [w], io)).replies.get(w.tag)?.value, 0);
    // Same shingles, another digest: found through the shingles with the stored digest.
    const c: FuzzyCommand = { version: 4, cmd: FUZZY_CHECK, flag: 0, value: 0, tag: randomTag(), digest: Buffer.alloc(64, 7), shingles: h.shingles };
    const r = (await exchange(server, [c], io)).replies.get(c.tag);
    assert.ok(r, 'a reply');
    assert.equal(r.flag, 3);
    assert.equal(r.value, 2);
    assert.equal(r.prob, 1);
    assert.ok(r.digest?.equals(h.digest));
    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0, srv.output());
  } finally {
    srv.child.kill('SIGKILL');
    await removeConfDir(dir);
  }
});
