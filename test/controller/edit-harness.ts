// A real controller (and optionally a normal worker) for the editing tests: a temporary config
// directory, real SQLite stores, an engine with a test plugin module that uses maps the way a
// user's plugin would, and a raw HTTP client that shows status lines and headers as sent.

import { connect } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadConfig, type LoadedConfig } from '../../src/config/load.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createMapRegistry } from '../../src/maps/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { defineModule, type Logger, type MapHandle } from '../../src/plugin-api/index.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/storage/types.js';
import { startControllerWorker } from '../../src/workers/controller/index.js';
import { startDynamicSync, type DynamicSync } from '../../src/workers/dynamic-config.js';
import type { RunningWorker } from '../../src/workers/listen.js';
import { startNormalWorker } from '../../src/workers/normal.js';

export const READ_PASS = 'readpass';
export const ENABLE_PASS = 'enablepass';

export const quietLog: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A user-style plugin: two file maps (sender domains, client IPs) declared in setup and read
 * in a callback, as a multimap rule would.
 */
export function localMapsModule() {
  let from: MapHandle | undefined;
  let ip: MapHandle | undefined;
  return defineModule({
    name: 'local_maps_test',
    symbols: {
      LOCAL_FROM_LISTED: { score: 3.5, group: 'local', description: 'Sender domain in the local map' },
      LOCAL_IP_LISTED: { score: 2, group: 'local', description: 'Client IP in the local map' },
    },
    async setup(ctx) {
      from = await ctx.maps.add({ url: 'maps/local_from.map', kind: 'hash', description: 'Local test sender map' });
      ip = await ctx.maps.add({ url: 'radix;maps/local_ip.map', description: 'Local test IP map' });
      ctx.symbol({
        name: 'LOCAL_MAPS_CHECK',
        inserts: ['LOCAL_FROM_LISTED', 'LOCAL_IP_LISTED'],
        check(task) {
          const domain = task.envelopeFrom?.domain;
          if (domain && from!.has(domain)) task.insert('LOCAL_FROM_LISTED', from!.weight(domain) ?? 1, [domain]);
          const addr = task.meta.ip;
          if (addr && ip!.has(addr)) task.insert('LOCAL_IP_LISTED', 1, [addr]);
        },
      });
    },
  });
}

export interface Rig {
  dir: string;
  cfg: LoadedConfig;
  controllerPort: number;
  controllerEngine: Engine;
  stores: Stores;
  /** Present when started with `worker: true`: a normal worker with its own engine and store connection. */
  workerPort?: number;
  workerEngine?: Engine;
  close(): Promise<void>;
}

export interface RigOptions {
  extraYaml?: string;
  /** Extra `workers.controller` keys, e.g. `static_dir: site`. */
  controllerYaml?: string[];
  /** Leave out the passwords (an open controller). */
  noPasswords?: boolean;
  files?: Record<string, string>;
  worker?: boolean;
}

export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-edit-'));
  const files: Record<string, string> = {
    'mailsift.yaml': [
      'workers:',
      '  normal: { bind: "127.0.0.1:0" }',
      '  controller:',
      '    bind: "127.0.0.1:0"',
      ...(opts.noPasswords ? [] : [`    password: ${READ_PASS}`, `    enable_password: ${ENABLE_PASS}`]),
      ...(opts.controllerYaml ?? []).map((l) => `    ${l}`),
      'data_dir: data',
      'logging: { level: silent }',
      opts.extraYaml ?? '',
    ].join('\n'),
    'maps/local_from.map': '# test sender map\nspammer.example\nweighted.example 2\n',
    'maps/local_ip.map': '# test ip map\n192.0.2.1\n10.1.2.3\n',
    ...opts.files,
  };
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  const cfg = await loadConfig(dir);
  const closers: Array<() => Promise<void> | void> = [];
  const newEngine = async (stores: Stores) => {
    const maps = createMapRegistry({ baseDir: dir, log: quietLog });
    closers.push(() => maps.close());
    return createEngine(cfg.engine, [...builtinModules, localMapsModule()], { log: quietLog, stores, maps });
  };
  const stores = await openStores(cfg, quietLog);
  const controllerEngine = await newEngine(stores);
  const ctl: RunningWorker = await startControllerWorker({ host: '127.0.0.1', port: 0, log: quietLog, context: { log: quietLog, config: cfg, engine: controllerEngine, stores } });
  closers.push(() => ctl.close());
  const rig: Rig = { dir, cfg, controllerPort: ctl.port, controllerEngine, stores, close: async () => undefined };
  if (opts.worker) {
    // Another worker: its own store connection and engine, kept in step only by the KvStore.
    const wStores = await openStores(cfg, quietLog);
    const wEngine = await newEngine(wStores);
    const sync: DynamicSync = startDynamicSync({ engine: wEngine, kv: wStores.kv, log: quietLog });
    const w = await startNormalWorker({ host: '127.0.0.1', port: 0, scanner: wEngine, maxMessage: 10 * 1024 * 1024, log: quietLog });
    closers.push(() => sync.stop(), () => w.close(), () => wStores.close());
    rig.workerPort = w.port;
    rig.workerEngine = wEngine;
  }
  closers.push(() => stores.close());
  rig.close = async () => {
    for (const c of closers.reverse()) await c();
    await rm(dir, { recursive: true, force: true });
  };
  return rig;
}

export interface RawReply {
  status: number;
  reason: string;
  headers: Map<string, string>;
  body: Buffer;
}

/** One request on a fresh connection; the reply is read until the server closes. */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body: Buffer | string = ''): Promise<RawReply> {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  if (b.length > 0 || method === 'POST') head += `Content-Length: ${b.length}\r\n`;
  head += '\r\n';
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('end', () => {
      const all = Buffer.concat(chunks);
      const sep = all.indexOf('\r\n\r\n');
      const lines = all.subarray(0, sep).toString('latin1').split('\r\n');
      const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0]!);
      if (!m) return reject(new Error(`bad status line: ${lines[0]}`));
      const hs = new Map<string, string>();
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        hs.set(l.slice(0, i).toLowerCase(), l.slice(i + 1).trim());
      }
      resolve({ status: Number(m[1]), reason: m[2]!, headers: hs, body: all.subarray(sep + 4) });
    });
    sock.end(Buffer.concat([Buffer.from(head, 'latin1'), b]));
  });
}

/** A scan through /checkv2 on a normal worker, as a client sends it. */
export async function scanV2(port: number, message: string, headers: Record<string, string> = {}): Promise<{ action: string; score: number; required_score: number; symbols: Record<string, { score: number }> }> {
  const r = await rawRequest(port, 'POST', '/checkv2', headers, message);
  if (r.status !== 200) throw new Error(`scan failed: ${r.status} ${r.body.toString()}`);
  return JSON.parse(r.body.toString()) as never;
}
