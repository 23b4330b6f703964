// Rspamd's own client against the controller: `rspamc stat`, `counters`, `uptime`, `stat_reset`
// with the enable password, and a refusal with a wrong one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { FLUSH_INTERVAL_MS } from '../../src/observability/stats-recorder.js';
import { MESSAGES, request, startTestController } from './harness.js';

const run = promisify(execFile);
const RSPAMC = '/usr/bin/rspamc';

test('rspamc stat / counters / uptime / stat_reset against the controller', async () => {
  const ctl = await startTestController('{ bind: "127.0.0.1:0", password: readpass, enable_password: enablepass }');
  try {
    const rspamc = async (password: string, ...cmd: string[]) =>
      (await run(RSPAMC, ['-h', `127.0.0.1:${ctl.port}`, '-P', password, ...cmd], { encoding: 'utf8', timeout: 20_000 })).stdout;
    for (const m of ['gtube.eml', 'ham.eml']) {
      const r = await request(ctl.port, { method: 'POST', path: '/checkv2', headers: [['Password', 'readpass']], body: readFileSync(`${MESSAGES}/${m}`) });
      assert.equal(r.status, 200);
    }
    await new Promise((r) => setTimeout(r, FLUSH_INTERVAL_MS + 100));
    const stat = await rspamc('enablepass', 'stat');
    assert.match(stat, /Messages scanned: 2\n/);
    assert.match(stat, /Statfile: BAYES_SPAM/);
    const counters = await rspamc('readpass', 'counters');
    assert.match(counters, /\|\s+GTUBE\s+\|[^\n]*\|\s+1\s+\|/, 'GTUBE hit once');
    assert.match(await rspamc('readpass', 'uptime'), /Uptime: \d+ second/);
    assert.match(await rspamc('enablepass', 'stat_reset'), /Messages scanned: 2\n/, 'stat_reset prints the counts before the reset');
    assert.match(await rspamc('readpass', 'stat'), /Messages scanned: 0\n/);
    const refused = await rspamc('wrongpass', 'stat').catch((e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`);
    assert.match(refused, /401|Unauthorized/);
  } finally {
    await ctl.close();
  }
});
