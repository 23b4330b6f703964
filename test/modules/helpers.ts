// Shared by the module tests: a real engine with the built-in modules, fixture messages, and
// the symbols Rspamd 3.4 reported for the same requests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.js';
import type { EngineConfig } from '../../src/engine/contract.js';
import { builtinModules } from '../../src/modules/index.js';
import { loadConfig } from '../../src/config/load.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { emptyMeta } from '../../src/plugin-api/index.js';
import type { ScanMeta, ScanResult } from '../../src/plugin-api/index.js';

export const FIXTURES = '/work/shared/fixtures';
export const SCAN_FIXTURES = join(FIXTURES, 'scan');

export function fixtureMessage(name: string): Buffer {
  return readFileSync(join(SCAN_FIXTURES, 'messages', name));
}

export function testMessage(name: string): Buffer {
  return readFileSync(join(FIXTURES, 'rspamd-test-messages', name));
}

export function engineConfig(modules: Record<string, Record<string, unknown>> = {}): EngineConfig {
  return {
    actions: { reject: { threshold: 15 }, 'add header': { threshold: 6 }, greylist: { threshold: 4 } },
    subjectTemplate: '*** SPAM *** %s',
    groups: {},
    symbols: {},
    composites: [],
    settings: [],
    taskTimeout: 8,
    modules,
    disabledModules: [],
    hostname: 'test-host',
  };
}

export async function scanner(modules: Record<string, Record<string, unknown>> = {}) {
  return createEngine(engineConfig(modules), builtinModules);
}

export function meta(patch: Partial<ScanMeta> = {}): ScanMeta {
  return { ...emptyMeta(), ...patch };
}

export function names(r: ScanResult): Set<string> {
  return new Set(r.symbols.map((s) => s.name));
}

export function symbol(r: ScanResult, name: string) {
  return r.symbols.find((s) => s.name === name);
}

/** One recorded Rspamd 3.4 exchange: the message bytes, request headers and reply symbols. */
export interface RecordedCase {
  message: Buffer;
  headers: Map<string, string[]>;
  symbols: Record<string, { score: number; options?: string[]; description?: string }>;
  reply: Record<string, unknown>;
}

export function recordedCase(name: string): RecordedCase {
  const req = readFileSync(join(SCAN_FIXTURES, name, 'request.bin'));
  const split = req.indexOf('\r\n\r\n');
  const headers = new Map<string, string[]>();
  for (const line of req.subarray(0, split).toString('latin1').split('\r\n').slice(1)) {
    const c = line.indexOf(':');
    if (c < 0) continue;
    const k = line.slice(0, c).trim().toLowerCase();
    headers.set(k, [...(headers.get(k) ?? []), line.slice(c + 1).trim()]);
  }
  const reply = JSON.parse(readFileSync(join(SCAN_FIXTURES, name, 'response-body.json'), 'utf8')) as Record<string, unknown>;
  return { message: req.subarray(split + 4), headers, symbols: (reply['symbols'] ?? {}) as RecordedCase['symbols'], reply };
}

const strip = (v: string): string => v.replace(/^<|>$/g, '');

/** The envelope of a recorded v2 request, as the protocol layer would normalise it. */
export function metaFromRecorded(c: RecordedCase): ScanMeta {
  const h = (k: string): string | undefined => c.headers.get(k)?.[0];
  const m = meta({ rcpt: (c.headers.get('rcpt') ?? []).map(strip) });
  const from = h('from');
  if (from !== undefined) m.from = strip(from);
  for (const [key, field] of [
    ['ip', 'ip'],
    ['helo', 'helo'],
    ['hostname', 'hostname'],
    ['queue-id', 'queueId'],
    ['user', 'user'],
    ['mta-name', 'mtaName'],
  ] as const) {
    const v = h(key);
    if (v !== undefined) m[field] = v;
  }
  return m;
}

/** The configuration a conf dir holding only `local.d/<module>.yaml` loads to, with the built-in modules. */
export async function loadModuleYaml(module: string, yaml: string) {
  const dir = await makeConfDir({ [`local.d/${module}.yaml`]: yaml });
  try {
    return await loadConfig(dir, { modules: builtinModules });
  } finally {
    await removeConfDir(dir);
  }
}
