import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createLogger } from '../../src/observability/log.js';
import { defineModule } from '../../src/plugin-api/index.js';
import type { ModuleContext, Task } from '../../src/plugin-api/index.js';
import { engineWith, fixtureMessage, fixtureRules, meta, recordingLogger, symbolNames, sym } from './helpers.js';
import type { LogLine } from './helpers.js';

const MSG = fixtureMessage('crlf-simple.eml');

function trail(task: Task): string[] {
  let t = task.cache.get('trail') as string[] | undefined;
  if (!t) task.cache.set('trail', (t = []));
  return t;
}

test('stages run in order; priorities order prefilters high-first and postfilters low-first', async () => {
  let seen: string[] = [];
  const mod = defineModule({
    name: 'order',
    setup(ctx) {
      const rec = (name: string) => (task: Task) => {
        trail(task).push(name);
      };
      ctx.symbol({ name: 'IDEM', stage: 'idempotent', check: (t) => { trail(t).push('IDEM'); seen = trail(t); } });
      ctx.symbol({ name: 'POST_LOW', stage: 'postfilters', priority: 1, check: rec('POST_LOW') });
      ctx.symbol({ name: 'POST_HIGH', stage: 'postfilters', priority: 5, check: rec('POST_HIGH') });
      ctx.symbol({ name: 'FILTER', check: rec('FILTER') });
      ctx.symbol({ name: 'PRE_LOW', stage: 'prefilters', priority: 1, check: rec('PRE_LOW') });
      ctx.symbol({ name: 'PRE_HIGH', stage: 'prefilters', priority: 9, check: rec('PRE_HIGH') });
      ctx.symbol({ name: 'CONN', stage: 'connfilter', check: rec('CONN') });
    },
  });
  const engine = await engineWith([mod]);
  await engine.scan(MSG, meta());
  assert.deepEqual(seen, ['CONN', 'PRE_HIGH', 'PRE_LOW', 'FILTER', 'POST_LOW', 'POST_HIGH', 'IDEM']);
});

test('dependencies run first, also when the dependency awaits; hard deps follow settings', async () => {
  const mod = defineModule({
    name: 'deps',
    symbols: { A: { score: 1 }, B: { score: 1 }, C: { score: 1 }, D: { score: 1 } },
    setup(ctx) {
      // Registered first and with a higher priority, yet it needs B.
      ctx.symbol({ name: 'A', priority: 9, deps: ['B'], check: (t) => { if (t.hasSymbol('B')) t.insert('A', 1, 'saw B'); } });
      ctx.symbol({ name: 'B', check: async (t) => { await sleep(20); t.insert('B'); } });
      ctx.symbol({ name: 'C', deps: [{ name: 'D' }], check: (t) => t.insert('C') });
      ctx.symbol({ name: 'D', check: (t) => t.insert('D') });
    },
  });
  const engine = await engineWith([mod]);
  const r = await engine.scan(MSG, meta());
  assert.deepEqual(sym(r, 'A')?.options, ['saw B']);
  // Hard dependency on a symbol disabled by settings: the dependent is disabled too.
  const r2 = await engine.scan(MSG, meta({ settings: { symbols_disabled: ['D'] } }));
  assert.deepEqual(symbolNames(r2), ['A', 'B']);
  // Weak dependency: ordering only.
  const weak = defineModule({
    name: 'weak',
    setup(ctx) {
      ctx.symbol({ name: 'W', deps: [{ name: 'X', weak: true }], check: (t) => t.insert('W') });
      ctx.symbol({ name: 'X', check: (t) => t.insert('X') });
    },
  });
  const e2 = await engineWith([weak]);
  assert.deepEqual(symbolNames(await e2.scan(MSG, meta({ settings: { symbols_disabled: ['X'] } }))), ['W']);
});

test('a dependency cycle is refused when the engine is built', async () => {
  const mod = defineModule({
    name: 'cyclic',
    setup(ctx) {
      ctx.symbol({ name: 'P', deps: ['Q'], check: () => {} });
      ctx.symbol({ name: 'Q', deps: ['P'], check: () => {} });
    },
  });
  await assert.rejects(engineWith([mod]), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ENGINE_DEPENDENCY_CYCLE');
    assert.match(err.message, /P \(cyclic\)/);
    return true;
  });
});

