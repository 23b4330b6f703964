// A real mailsift scan worker for client and interop tests: the shipped conf/, the real engine
// and built-in modules, listening on a free loopback port in this process.
import type { AddressInfo } from 'node:net';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { createLogger } from '../../src/observability/log.js';
import { startNormalWorker } from '../../src/workers/normal.js';

export interface TestWorker {
  host: string;
  port: number;
  /** `host:port`, the form `-h` and ScanClient take. */
  server: string;
  close(): Promise<void>;
}

/** Whatever startNormalWorker returns: a server, or an object holding one; read its bound port. */
function boundPort(handle: unknown): number {
  const h = handle as { address?: unknown; server?: { address?: () => unknown }; port?: unknown };
  const raw = typeof h.address === 'function' ? (h.address as () => unknown).call(handle) : (h.address ?? h.server?.address?.());
  const info = raw as Partial<AddressInfo> | null | undefined;
  if (info && typeof info === 'object' && typeof info.port === 'number') return info.port;
  if (typeof h.port === 'number') return h.port;
  throw new Error('cannot tell which port the normal worker bound');
}

/** Close a worker handle whether its close() returns a promise or takes a callback (node:http.Server). */
function closeHandle(handle: unknown): Promise<void> {
  const h = handle as { close(cb?: (err?: Error) => void): unknown; closeAllConnections?: () => void; server?: { closeAllConnections?: () => void } };
  return new Promise<void>((resolve, reject) => {
    const ret = h.close((err?: Error) => (err ? reject(err) : resolve()));
    if (ret instanceof Promise) ret.then(() => resolve(), reject);
    // Kept-alive client sockets would otherwise hold node:http's close() open.
    h.closeAllConnections?.();
    h.server?.closeAllConnections?.();
  });
}

/**
 * Start a worker on the shipped conf/, or on a private copy of it with extra `local.d/<name>`
 * files (e.g. a milter_headers footer, so the body-block path has a real rewrite to carry).
 */
export async function startTestWorker(localD: Record<string, string> = {}): Promise<TestWorker> {
  let dir = 'conf';
  let cleanup = async (): Promise<void> => undefined;
  if (Object.keys(localD).length) {
    dir = await mkdtemp(join(tmpdir(), 'mailsift-test-conf-'));
    const made = dir;
    cleanup = () => rm(made, { recursive: true, force: true });
    await cp('conf', dir, { recursive: true });
    await mkdir(join(dir, 'local.d'), { recursive: true });
    for (const [name, text] of Object.entries(localD)) await writeFile(join(dir, 'local.d', name), text);
  }
  const cfg = await loadConfig(dir);
  const scanner = await createEngine(cfg.engine, builtinModules);
  const w = cfg.workers.normal;
  const handle = await startNormalWorker({
    host: '127.0.0.1',
    port: 0,
    scanner,
    maxMessage: w.maxMessage,
    dictionaries: w.dictionaries,
    legacyCompat: w.legacyCompat,
    log: createLogger({ level: 'silent' }).child('normal'),
  });
  const port = boundPort(handle);
  return {
    host: '127.0.0.1',
    port,
    server: `127.0.0.1:${port}`,
    close: async () => {
      await closeHandle(handle);
      await cleanup();
    },
  };
}
