// Shared pieces for the engine tests: a config with Rspamd's defaults, fixture messages,
// request metadata, a recording logger, and a small rule module whose symbols mirror the
// Rspamd symbols seen in the scan fixtures (computed from the real parsed message).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineModule, emptyMeta } from '../../src/plugin-api/index.js';
import type { Logger, ModuleDefinition, ScanFlag, ScanMeta } from '../../src/plugin-api/index.js';
import type { EngineConfig } from '../../src/engine/contract.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine } from '../../src/engine/index.js';

export const FIXTURES = join(import.meta.dirname, '../../../shared/fixtures/scan');

export function fixtureMessage(name: string): Buffer {
  return readFileSync(join(FIXTURES, 'messages', name));
}

export function baseConfig(over: Partial<EngineConfig> = {}): EngineConfig {
  return {
    actions: { reject: { threshold: 15 }, 'add header': { threshold: 6 }, greylist: { threshold: 4 } },
    subjectTemplate: '',
    groups: {},
    symbols: {},
    composites: [],
    settings: [],
    taskTimeout: 8,
    modules: {},
    disabledModules: [],
    hostname: 'test.local',
    ...over,
  };
}

export function meta(over: Partial<ScanMeta> & { flagList?: ScanFlag[] } = {}): ScanMeta {
  const m = emptyMeta();
  const { flagList, ...rest } = over;
  Object.assign(m, rest);
  if (flagList) m.flags = new Set(flagList);
  return m;
}

export interface LogLine {
  level: string;
  msg: string;
  extra?: Record<string, unknown>;
}

export function recordingLogger(lines: LogLine[]): Logger {
  const push = (level: string) => (msg: string, extra?: Record<string, unknown>) => {
    const l: LogLine = { level, msg };
    if (extra) l.extra = extra;
    lines.push(l);
  };
  return { debug: push('debug'), info: push('info'), warn: push('warn'), error: push('error') };
}

/**
 * A few header rules with Rspamd's names and scores, run on the real parsed message, plus a
 * milter_headers-like idempotent symbol (explicit_disable, runs on empty messages) that asks
 * to remove X-Spam, as Rspamd's remove-spam-flag routine does.
 */
export const fixtureRules = defineModule({
  name: 'fixture_rules',
  symbols: {
    MISSING_MID: { score: 2.5, group: 'headers', description: 'Message id is missing' },
    MISSING_TO: { score: 2.0, group: 'headers', description: 'To header is missing' },
    FROM_HAS_DN: { score: 0, group: 'headers', description: 'From header has a display name' },
    DATE_IN_PAST: { score: 1.0, group: 'headers', description: 'Message date is in past' },
    OLD_X_MAILER: { score: 2.0, group: 'headers', description: 'Originated from an old MUA' },
    SPAM_FLAG: { score: 5.0, group: 'upstream_spam_filters', description: 'Message was already marked as spam' },
    MIME_GOOD: { score: -0.1, group: 'mime_types', description: 'Known content-type' },
  },
  setup(ctx) {
    ctx.symbol({
      name: 'HEADER_CHECKS',
      inserts: ['MISSING_MID', 'MISSING_TO', 'FROM_HAS_DN', 'DATE_IN_PAST', 'OLD_X_MAILER'],
      check(task) {
        const h = task.message.headers;
        if (!h.has('message-id')) task.insert('MISSING_MID');
        if (!h.has('to')) task.insert('MISSING_TO');
        if (task.message.from[0]?.name) task.insert('FROM_HAS_DN');
        const date = task.message.date;
        if (date) task.insert('DATE_IN_PAST', 1, String(Math.floor((Date.now() - date.getTime()) / 3600000)));
        if (/Outlook Express/.test(h.first('x-mailer')?.value ?? '')) task.insert('OLD_X_MAILER');
      },
    });
    ctx.symbol({
      name: 'SPAM_FLAG',
      check(task) {
        if (task.message.headers.has('x-spam')) task.insert('SPAM_FLAG');
      },
    });
    ctx.symbol({
      name: 'MIME_GOOD',
      check(task) {
        const t = task.message.root.contentType.type;
        if (t.startsWith('text/')) task.insert('MIME_GOOD', 1, t);
      },
    });
    ctx.symbol({
      name: 'MILTER_HEADERS',
      stage: 'idempotent',
      flags: ['empty', 'explicit_disable', 'ignore_passthrough'],
      check(task) {
        if (task.flags.has('skip')) return;
        task.removeMilterHeader('X-Spam', 0);
      },
    });
  },
});

export const fixtureGroups: EngineConfig['groups'] = {
  headers: { description: 'Various headers checks', maxScore: 8 },
  mime_types: { description: 'Mime attachments rules', maxScore: 10 },
};

export function engineWith(modules: ReadonlyArray<ModuleDefinition<any>>, over: Partial<EngineConfig> = {}, log?: Logger): Promise<Engine> { // eslint-disable-line @typescript-eslint/no-explicit-any -- test modules have heterogeneous configs
  return createEngine(baseConfig(over), modules, log ? { log } : {});
}

export function symbolNames(r: { symbols: Array<{ name: string }> }): string[] {
  return r.symbols.map((s) => s.name).sort();
}

export function sym(r: { symbols: Array<{ name: string; score: number; metricScore: number; options?: string[] }> }, name: string) {
  return r.symbols.find((s) => s.name === name);
}