test('callbacks that await run concurrently', async () => {
  const mod = defineModule({
    name: 'slow',
    setup(ctx) {
      for (const n of ['S1', 'S2', 'S3']) ctx.symbol({ name: n, check: async (t) => { await sleep(300); t.insert(n); } });
    },
  });
  const engine = await engineWith([mod]);
  const t0 = performance.now();
  const r = await engine.scan(MSG, meta());
  const took = performance.now() - t0;
  assert.deepEqual(symbolNames(r), ['S1', 'S2', 'S3']);
  // One after the other they take 900 ms; together 300, with room for a slow machine.
  assert.ok(took < 800, `took ${took} ms`);
});

test('the task deadline abandons a callback that never resolves; the reply keeps the rest', async () => {
  let aborted = false;
  const mod = defineModule({
    name: 'hang',
    symbols: { QUICK: { score: 2 }, NEVER: { score: 9 }, AFTER: { score: 1 } },
    setup(ctx) {
      ctx.symbol({
        name: 'NEVER',
        flags: ['coro'],
        check: (t) => {
          t.signal.addEventListener('abort', () => { aborted = true; });
          return new Promise<void>(() => {});
        },
      });
      ctx.symbol({ name: 'QUICK', check: (t) => t.insert('QUICK') });
      ctx.symbol({ name: 'AFTER', stage: 'postfilters', check: (t) => t.insert('AFTER') });
    },
  });
  const engine = await engineWith([mod, fixtureRules], { taskTimeout: 0.3 });
  const t0 = performance.now();
  const r = await engine.scan(MSG, meta());
  const took = performance.now() - t0;
  assert.ok(took >= 280 && took < 1500, `took ${took} ms`);
  assert.ok(sym(r, 'QUICK'));
  assert.equal(sym(r, 'NEVER'), undefined);
  // Postfilters and idempotent symbols still run after the deadline.
  assert.ok(sym(r, 'AFTER'));
  assert.deepEqual(r.milter, { remove_headers: { 'X-Spam': 0 } });
  assert.ok(aborted, 'task signal aborted at the deadline');
});

test('a per-symbol timeout abandons only that symbol', async () => {
  const mod = defineModule({
    name: 'budget',
    setup(ctx) {
      ctx.symbol({ name: 'SLOWPOKE', timeout: 0.05, check: async (t) => { await sleep(400); t.insert('SLOWPOKE'); } });
      ctx.symbol({ name: 'OK', check: (t) => t.insert('OK') });
    },
  });
  const engine = await engineWith([mod]);
  const t0 = performance.now();
  const r = await engine.scan(MSG, meta());
  assert.ok(performance.now() - t0 < 300);
  assert.deepEqual(symbolNames(r), ['OK']);
});

test('exceptions are contained to their symbol, logged and counted', async () => {
  const lines: LogLine[] = [];
  const mod = defineModule({
    name: 'broken',
    setup(ctx) {
      ctx.symbol({ name: 'THROWS', check: () => { throw new Error('boom'); } });
      ctx.symbol({ name: 'REJECTS', check: async () => { await sleep(1); throw new Error('async boom'); } });
      ctx.symbol({ name: 'FINE_ONE', check: (t) => t.insert('FINE_ONE') });
    },
  });
  const engine = await engineWith([mod], {}, recordingLogger(lines));
  const r = await engine.scan(MSG, meta());
  assert.deepEqual(symbolNames(r), ['FINE_ONE']);
  assert.equal(engine.errorCounts().get('THROWS'), 1);
  assert.equal(engine.errorCounts().get('REJECTS'), 1);
  assert.ok(lines.some((l) => l.level === 'error' && l.extra?.symbol === 'THROWS' && l.extra?.error === 'boom'));
});

