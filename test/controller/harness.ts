// Test harness for the controller: a real controller worker on a loopback port, built from a
// real configuration directory, the real stores (SQLite under a temporary data_dir) and the real
// engine; raw-socket requests; and a reader for the golden fixtures of Rspamd 3.4.

import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { loadConfig, type LoadedConfig } from '../../src/config/load.js';
import { createEngine } from '../../src/engine/index.js';
import { builtinModules } from '../../src/modules/index.js';
import { openStores } from '../../src/storage/index.js';
import type { Stores } from '../../src/storage/types.js';
import { startControllerWorker } from '../../src/workers/controller/index.js';
import type { ControllerContext } from '../../src/workers/controller/types.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';

export const FIXTURES = '/work/shared/fixtures/controller';
export const MESSAGES = '/work/shared/fixtures/rspamd-test-messages';

export interface LogRecord {
  level: string;
  msg: string;
  extra?: Record<string, unknown>;
}

/** A logger that keeps what it is told, for assertions on log lines. */
export function recordingLogger(): { log: ControllerContext['log']; lines: LogRecord[] } {
  const lines: LogRecord[] = [];
  const at = (level: string) => (msg: string, extra?: Record<string, unknown>) => void lines.push({ level, msg, ...(extra ? { extra } : {}) });
  return { log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

export interface RunningController {
  port: number;
  config: LoadedConfig;
  stores: Stores;
  lines: LogRecord[];
  close(): Promise<void>;
}

/** `controllerYaml`: the body of `workers.controller` (indented by the caller as YAML flow or block). */
export async function startTestController(controllerYaml: string, extraFiles: Record<string, string> = {}): Promise<RunningController> {
  const yaml = ['workers:', '  normal: { bind: "127.0.0.1:0" }', `  controller: ${controllerYaml}`, 'logging: { level: silent }', 'data_dir: data', ''].join('\n');
  const dir = await makeConfDir({ 'mailsift.yaml': yaml, ...extraFiles });
  const config = await loadConfig(dir);
  const { log, lines } = recordingLogger();
  const stores = await openStores(config, log);
  // The modules get the stores, as in a worker: the Bayes module learns through them.
  const engine = await createEngine(config.engine, builtinModules, { log, stores });
  const context: ControllerContext = { log, config, engine, stores };
  const w = await startControllerWorker({ host: '127.0.0.1', port: 0, log, context, serverName: 'rspamd/3.4' });
  return {
    port: w.port,
    config,
    stores,
    lines,
    async close() {
      await w.close();
      await stores.close();
      await removeConfDir(dir);
    },
  };
}

export interface RawReply {
  statusLine: string;
  status: number;
  reason: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

export function header(r: RawReply, name: string): string | undefined {
  return r.headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

/** Sends bytes as they are and reads the whole reply until the server closes. */
export function rawExchange(port: number, request: Buffer | string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('end', () => {
      const all = Buffer.concat(chunks);
      const sep = all.indexOf('\r\n\r\n');
      if (sep < 0) return reject(new Error(`no header block in reply: ${all.toString('latin1').slice(0, 200)}`));
      const lines = all.subarray(0, sep).toString('latin1').split('\r\n');
      const statusLine = lines.shift()!;
      const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(statusLine);
      if (!m) return reject(new Error(`bad status line ${statusLine}`));
      const headers = lines.map((l): [string, string] => {
        const i = l.indexOf(':');
        return [l.slice(0, i), l.slice(i + 1).trim()];
      });
      resolve({ statusLine, status: Number(m[1]), reason: m[2]!, headers, body: all.subarray(sep + 4) });
    });
    sock.write(request);
  });
}

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Array<[string, string]>;
  body?: Buffer | string;
}

export function request(port: number, spec: RequestSpec): Promise<RawReply> {
  const body = spec.body === undefined ? Buffer.alloc(0) : Buffer.from(spec.body);
  let head = `${spec.method} ${spec.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
  for (const [k, v] of spec.headers ?? []) head += `${k}: ${v}\r\n`;
  if (body.length || spec.method === 'POST') head += `Content-Length: ${body.length}\r\n`;
  return rawExchange(port, Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), body]));
}

export interface Fixture {
  name: string;
  request: RequestSpec;
  /** Expected. */
  status: number;
  reason: string;
  headers: Array<[string, string]>;
  /** Raw body text as recorded (undefined when the file does not show one). */
  body?: string;
}

function fenced(text: string, heading: string): string | undefined {
  const i = text.indexOf(heading);
  if (i < 0) return undefined;
  const start = text.indexOf('```', i);
  const nl = text.indexOf('\n', start);
  const end = text.indexOf('\n```', nl);
  return text.slice(nl + 1, end);
}

/** Reads one golden fixture: the request as sent (message bodies loaded from the corpus) and the reply. */
export function readFixture(name: string): Fixture {
  const text = readFileSync(join(FIXTURES, `${name}.md`), 'utf8');
  const reqText = fenced(text, '## Request')!;
  const [head, ...rest] = reqText.split('\n\n');
  const reqLines = head!.split('\n');
  const [method, path] = reqLines.shift()!.split(' ') as [string, string];
  const headers = reqLines
    .filter((l) => l.includes(':'))
    .map((l): [string, string] => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()])
    .filter(([k]) => !['host', 'connection', 'content-length'].includes(k.toLowerCase()));
  let body: Buffer | string | undefined;
  const bodyText = rest.join('\n\n');
  const note = /<body: contents of test\/functional\/messages\/([^ ]+) \(/.exec(bodyText);
  if (note) body = readFileSync(join(MESSAGES, note[1]!));
  else if (bodyText.trim()) body = bodyText.replace(/\n$/, '');
  const respHead = fenced(text, '## Response (raw status line and headers)')!.split('\n').filter(Boolean);
  const statusLine = respHead.shift()!;
  const m = /^HTTP\/1\.1 (\d{3}) ?(.*)$/.exec(statusLine)!;
  const respHeaders = respHead.map((l): [string, string] => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]);
  const rawBody = fenced(text, '## Response body (raw bytes as received)');
  return {
    name,
    request: { method, path, headers, ...(body !== undefined ? { body } : {}) },
    status: Number(m[1]),
    reason: m[2]!,
    headers: respHeaders,
    ...(rawBody !== undefined ? { body: rawBody } : {}),
  };
}

/** The JSON "shape" of a value: types, object keys (sorted), first element of arrays. */
export function shapeOf(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length ? [shapeOf(v[0])] : [];
  if (typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) o[k] = shapeOf((v as Record<string, unknown>)[k]);
    return o;
  }
  return typeof v;
}
