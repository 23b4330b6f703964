// Selectors where the configuration uses them, through the real engine: a multimap `selector`
// rule, ratelimit buckets keyed by a selector (real Redis), an rbl `selector` check against a DNS
// server on loopback, a settings rule chosen by a selector condition, a plugin compiling one with
// ctx.selector at load, and configtest naming every bad selector.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../src/engine/index.js';
import { defineModule, isSelectorError, type CompiledSelector } from '../../src/plugin-api/index.js';
import { createNetServices } from '../../src/net/index.js';
import { multimapModule } from '../../src/modules/multimap/index.js';
import { ratelimitModule } from '../../src/modules/ratelimit/index.js';
import { rblModule } from '../../src/modules/rbl/index.js';
import { createMapRegistry } from '../../src/maps/index.js';
import { startDnsServer, type DnsTestServer } from '../helpers/dns-server.js';
import { engineConfig, meta, symbol } from '../modules/helpers.js';
import { redisStores, type PolicyStores } from '../modules/policy-stores.js';
import { quietLog } from '../storage/helpers.js';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli } from '../cli/run-cli.js';

const msg = (from: string, subject: string, body = 'Hello, see http://www.listed-domain.example/x\r\n'): Buffer =>
  Buffer.from(`From: <${from}>\r\nTo: rcpt@example.net\r\nSubject: ${subject}\r\nMessage-ID: <${Math.random().toString(36).slice(2)}@example.org>\r\nDate: Mon, 06 Mar 2023 10:15:00 +0000\r\n\r\n${body}`);

describe('multimap type selector', () => {
  it('looks each selector value up, with the delimiter joining a list of selectors', async () => {
    const maps = createMapRegistry({ baseDir: '/tmp', log: quietLog });
    try {
      const rules = {
        SEL_DOMAIN: { type: 'selector', selector: "from('mime'):domain.lower", map: ['bad.example', 'worse.example 2'], score: 3 },
        SEL_PAIR: { type: 'selector', selector: "from('mime'):domain.lower;header('Subject').lower", delimiter: '|', map: ['good.example|win-a-prize'], score: 1 },
        SEL_BROKEN: { type: 'selector', selector: "from('mime'):domain.nosuch", map: ['x'], score: 1 },
      };
      const errors: string[] = [];
      const log = { ...quietLog, error: (m: string, extra?: Record<string, unknown>) => errors.push(`${m} ${JSON.stringify(extra)}`) };
      const engine = await createEngine(engineConfig({ multimap: { rules } }), [multimapModule], { maps, log });
      const hit = await engine.scan(msg('a@Bad.Example', 'hello'), meta());
      assert.equal(symbol(hit, 'SEL_DOMAIN')?.score, 3);
      assert.deepEqual(symbol(hit, 'SEL_DOMAIN')?.options, ['bad.example']);
      assert.equal(symbol(await engine.scan(msg('a@worse.example', 'hello'), meta()), 'SEL_DOMAIN')?.score, 6);
      assert.equal(symbol(await engine.scan(msg('a@fine.example', 'hello'), meta()), 'SEL_DOMAIN'), undefined);
      assert.deepEqual(symbol(await engine.scan(msg('x@good.example', 'Win-A-Prize'), meta()), 'SEL_PAIR')?.options, ['good.example|win-a-prize']);
      assert.equal(symbol(await engine.scan(msg('x@good.example', 'other'), meta()), 'SEL_PAIR'), undefined);
      // The bad rule is dropped with an error naming it; the others work.
      assert.ok(errors.some((e) => /invalid selector/.test(e) && /SEL_BROKEN/.test(e) && /unknown transform nosuch/.test(e)), errors.join('\n'));
    } finally {
      maps.close();
    }
  });
});

describe('ratelimit keyed by a selector (Redis)', () => {
  let st: PolicyStores;
  before(async () => {
    st = await redisStores('selector-ratelimit');
  });
  after(async () => st.cleanup());

  it('one bucket per selector value: a full bucket for one sender domain leaves another alone', async () => {
    const rates = { by_domain: { selector: "from('mime'):domain.lower", bucket: { burst: 2, rate: 0.001 } } };
    const engine = await createEngine(engineConfig({ ratelimit: { rates } }), [ratelimitModule], { stores: st.stores });
    const limited = (r: Awaited<ReturnType<typeof engine.scan>>) => symbol(r, 'RATELIMITED') !== undefined;
    const m = meta({ ip: '203.0.113.9', rcpt: ['rcpt@example.net'] });
    const results = [];
    for (let i = 0; i < 3; i++) results.push(limited(await engine.scan(msg(`u${i}@Flood.example`, 'x'), m)));
    assert.deepEqual(results, [false, false, true]);
    const r = await engine.scan(msg('u@flood.example', 'x'), m);
    assert.equal(r.action, 'soft reject');
    assert.deepEqual(symbol(r, 'RATELIMITED')?.options, ['by_domain']);
    assert.equal(limited(await engine.scan(msg('u@calm.example', 'x'), m)), false);
    // A message the selector yields nothing for is not limited by that bucket.
    assert.equal(limited(await engine.scan(Buffer.from('Subject: no from\r\n\r\nbody\r\n'), m)), false);
  });
});