test('a throwing module is logged at error level with module, symbol and Message-ID, through the real logger', async () => {
  const out: string[] = [];
  const log = createLogger({ level: 'info', format: 'json', destination: { write: (l: string) => out.push(l) } });
  const mod = defineModule({
    name: 'broken',
    setup(ctx) {
      ctx.symbol({ name: 'THROWS', check: () => { throw new RangeError('Invalid time value'); } });
      ctx.symbol({ name: 'REJECTS', check: async () => { await sleep(1); throw new URIError('URI malformed'); } });
    },
  });
  const engine = await engineWith([mod], {}, log);
  const msg = Buffer.from('From: a@example.org\r\nSubject: thrower\r\nMessage-ID: <thrower-1@example.org>\r\n\r\nbody\r\n');
  await engine.scan(msg, meta());
  const records = out.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.level === 50);
  const of = (symbol: string) => records.find((r) => r.symbol === symbol);
  assert.deepEqual(
    [of('THROWS'), of('REJECTS')].map((r) => r && { msg: r.msg, module: r.module, messageId: r.messageId, id: r.id }),
    [
      { msg: 'symbol callback failed: broken/THROWS: RangeError: Invalid time value', module: 'broken', messageId: 'thrower-1@example.org', id: 'thrower-1@example.org' },
      { msg: 'symbol callback failed: broken/REJECTS: URIError: URI malformed', module: 'broken', messageId: 'thrower-1@example.org', id: 'thrower-1@example.org' },
    ],
  );
  // A message without a Message-ID is named `undef`, as in Rspamd's logs and replies.
  out.length = 0;
  await engine.scan(Buffer.from('From: a@example.org\r\nSubject: no id\r\n\r\nbody\r\n'), meta());
  assert.equal(out.map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r.symbol === 'THROWS')?.messageId, 'undef');
});

test('every error line about a rule names its module and symbol (the fuzzer keys exceptions by them)', async () => {
  const lines: LogLine[] = [];
  const mod = defineModule({
    name: 'noisy',
    symbols: { LATE: { score: 1 } },
    setup(ctx) {
      ctx.symbol({ name: 'SYNC_THROW', check: () => { throw new TypeError('cannot read x of undefined'); } });
      ctx.symbol({ name: 'LATE_WRITER', stage: 'idempotent', check: (t) => t.insert('LATE') });
    },
  });
  const engine = await engineWith([mod], {}, recordingLogger(lines));
  await engine.scan(MSG, meta());
  const errors = lines.filter((l) => l.level === 'error');
  assert.equal(errors.length, 2, JSON.stringify(errors));
  const thrown = errors.find((l) => l.msg.startsWith('symbol callback failed: noisy/SYNC_THROW'));
  assert.equal(thrown?.extra?.module, 'noisy');
  assert.equal(thrown?.extra?.symbol, 'SYNC_THROW');
  assert.equal(thrown?.extra?.error, 'cannot read x of undefined');
  const refused = errors.find((l) => l.msg === 'symbol insertion refused in the idempotent stage');
  assert.equal(refused?.extra?.module, 'noisy');
  assert.equal(refused?.extra?.by, 'LATE_WRITER');
  assert.equal(refused?.extra?.symbol, 'LATE');
});

test('module config is validated with its schema: defaults applied, errors name module and key', async () => {
  const Schema = z.object({ limit: z.number().int().default(7), mode: z.enum(['a', 'b']).default('a') });
  let got: unknown;
  const mod = defineModule<z.infer<typeof Schema>>({
    name: 'configured',
    config: Schema,
    setup(ctx) {
      got = ctx.config;
    },
  });
  await engineWith([mod], { modules: { configured: { mode: 'b' } } });
  assert.deepEqual(got, { limit: 7, mode: 'b' });
  await assert.rejects(engineWith([mod], { modules: { configured: { limit: 'many' } } }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ENGINE_MODULE_CONFIG');
    assert.match(err.message, /module configured/);
    assert.match(err.message, /key limit/);
    return true;
  });
});

test('a module that disables itself is off with its reason; late registration throws', async () => {
  const lines: LogLine[] = [];
  let saved: ModuleContext<unknown> | undefined;
  const off = defineModule({
    name: 'needs_redis',
    symbols: { REDIS_SYM: { score: 3 } },
    setup(ctx) {
      ctx.symbol({ name: 'REDIS_SYM', check: (t) => t.insert('REDIS_SYM') });
      ctx.disable('redis');
    },
  });
  const late = defineModule({ name: 'late', setup(ctx) { saved = ctx; } });
  const engine = await engineWith([off, late], {}, recordingLogger(lines));
  const r = await engine.scan(MSG, meta());
  assert.equal(sym(r, 'REDIS_SYM'), undefined);
  assert.equal(engine.disabledModules().get('needs_redis'), 'redis');
  assert.ok(lines.some((l) => l.level === 'warn' && l.extra?.module === 'needs_redis'));
  assert.equal(engine.symbols().find((s) => s.name === 'REDIS_SYM')?.disabled, true);
  assert.throws(() => saved!.symbol({ name: 'TOO_LATE', check: () => {} }), /module late: symbol TOO_LATE registered after setup/);
});

