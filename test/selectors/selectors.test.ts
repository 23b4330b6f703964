// Selector behaviour Rspamd 3.4 cannot be asked about (master-only extractors and transforms,
// selector maps, task facts a controller task lacks, the combinators) on the fixture messages,
// the parser's error reports, and a property test: any string either compiles or fails with a
// coded SelectorError, and the parser always finishes.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RequestHeaders } from '../../src/http/types.js';
import { parseV2Headers } from '../../src/protocol/parse-v2.js';
import { compileSelector, isSelectorError, listExtractors, listTransforms, messageTask, parseSelector, setPoolVar, type SelectorEnv, type SelectorTask } from '../../src/selectors/index.js';
import { EXTRACTORS } from '../../src/selectors/extractors.js';
import { MAX_REGEXP_INPUT_CHARS, TRANSFORMS } from '../../src/selectors/transforms.js';
import { ENVELOPE, MESSAGE_CASES, messagePath } from './cases.js';

function task(file: 'attachments.eml' | 'html-links.eml', headers: Record<string, string> = ENVELOPE): SelectorTask {
  const h = new RequestHeaders();
  for (const [k, v] of Object.entries(headers)) h.add(k, v);
  return messageTask(readFileSync(messagePath(file)), parseV2Headers(h), 'uid-1');
}

const run = (sel: string, t: SelectorTask = task('attachments.eml'), env?: SelectorEnv) => compileSelector(sel, env).flatten(t);

describe('selectors: master-only functions and task facts', () => {
  it('join_nth groups elements, join_tables joins inner lists', () => {
    assert.deepEqual(run("list('a','b','c','d','e').join_nth(2, '-')"), ['a-b', 'c-d', 'e']);
    assert.deepEqual(run("header('X-Custom', 'full'):value.regexp('(f)(i)').join_tables('+')"), ['fi+f+i']);
    assert.deepEqual(run("header('X-Custom', 'full'):value.regexp('(\\w)(\\w)')"), ['fi', 'f', 'i', 'rs', 'r', 's', 'se', 's', 'e', 'co', 'c', 'o', 'nd', 'n', 'd']);
  });

  it('apply_methods calls each method of an object; filter_method keeps the objects whose method is true', () => {
    assert.deepEqual(run("ip.apply_methods('to_string', 'get_version')"), ['198.51.100.7', '4']);
    const t = task('html-links.eml');
    assert.deepEqual(run("urls_filtered.filter_method('get_port')", t), []);
    assert.deepEqual(run('urls.filter_method(get_query).sort', t), ['http://unsub.bulk.example/u?id=9', 'https://tracker.example.com/c?u=1', 'https://tracker.example.com/c?u=2']);
  });

  it('selector maps: filter_map, except_map, apply_map and specific_urls_filter_map', () => {
    const maps: Record<string, Map<string, string>> = { hosts: new Map([['tracker.example.com', 'tracking'], ['https://tracker.example.com/c?u=1', '1']]) };
    const env: SelectorEnv = { map: (n) => maps[n] };
    const t = task('html-links.eml');
    assert.deepEqual(run("urls:get_host.filter_map('hosts').uniq", t, env), ['tracker.example.com']);
    assert.deepEqual(run("urls:get_host.except_map('hosts').uniq.sort", t, env), ['news.bulk.example', 'unsub.bulk.example']);
    assert.deepEqual(run("urls:get_host.apply_map('hosts').uniq", t, env), ['tracking']);
    assert.deepEqual(run("specific_urls_filter_map('hosts', {limit = 10})", t, env), ['https://tracker.example.com/c?u=1']);
    // An unknown map yields nothing, as in Rspamd.
    assert.equal(run("urls:get_host.apply_map('nosuch')", t, env)?.length, 0);
  });

  it('task facts: uid, pool variables (country, asn), task cache, symbols, hostnames, counters', () => {
    const t = task('attachments.eml');
    assert.deepEqual(run('uid', t), ['uid-1']);
    assert.equal(run('country', t), undefined);
    setPoolVar(t, 'country', 'NL');
    setPoolVar(t, 'asn', '64496');
    setPoolVar(t, 'my_var', 'v');
    assert.deepEqual(run("country;asn;pool_var('my_var')", t), ['NL', '64496', 'v']);
    t.cache.set('list_key', ['x', 'y']);
    assert.deepEqual(run("task_cache('list_key')", t), ['x', 'y']);
    assert.deepEqual(run('rspamd_hostname', t), [hostname()]);
    assert.deepEqual(run('rspamd_hostname', t, { hostname: 'filter.example' }), ['filter.example']);
    assert.deepEqual(run('authenticated', t), ['true']);
    assert.deepEqual(run('authenticated', task('attachments.eml', {})), ['false']);
    assert.deepEqual(run('received_count', t), ['2']);
    assert.deepEqual(run('received_count', task('html-links.eml')), ['0']);
    assert.equal(run('metatokens', t), undefined);
    const withSymbols: SelectorTask = { ...t, message: t.message, received: t.received, getSymbol: (n) => (n === 'R_SPF_ALLOW' ? { name: n, score: -0.2, options: ['+ip4:192.0.2.1'] } : undefined) } as SelectorTask;
    assert.deepEqual(run("symbol('R_SPF_ALLOW'):score", withSymbols), ['-0.2']);
    assert.deepEqual(run("symbol('R_SPF_ALLOW'):options", withSymbols), ['+ip4:192.0.2.1']);
    assert.equal(run("symbol('NOPE')", withSymbols), undefined);
  });

  it('time: connect time and formats in GMT', () => {
    const t = task('attachments.eml');
    const now = Math.floor(Date.now() / 1000);
    assert.ok(Math.abs(Number(run("time('connect')", t)![0]) - now) <= 5);
    assert.deepEqual(run("time('message', '%a %d %b %Y %H:%M:%S %Z %j')", t), ['Mon 06 Mar 2023 10:15:00 GMT 065']);
  });

  it('fuzzy digest and shingles of the displayed part', () => {
    const a = run('fuzzy_digest', task('attachments.eml'))!;
    const b = run('fuzzy_digest', task('html-links.eml'))!;
    assert.match(a[0]!, /^[0-9a-f]{128}$/);
    assert.notEqual(a[0], b[0]);
    const sh = run('fuzzy_shingles', task('attachments.eml'))!;
    assert.equal(sh.length, 32);
    for (const s of sh) assert.match(s, /^\d+$/);
  });

  it('scan_result gives the verdict as a table', () => {
    const t = task('attachments.eml');
    const withVerdict = { ...t, message: t.message, received: t.received, verdict: () => ({ score: 7.5, requiredScore: 15, action: 'add header', symbols: [] }) } as unknown as SelectorTask;
    assert.deepEqual(run('scan_result:action', withVerdict), ['add header']);
    assert.deepEqual(run('scan_result:score', withVerdict), ['7.5']);
    assert.equal(run('scan_result', t), undefined);
  });

  it('words(full) gives tables whose fields a method reads', () => {
    assert.deepEqual(run("words('full'):norm.take_n(3)"), ['hello', 'alice', 'please']);
    assert.deepEqual(run("words('full'):stem.nth(16)"), ['ran']);
  });

  it('received tables: from_hostname is the HELO without brackets, flags and for are readable', () => {
    assert.deepEqual(run("received('real_hostname')"), ['mx.relay.example.net', 'dsl-55.isp.example']);
    assert.deepEqual(run("received('for')"), ['alice@example.com', 'alice@example.com']);
  });
});

