// Issue: mailauth 4.13 prints `TOTAL <hashed> EXPECTING <l>` with console.log for every DKIM
// signature whose l= differs from the body it hashed, and the server's stdout is its log stream
// (one JSON record per line). A real server in a child process scans such messages; its stdout
// must stay records only, and the DKIM check must still have run on them.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startDnsServer, type DnsTestServer } from '../helpers/dns-server.js';
import { httpCall, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/** A message whose DKIM-Signature claims l=100000 bytes of a body of a few dozen. */
function overlongL(n: number): Buffer {
  return Buffer.from(
    'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org; s=sel; l=100000;\r\n' +
      '\th=from:subject; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=dGVzdA==\r\n' +
      `From: a@example.org\r\nTo: b@example.net\r\nSubject: l= check ${n}\r\nMessage-ID: <l-${n}@example.org>\r\n\r\n` +
      `a short body ${n}\r\n`,
  );
}

describe('console output of libraries in a server process', () => {
  let dns: DnsTestServer;
  let srv: ServerProcess;
  before(async () => {
    // Every lookup answered at once (NXDOMAIN) so the scans do not wait on the network.
    dns = await startDnsServer({ zone: {} });
    srv = await startServerProcess(`dns: { nameserver: ["${dns.address}"], timeout: 1, retransmits: 0 }`);
  });
  after(async () => {
    await srv?.close();
    await dns?.close();
  });

  it('a DKIM signature with an l= past the body leaves stdout JSON records only', { timeout: 120_000 }, async () => {
    for (let i = 0; i < 3; i++) {
      const r = await httpCall(srv.normalPort, 'POST', '/checkv2', overlongL(i), { IP: '192.0.2.1' });
      assert.equal(r.status, 200, r.body.toString());
      const symbols = (JSON.parse(r.body.toString()) as { symbols: Record<string, unknown> }).symbols;
      // The signature was verified (and its body hash refused): mailauth's code path ran.
      assert.ok('R_DKIM_REJECT' in symbols, Object.keys(symbols).join(' '));
    }
    // Records are written before the reply; a moment for the pipe to deliver them.
    await new Promise((r) => setTimeout(r, 200));
    const out = srv.output();
    assert.doesNotMatch(out, /TOTAL/);
    for (const line of out.split('\n')) {
      if (line.trim() === '') continue;
      assert.doesNotThrow(() => JSON.parse(line), `not a log record: ${line}`);
    }
    assert.ok(srv.alive(), out);
  });
});