test('a non-least pre-result stops remaining symbols except ignore_passthrough and fine ones', async () => {
  const mod = defineModule({
    name: 'pre',
    symbols: { NORMAL: { score: 1 }, GOOD: { score: -1 }, ALWAYS: { score: 0 } },
    setup(ctx) {
      ctx.symbol({
        name: 'DECIDE',
        stage: 'prefilters',
        check: (t) => t.setPreResult({ action: 'soft reject', message: 'try later', module: 'pre' }),
      });
      ctx.symbol({ name: 'NORMAL', check: (t) => t.insert('NORMAL') });
      ctx.symbol({ name: 'GOOD', check: (t) => t.insert('GOOD') });
      ctx.symbol({ name: 'ALWAYS', flags: ['ignore_passthrough'], check: (t) => t.insert('ALWAYS') });
    },
  });
  const engine = await engineWith([mod]);
  const r = await engine.scan(MSG, meta());
  assert.deepEqual(symbolNames(r), ['ALWAYS', 'GOOD']);
  assert.equal(r.action, 'soft reject');
  assert.equal(r.passthroughModule, 'pre');
  assert.equal(r.messages.smtp_message, 'try later');
});

test('the idempotent stage cannot change the score; profile lists timings', async () => {
  const mod = defineModule({
    name: 'idem',
    symbols: { LATE_SCORE: { score: 5 }, EARLY: { score: 1 } },
    setup(ctx) {
      ctx.symbol({ name: 'EARLY', check: (t) => t.insert('EARLY') });
      ctx.symbol({
        name: 'WRITER',
        stage: 'idempotent',
        check: (t) => {
          t.insert('LATE_SCORE');
          t.addMilterHeader('X-Verdict', `${t.verdict().action} ${t.verdict().score}`);
        },
      });
    },
  });
  const engine = await engineWith([mod]);
  const r = await engine.scan(MSG, meta({ flagList: ['profile'] }));
  assert.deepEqual(symbolNames(r), ['EARLY']);
  assert.equal(r.score, 1);
  assert.deepEqual(r.milter?.add_headers?.['X-Verdict'], { value: 'no action 1', order: -1 });
  assert.ok(r.profile && typeof r.profile.EARLY === 'number' && typeof r.profile.WRITER === 'number');
});

test('filters stop early above the reject threshold unless Pass: all', async () => {
  const mod = defineModule({
    name: 'early',
    symbols: { HUGE: { score: 20 }, LATER: { score: 1 } },
    setup(ctx) {
      ctx.symbol({ name: 'HUGE', priority: 9, check: (t) => t.insert('HUGE') });
      ctx.symbol({ name: 'LATER', check: (t) => t.insert('LATER') });
    },
  });
  const engine = await engineWith([mod]);
  assert.deepEqual(symbolNames(await engine.scan(MSG, meta())), ['HUGE']);
  assert.deepEqual(symbolNames(await engine.scan(MSG, meta({ pass: 'all' }))), ['HUGE', 'LATER']);
});

test('empty message: only `empty` symbols run, no message-id; Flags: skip runs nothing', async () => {
  const engine = await engineWith([fixtureRules]);
  const empty = await engine.scan(Buffer.alloc(0), meta());
  assert.deepEqual(empty.symbols, []);
  assert.equal(empty.score, 0);
  assert.equal(empty.action, 'no action');
  assert.equal(empty.messageId, undefined);
  assert.deepEqual(empty.milter, { remove_headers: { 'X-Spam': 0 } });
  const skipped = await engine.scan(MSG, meta({ flagList: ['skip'] }));
  assert.equal(skipped.isSkipped, true);
  assert.deepEqual(skipped.symbols, []);
  assert.equal(skipped.messageId, undefined);
  assert.equal(skipped.milter, undefined);
  assert.equal(skipped.urls, undefined);
  const full = await engine.scan(MSG, meta({ brokenEnvelope: true }));
  assert.equal(full.messageId, 'fixture-crlf-1@example.com');
  assert.deepEqual(full.emails, ['carol@example.net']);
  assert.equal(full.urls?.[0]?.host, 'www.example.org');
});