describe('selectors: combinators', () => {
  const t = task('attachments.eml');
  it('combine joins strings and zips lists (a string repeats at every position)', () => {
    assert.equal(compileSelector("id('a');id('b')").combine(t, ':'), 'a:b');
    assert.deepEqual(compileSelector("id('pre-');rcpts('mime'):addr").combine(t), ['pre-alice@example.com', 'pre-carol@Example.COM', 'pre-dave@sub.example.co.uk']);
    assert.deepEqual(compileSelector("list('1','2','3');list('a','b')").combine(t, '/'), ['1/a', '2/b']);
    assert.equal(compileSelector("id('a');header('X-Missing')").combine(t), undefined);
  });
  it('object pairs keys with values', () => {
    assert.deepEqual(compileSelector("id('helo');helo;id('rcpts');rcpts:addr").object(t), { helo: 'mx.relay.example.net', rcpts: ['alice@example.com'] });
    const o = compileSelector("id('__proto__');id('x')").object(t)!;
    assert.ok(Object.hasOwn(o, '__proto__'));
  });
});

describe('selectors: coverage of the function tables', () => {
  it('every extractor and transform is exercised by a Rspamd case or a test above', () => {
    const texts = MESSAGE_CASES.map((c) => c.selector).join(' ') + readFileSync(import.meta.filename, 'utf8');
    for (const name of [...Object.keys(EXTRACTORS), ...Object.keys(TRANSFORMS)]) assert.match(texts, new RegExp(`(^|[^a-z_])${name}\\b`), name);
  });
  it('listings carry descriptions, and transforms their types', () => {
    const ex = listExtractors();
    const tr = listTransforms();
    assert.equal(Object.keys(ex).length, Object.keys(EXTRACTORS).length);
    for (const v of Object.values(ex)) assert.ok(v.description.length > 5);
    assert.deepEqual(tr.lower, { description: 'Returns the lowercased string', types: { string: true }, map_type: 'string' });
    assert.deepEqual(tr.first!.types, { list: true });
    assert.ok(tr.match);
  });
});

