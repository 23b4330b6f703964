// Rspamd 3.4's own proxy (the Debian binary, HTTP mode: `milter = no`) in front of a mailsift
// worker on loopback. A loopback upstream is "local" to 3.4, so the proxy does not send the
// message: it sends `GET /checkv2` with an empty body and `Shm`, `Shm-Offset`, `Shm-Length`
// naming the shared-memory segment that holds it (proxy-milter.md §3.7). Before mailsift read
// Shm, it scanned the empty body and GTUBE passed as `no action`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { ScanInfo } from '../../src/observability/scan-observer.js';
import { freePort, RSPAMD, startRspamd, type RspamdInstance } from '../helpers/real-rspamd.js';
import { startRealWorker } from '../protocol/harness.js';
import { parseTextOutput, run } from './run.js';

const RSPAMC = '/usr/bin/rspamc';
const MESSAGES = '/work/shared/fixtures/scan/messages';
const GTUBE = `${MESSAGES}/gtube.eml`;
const HAM = `${MESSAGES}/ham.eml`;
const skip = existsSync(RSPAMD) && existsSync(RSPAMC) ? false : 'rspamd/rspamc not installed (apt-get install rspamd; .ci/run does)';

/** What the mailsift worker saw of each scan: the hand-over headers and the message size. */
interface Seen {
  shm?: string;
  contentLength?: string;
  bytes: number;
  messageId?: string;
}

describe('rspamc → Rspamd 3.4 proxy → mailsift (shared-memory hand-over)', { skip }, () => {
  let proxy: RspamdInstance | undefined;
  let proxyPort = 0;
  let workerPort = 0;
  let closeWorker: (() => Promise<void>) | undefined;
  const seen: Seen[] = [];

  before(async () => {
    const w = await startRealWorker({
      onScan: (info: ScanInfo) => {
        const shm = info.meta.requestHeaders.get('shm')?.[0];
        const contentLength = info.meta.requestHeaders.get('content-length')?.[0];
        seen.push({
          ...(shm !== undefined ? { shm } : {}),
          ...(contentLength !== undefined ? { contentLength } : {}),
          bytes: info.message.length,
          ...(info.result.messageId !== undefined ? { messageId: info.result.messageId } : {}),
        });
      },
    });
    workerPort = w.port;
    closeWorker = () => w.close();
    proxyPort = await freePort();
    proxy = await startRspamd({
      workers: [
        `worker "rspamd_proxy" {
  bind_socket = "127.0.0.1:${proxyPort}";
  count = 1;
  milter = no;
  timeout = 60s;
  max_retries = 1;
  upstream "local" { default = yes; hosts = "127.0.0.1:${workerPort}"; }
}`,
      ],
      ports: [proxyPort],
    });
  });
  after(async () => {
    await proxy?.stop();
    await closeWorker?.();
  });

  const rspamc = (port: number, args: string[]) => run(RSPAMC, ['-h', `127.0.0.1:${port}`, ...args]);
  /** The scans mailsift ran while `fn` ran. */
  const during = async <T>(fn: () => Promise<T>): Promise<{ value: T; scans: Seen[] }> => {
    const from = seen.length;
    const value = await fn();
    return { value, scans: seen.slice(from) };
  };

  it('GTUBE through the proxy is rejected, and mailsift got it through Shm with an empty body', async () => {
    const { value: r, scans } = await during(() => rspamc(proxyPort, [GTUBE]));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const v = parseTextOutput(r.stdout);
    assert.equal(v.action, 'reject', r.stdout);
    assert.ok(v.symbols.has('GTUBE'), r.stdout);
    assert.equal(v.messageId, 'GTUBE1.1010101@example.net');
    assert.equal(scans.length, 1, 'one scan reached mailsift');
    const s = scans[0]!;
    assert.match(s.shm ?? '', /^\/rhm\.[0-9a-f]+$/, 'the proxy named its shared-memory segment');
    assert.equal(s.contentLength, '0', 'and sent no body');
    assert.equal(s.bytes, readFileSync(GTUBE).length, 'the whole message was read from the segment');
  });

  it('a ham message through the proxy gets the same scan as sent directly, not an empty-message scan', async () => {
    const { value: viaProxy, scans } = await during(() => rspamc(proxyPort, [HAM]));
    const direct = await rspamc(workerPort, [HAM]);
    assert.equal(viaProxy.code, 0, viaProxy.stdout + viaProxy.stderr);
    assert.equal(direct.code, 0, direct.stdout + direct.stderr);
    const p = parseTextOutput(viaProxy.stdout);
    const d = parseTextOutput(direct.stdout);
    assert.ok(p.symbols.size > 0, `symbols expected: ${viaProxy.stdout}`);
    assert.notEqual(p.messageId, 'undef', 'the message was parsed (it has a Message-ID)');
    assert.equal(p.messageId, d.messageId);
    assert.deepEqual([...p.symbols.keys()].sort(), [...d.symbols.keys()].sort(), 'same symbols as a direct scan');
    assert.equal(p.action, d.action);
    assert.equal(p.score, d.score);
    assert.match(scans[0]?.shm ?? '', /^\/rhm\./);
    assert.equal(scans[0]?.bytes, readFileSync(HAM).length);
  });

  it('rspamc -z through the proxy: the compressed segment is decompressed (Rspamd 3.4 scans the zstd bytes)', async () => {
    const { value: r, scans } = await during(() => rspamc(proxyPort, ['-z', GTUBE]));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const v = parseTextOutput(r.stdout);
    assert.equal(v.action, 'reject', r.stdout);
    assert.ok(v.symbols.has('GTUBE'), r.stdout);
    assert.match(scans[0]?.shm ?? '', /^\/rhm\./);
    assert.equal(scans[0]?.bytes, readFileSync(GTUBE).length, 'the decompressed message was scanned');
  });
});