test('task facts: envelope, Received chain, flags, fold newline, rewrite', async () => {
  let facts: Record<string, unknown> = {};
  const mod = defineModule({
    name: 'facts',
    setup(ctx) {
      ctx.symbol({
        name: 'FACTS',
        stage: 'postfilters',
        check: (t) => {
          facts = {
            from: t.envelopeFrom?.address,
            rcpt: t.envelopeRcpt.map((a) => a.address),
            hops: t.received.length,
            firstIp: t.received[1]?.fromIp,
            broken: t.flags.has('broken_headers'),
            fold: t.foldNewline,
            header: t.getRequestHeader('X-Test'),
          };
          t.rewriteMessage(Buffer.from('Subject: new\r\n\r\nbody\r\n'));
        },
      });
    },
  });
  const engine = await engineWith([mod]);
  const headers = new Map([['x-test', ['yes']]]);
  const r = await engine.scan(fixtureMessage('spam_message.eml'), meta({ from: '<a@example.com>', rcpt: ['b@example.org', 'not an address'], brokenEnvelope: true, requestHeaders: headers, flagList: ['milter'] }));
  assert.deepEqual(facts, { from: 'a@example.com', rcpt: ['b@example.org'], hops: 2, firstIp: '151.18.193.131', broken: true, fold: '\n', header: 'yes' });
  assert.equal(r.rewritten?.toString(), 'Subject: new\r\n\r\nbody\r\n');
  assert.equal(r.rewrittenBodyOffset, 'Subject: new\r\n\r\n'.length);
  assert.equal(r.newline, '\r\n');
  const lf = await engine.scan(fixtureMessage('lf-simple.eml'), meta());
  assert.equal(lf.newline, '\n');
});

test('milter contributions merge: repeated add_headers become arrays, settings first, removals last-wins', async () => {
  const mod = defineModule({
    name: 'milter',
    setup(ctx) {
      ctx.symbol({
        name: 'HDRS',
        stage: 'idempotent',
        check: (t) => {
          t.addMilterHeader('X-Spam-Status', 'Yes, score=5.00');
          t.addMilterHeader('X-Extra', 'second', 1);
          t.removeMilterHeader('X-Other', 2);
          t.removeMilterHeader('X-Other', 3);
          t.setMilter({ change_from: 'bounce@example.com', add_headers: { 'X-Extra': 'third' } });
        },
      });
    },
  });
  const engine = await engineWith([mod]);
  const r = await engine.scan(MSG, meta({ settings: { add_headers: { 'X-Spam-Status': { value: 'from settings', order: 0 }, 'X-Extra': 'x' }, remove_headers: { 'X-Other': 1 } } }));
  assert.deepEqual(r.milter, {
    add_headers: {
      'X-Spam-Status': [{ value: 'from settings', order: 0 }, { value: 'Yes, score=5.00', order: -1 }],
      'X-Extra': ['x', { value: 'second', order: 1 }, 'third'],
    },
    remove_headers: { 'X-Other': 3 },
    change_from: 'bounce@example.com',
  });
});

test('listings: symbols with score, group and description; groups; actions', async () => {
  const engine = await engineWith([fixtureRules], {
    symbols: { MISSING_TO: { score: 3.5, description: 'No To' }, SPAM_FLAG: { disabled: true } },
    groups: { headers: { description: 'Various headers checks', maxScore: 8 } },
    actions: { reject: { threshold: 15 }, 'add header': { threshold: 6 }, greylist: { threshold: null }, quarantine_it: { threshold: 12, milter: 'quarantine' } },
  });
  const syms = engine.symbols();
  assert.deepEqual(syms.find((s) => s.name === 'MISSING_TO'), { name: 'MISSING_TO', score: 3.5, group: 'headers', description: 'No To', module: 'fixture_rules', disabled: false });
  assert.equal(syms.find((s) => s.name === 'SPAM_FLAG')?.disabled, true);
  const headers = engine.groups().find((g) => g.name === 'headers');
  assert.equal(headers?.maxScore, 8);
  assert.ok(headers?.symbols.includes('MISSING_MID'));
  assert.deepEqual(engine.actions(), [
    { name: 'add header', threshold: 6 },
    { name: 'quarantine_it', threshold: 12, milter: 'quarantine' },
    { name: 'reject', threshold: 15 },
    { name: 'greylist', threshold: null },
  ]);
  // The configured override applies to scans; a config-disabled symbol never shows up.
  const r = await engine.scan(fixtureMessage('crlf-simple.eml'), meta());
  assert.equal(sym(r, 'SPAM_FLAG'), undefined);
  const r2 = await engine.scan(fixtureMessage('spam_message.eml'), meta());
  assert.equal(sym(r2, 'MISSING_TO')?.score, 3.5);
});