describe('selectors: parser', () => {
  it('reads the grammar: named tables, lists, quotes with backslashes kept, spaces where allowed', () => {
    const [e] = parseSelector("specific_urls({limit = 5, esld_limit = '1', flags = {text, 'subject'}}):get_host");
    assert.deepEqual(e!.extractor.args, [{ limit: '5', esld_limit: '1', flags: ['text', 'subject'] }]);
    assert.equal(e!.method?.name, 'get_host');
    assert.deepEqual(parseSelector("header('a\\'b', \"c\\d\")")[0]!.extractor.args, ["a\\'b", 'c\\d']);
    assert.deepEqual(parseSelector('list( a ,, b , {x, y} )')[0]!.extractor.args, ['a', 'b', ['x', 'y']]);
    assert.deepEqual(parseSelector('ip.ipmask(24) ; from:domain *helo  ').map((x) => x.extractor.name), ['ip', 'from', 'helo']);
    assert.deepEqual(parseSelector('regexp_arg(a.b:c/d)')[0]!.extractor.args, ['a.b:c/d']);
  });

  it('reports what and where', () => {
    const cases: Array<[string, string, number | undefined]> = [
      ["header('Subject'", 'ERR_SELECTOR_SYNTAX', 16],
      ['ip ip', 'ERR_SELECTOR_SYNTAX', 3],
      ['nosuch', 'ERR_SELECTOR_UNKNOWN', 0],
      ['ip.nosuch', 'ERR_SELECTOR_UNKNOWN', 3],
      ["time('nope')", 'ERR_SELECTOR_ARGS', 0],
      ["id.regexp('(')", 'ERR_SELECTOR_ARGS', 3],
      ["header(Subject).regexp('^(\\w+\\s?)+$')", 'ERR_SELECTOR_ARGS', 16],
      ["id.match('/(a|b*)*c/i')", 'ERR_SELECTOR_ARGS', 3],
      ['', 'ERR_SELECTOR_SYNTAX', undefined],
      ['ip;'.repeat(70) + 'ip', 'ERR_SELECTOR_TOO_LARGE', undefined],
    ];
    for (const [text, code, pos] of cases) {
      try {
        compileSelector(text);
        assert.fail(`${text} compiled`);
      } catch (err) {
        assert.ok(isSelectorError(err), String(err));
        assert.equal((err as { code: string }).code, code, text);
        if (pos !== undefined) assert.equal((err as { position?: number }).position, pos, text);
      }
    }
  });

  it('property: any text compiles or fails with a coded error, and finishes', () => {
    const alphabet = fc.constantFrom(...'abhdeipr_-:;.*(){}=,\'"\\ \t\n0123456789é'.split(''), 'header', 'ip', 'lower', 'id', 'regexp', 'list', '{limit = 2}');
    const texts = fc.oneof(fc.string({ maxLength: 200 }), fc.array(alphabet, { maxLength: 80 }).map((a) => a.join('')));
    fc.assert(
      fc.property(texts, (text) => {
        try {
          const sel = compileSelector(text);
          sel.flatten(task('html-links.eml'));
        } catch (err) {
          if (!isSelectorError(err)) throw err;
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('regexps: nested repetition refused, benign ones kept, long inputs cut', () => {
    for (const ok of ['(\\w+)\\s(\\d)', '^(ab)+$', '(a+)?b', '[(+]+', '(a)(b+)+?'.replace('+?', '?'), '\\(a+\\)+']) assert.doesNotThrow(() => compileSelector(`id.regexp('${ok}')`), ok);
    const t = task('attachments.eml');
    const big = 'a'.repeat(400_000) + 'END';
    t.cache.set('big', big);
    assert.equal(compileSelector("task_cache('big').regexp('END')").flatten(t), undefined);
    // The searched text ends at the cut: `$` matches there.
    assert.deepEqual(compileSelector("task_cache('big').regexp('a{3}$')").flatten(t), ['aaa']);
    assert.equal(compileSelector("task_cache('big').regexp('a{1000}')").flatten(t)!.length, Math.floor(MAX_REGEXP_INPUT_CHARS / 1000));
  });

  it('a long hostile selector parses in linear time', () => {
    const text = "list(" + "'a',".repeat(100) + ')' + '.lower'.repeat(60);
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) compileSelector(text);
    assert.ok(performance.now() - t0 < 1000);
    assert.throws(() => compileSelector('x'.repeat(10_000)), (e: unknown) => isSelectorError(e) && (e as { code: string }).code === 'ERR_SELECTOR_TOO_LARGE');
  });
});