describe('rbl selector check', () => {
  let dns: DnsTestServer;
  before(async () => {
    dns = await startDnsServer({
      zone: {
        'listed-domain.example.sel.rbl.example': [{ type: 'A', data: '127.0.0.2' }],
        '9.113.0.203.sel.rbl.example': [{ type: 'A', data: '127.0.0.3' }],
      },
    });
  });
  after(async () => dns.close());

  it('looks up the values a selector yields: names as they are, addresses reversed', async () => {
    const net = createNetServices({ dns: { servers: [dns.address], timeout: 0.3, retransmits: 1 } });
    try {
      const rbls = {
        by_selector: { rbl: 'sel.rbl.example', selector: "urls:get_tld.uniq;ip", symbol: 'SEL_LISTED', enabled: true, returncodes: { SEL_IP: '127.0.0.3' } },
      };
      const engine = await createEngine(engineConfig({ rbl: { default_enabled: false, rbls } }), [rblModule], { net });
      const r = await engine.scan(msg('a@example.org', 'x'), meta({ ip: '203.0.113.9' }));
      // 127.0.0.2 is not among the return codes: the list's own symbol, with the answer.
      assert.deepEqual(symbol(r, 'SEL_LISTED')?.options, ['listed-domain.example:selector:127.0.0.2']);
      assert.deepEqual(symbol(r, 'SEL_IP')?.options, ['203.0.113.9:selector']);
      assert.ok(dns.queries.some((q) => q.name === 'listed-domain.example.sel.rbl.example'));
      const clean = await engine.scan(msg('a@example.org', 'x', 'no links\r\n'), meta({ ip: '198.51.100.1' }));
      assert.equal(symbol(clean, 'SEL_LISTED'), undefined);
    } finally {
      await net.close();
    }
  });
});

describe('settings chosen by a selector condition', () => {
  it('applies the rule when the selector yields a value, not otherwise', async () => {
    const settings = [{ id: 'newsletters', priority: 2, apply: { actions: { reject: 40 } }, conditions: { selector: ["header('List-Id').regexp('<news\\.example>')"] } }];
    const engine = await createEngine({ ...engineConfig(), settings }, []);
    const list = Buffer.from('From: a@example.org\r\nList-Id: Weekly <news.example>\r\nSubject: x\r\n\r\nbody\r\n');
    const other = Buffer.from('From: a@example.org\r\nList-Id: <other.example>\r\nSubject: x\r\n\r\nbody\r\n');
    assert.equal((await engine.scan(list, meta())).requiredScore, 40);
    assert.equal((await engine.scan(other, meta())).requiredScore, 15);
  });
});

describe('ctx.selector in a plugin', () => {
  it('compiles at load; the callback runs it over each scan', async () => {
    let compiled: CompiledSelector | undefined;
    const mod = defineModule({
      name: 'sel_plugin',
      symbols: { SEL_PLUGIN: { score: 1 } },
      setup(ctx) {
        compiled = ctx.selector("from('mime'):domain.lower;rcpts('mime'):addr");
        ctx.symbol({ name: 'SEL_PLUGIN', check: (task) => task.insert('SEL_PLUGIN', 1, (compiled!.combine(task, '>') as string[]) ?? []) });
      },
    });
    const engine = await createEngine(engineConfig(), [mod]);
    const r = await engine.scan(msg('a@Example.ORG', 'x'), meta());
    assert.deepEqual(symbol(r, 'SEL_PLUGIN')?.options, ['example.org>rcpt@example.net']);
  });

  it('a bad selector fails the setup with a coded error: the module is off, with the parse error as reason', async () => {
    let thrown: unknown;
    const mod = defineModule({
      name: 'bad_sel_plugin',
      setup(ctx) {
        try {
          ctx.selector("header('Subject'");
        } catch (e) {
          thrown = e;
          throw e;
        }
      },
    });
    const engine = await createEngine(engineConfig(), [mod], { log: quietLog });
    assert.ok(isSelectorError(thrown));
    assert.match(engine.disabledModules().get('bad_sel_plugin') ?? '', /setup failed: invalid selector: expected '\)'/);
  });
});

describe('configtest names bad selectors', () => {
  const configtest = async (files: Record<string, string>): Promise<string> => {
    const dir = await makeConfDir(files);
    try {
      const run = runCli(['configtest', '-c', dir]);
      const { code } = await run.exited;
      assert.equal(code, 1, run.output());
      return run.output();
    } finally {
      await removeConfDir(dir);
    }
  };

  it('in a settings rule: file, line and key', async () => {
    const out = await configtest({ 'mailsift.yaml': 'settings:\n  by_sel:\n    selector: "header(Subject).lowr"\n    apply: { actions: { reject: 20 } }\n' });
    assert.match(out, /mailsift\.yaml:3:15: settings\.by_sel\.selector: expected a valid selector \(unknown transform lowr at position 16\), found "header\(Subject\)\.lowr"/);
  });

  it('in multimap, ratelimit and rbl rules: the module file, the rule and the parse error', async () => {
    const out = await configtest({
      'local.d/multimap.yaml': 'rules:\n  SEL_RULE:\n    type: selector\n    selector: "from(\'mime\'):domain."\n    map: [x.example]\n',
      'local.d/ratelimit.yaml': 'rates:\n  by_sel:\n    selector: "ip.ipmask(abc)"\n    bucket: "10 / 1m"\n',
      'local.d/rbl.yaml': 'rbls:\n  sel_list:\n    rbl: sel.example\n    selector: "nosuch_extractor"\n',
    });
    assert.match(out, /local\.d\/multimap\.yaml.*invalid selector.*SEL_RULE.*expected a transform name/);
    assert.match(out, /local\.d\/ratelimit\.yaml.*invalid selector.*by_sel.*invalid arguments for ipmask/);
    assert.match(out, /local\.d\/rbl\.yaml.*invalid selector.*sel_list.*unknown extractor nosuch_extractor/);
  });
});
