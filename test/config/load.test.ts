import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { loadConfig, readConfig } from '../../src/config/load.js';
import { deepMerge } from '../../src/config/merge.js';
import { builtinModules } from '../../src/modules/index.js';
import { ConfigError, isConfigError, type ConfigIssue } from '../../src/config/errors.js';
import { makeConfDir, removeConfDir } from './conf-dir.js';
import { TRAINED_DICTIONARY } from '../helpers/zstd-dictionary.js';

/** Runs loadConfig expecting failure; returns the issues. */
async function issuesOf(files: Record<string, string | Buffer>): Promise<readonly ConfigIssue[]> {
  const dir = await makeConfDir(files);
  try {
    await loadConfig(dir);
  } catch (err) {
    assert.ok(isConfigError(err), `expected a ConfigError, got ${String(err)}`);
    assert.ok(err instanceof ConfigError);
    return err.issues;
  } finally {
    await removeConfDir(dir);
  }
  assert.fail('loadConfig accepted an invalid configuration');
}

async function load(files: Record<string, string | Buffer>) {
  const dir = await makeConfDir(files);
  try {
    return await loadConfig(dir);
  } finally {
    await removeConfDir(dir);
  }
}

test('an empty directory yields the embedded defaults', async () => {
  const cfg = await load({});
  assert.deepEqual(cfg.engine.actions, { reject: { threshold: 15 }, 'add header': { threshold: 6 }, greylist: { threshold: 4 } });
  assert.equal(cfg.engine.subjectTemplate, '*** SPAM *** %s');
  assert.equal(cfg.engine.taskTimeout, 8);
  assert.equal(cfg.workers.normal.host, '127.0.0.1');
  assert.equal(cfg.workers.normal.port, 11333);
  assert.equal(cfg.workers.normal.count, availableParallelism());
  assert.equal(cfg.workers.normal.maxMessage, 50 * 1024 * 1024);
  assert.deepEqual([cfg.workers.controller.host, cfg.workers.controller.port], ['127.0.0.1', 11334]);
  assert.deepEqual(cfg.files, []);
});

test('the shipped conf/ directory is valid and keeps the documented defaults', async () => {
  const cfg = await loadConfig('conf');
  assert.equal(cfg.engine.actions.reject?.threshold, 15);
  assert.equal(cfg.engine.actions['add header']?.threshold, 6);
  assert.equal(cfg.workers.normal.port, 11333);
  assert.equal(cfg.workers.controller.port, 11334);
  assert.ok(cfg.files.some((f) => f.endsWith('mailsift.yaml')));
  assert.equal(cfg.dataDir, join(cfg.dir, '..', 'data'));
});

test('values are converted: sizes, durations, binds, wire action names, settings', async () => {
  const cfg = await load({
    'mailsift.yaml': [
      'workers:',
      '  normal: { bind: "[::1]:0", count: 3, max_message: 512k, task_timeout: 1500ms }',
      '  controller: { bind: "*:9999" }',
      'actions: { reject: 20, "add header": 7, rewrite_subject: 9, soft_reject: null, discard: { threshold: 30, milter: discard }, subject: "[SPAM] %s" }',
      'settings:',
      '  outbound: { priority: high, user: "@example.com", apply: { actions: { reject: null } } }',
      '  by_id_only: { apply: { symbols_disabled: [ONCE_RECEIVED] } }',
      'composites:',
      '  MY_COMP: { expression: "A & !B", score: 2.5, policy: remove_weight }',
      'hostname: mx.example.net',
    ].join('\n'),
  });
  assert.deepEqual([cfg.workers.normal.host, cfg.workers.normal.port, cfg.workers.normal.count], ['::1', 0, 3]);
  assert.equal(cfg.workers.normal.maxMessage, 512 * 1024);
  assert.equal(cfg.engine.taskTimeout, 1.5);
  assert.deepEqual([cfg.workers.controller.host, cfg.workers.controller.port], ['0.0.0.0', 9999]);
  assert.deepEqual(cfg.engine.actions, {
    reject: { threshold: 20 },
    'add header': { threshold: 7 },
    greylist: { threshold: 4 },
    'rewrite subject': { threshold: 9 },
    'soft reject': { threshold: null },
    discard: { threshold: 30, milter: 'discard' },
  });
  assert.equal(cfg.engine.subjectTemplate, '[SPAM] %s');
  assert.deepEqual(cfg.engine.settings, [
    { id: 'outbound', priority: 3, apply: { actions: { reject: null } }, conditions: { user: ['@example.com'] } },
    { id: 'by_id_only', priority: 1, apply: { symbols_disabled: ['ONCE_RECEIVED'] } },
  ]);
  assert.deepEqual(cfg.engine.composites, [{ name: 'MY_COMP', expression: 'A & !B', score: 2.5, policy: 'remove_weight' }]);
  assert.equal(cfg.engine.hostname, 'mx.example.net');
});

test('local.d merges maps key by key and replaces lists', async () => {
  const cfg = await load({
    'mailsift.yaml': 'workers:\n  normal:\n    max_message: 10M\n    count: 2\nactions:\n  reject: 20\ndisabled_modules: [a, b]\n',
    'local.d/mailsift.yaml': 'workers:\n  normal:\n    count: 5\ndisabled_modules: [c]\n',
  });
  assert.equal(cfg.workers.normal.count, 5);
  assert.equal(cfg.workers.normal.maxMessage, 10 * 1024 * 1024, 'sibling key from the base file survives');
  assert.equal(cfg.engine.actions.reject?.threshold, 20);
  assert.deepEqual(cfg.engine.disabledModules, ['c']);
  assert.equal(cfg.files.length, 2);
});

test('override.d replaces the file and its local.d layer whole', async () => {
  const cfg = await load({
    'mailsift.yaml': 'actions:\n  reject: 20\nworkers:\n  normal:\n    count: 2\n',
    'local.d/mailsift.yaml': 'actions:\n  greylist: 1\n',
    'override.d/mailsift.yaml': 'logging:\n  level: debug\n',
  });
  assert.equal(cfg.engine.actions.reject?.threshold, 15, 'back to the default: the base file is not read');
  assert.equal(cfg.engine.actions.greylist?.threshold, 4, 'local.d is not read either');
  assert.equal(cfg.logging.level, 'debug');
  assert.equal(cfg.files.length, 1);
  assert.match(cfg.files[0]!, /override\.d[/\\]mailsift\.yaml$/);
});

test('module configs: local.d merged, override.d replacing, enabled: false disabling', async () => {
  const cfg = await load({
    'local.d/gtube.yaml': 'gtube_patterns: all\n',
    'local.d/headers.yaml': 'a: { b: 1, c: 2 }\nlist: [1, 2]\n',
    'override.d/headers.yaml': 'a: { b: 3 }\n',
    'local.d/mime.yaml': 'enabled: false\nx: 1\n',
  });
  assert.deepEqual(cfg.engine.modules.gtube, { gtube_patterns: 'all' });
  assert.deepEqual(cfg.engine.modules.headers, { a: { b: 3 } });
  assert.deepEqual(cfg.engine.modules.mime, { x: 1 });
  assert.deepEqual(cfg.engine.disabledModules, ['mime']);
});

test('groups.yaml and mailsift.yaml groups/symbols become engine groups and symbol overrides', async () => {
  const cfg = await load({
    'groups.yaml': 'headers:\n  max_score: 8\n  symbols:\n    MISSING_DATE: { score: 1, description: no date }\n    MISSING_MID: 2.5\n',
    'mailsift.yaml': 'groups:\n  headers: { max_score: 9 }\nsymbols:\n  MISSING_DATE: 4\n',
  });
  assert.deepEqual(cfg.engine.groups.headers, { maxScore: 9 });
  assert.deepEqual(cfg.engine.symbols.MISSING_DATE, { group: 'headers', score: 4, description: 'no date' });
  assert.deepEqual(cfg.engine.symbols.MISSING_MID, { group: 'headers', score: 2.5 });
});

test('groups.yaml may also be written under a top-level `groups:` key', async () => {
  const cfg = await load({ 'groups.yaml': 'groups:\n  mime_types:\n    max_score: 10\n    symbols: { MIME_BAD: 2 }\n' });
  assert.deepEqual(cfg.engine.groups.mime_types, { maxScore: 10 });
  assert.deepEqual(cfg.engine.symbols.MIME_BAD, { group: 'mime_types', score: 2 });
  const issues = await issuesOf({ 'groups.yaml': 'groups:\n  mime_types:\n    max_scor: 10\n' });
  assert.equal(issues[0]!.path, 'mime_types.max_scor');
  assert.equal(issues[0]!.line, 3);
  assert.match(issues[0]!.expected, /did you mean "max_score"/);
});

test('a wrong type names the file, key path, expected and found, with line:column', async () => {
  const issues = await issuesOf({ 'mailsift.yaml': 'logging:\n  level: 5\n  format: text\n' });
  assert.equal(issues.length, 1);
  const [i] = issues;
  assert.match(i!.file, /mailsift\.yaml$/);
  assert.equal(i!.path, 'logging.level');
  assert.match(i!.expected, /one of: "debug", "info"/);
  assert.equal(i!.found, '5');
  assert.deepEqual([i!.line, i!.column], [2, 10]);
});

test('an unknown key is an error with a suggestion', async () => {
  const issues = await issuesOf({ 'mailsift.yaml': 'workers:\n  normal:\n    max_mesage: 10M\n' });
  assert.equal(issues.length, 1);
  assert.equal(issues[0]!.path, 'workers.normal.max_mesage');
  assert.match(issues[0]!.expected, /did you mean "max_message"/);
  assert.deepEqual([issues[0]!.line, issues[0]!.column], [3, 5]);
});

test('a negative max_message is rejected', async () => {
  const issues = await issuesOf({ 'mailsift.yaml': 'workers:\n  normal:\n    max_message: -1\n' });
  assert.equal(issues[0]!.path, 'workers.normal.max_message');
  assert.match(issues[0]!.expected, /non-negative size/);
  assert.equal(issues[0]!.found, '-1');
});

test('bad YAML syntax reports the file and line', async () => {
  const issues = await issuesOf({ 'mailsift.yaml': 'actions:\n  reject: 15\n  greylist: [4\nlogging: {}\n' });
  assert.equal(issues.length, 1);
  assert.equal(issues[0]!.expected, 'valid YAML');
  assert.ok(issues[0]!.line !== undefined && issues[0]!.line >= 3, `line ${issues[0]!.line}`);
});

test('a key written twice is a YAML error, not a silent override', async () => {
  const issues = await issuesOf({ 'mailsift.yaml': 'actions:\n  reject: 15\n  reject: 16\n' });
  assert.equal(issues[0]!.expected, 'valid YAML');
  assert.equal(issues[0]!.line, 3);
});

test('several errors in several files are reported together, blaming the layer that set the value', async () => {
  const issues = await issuesOf({
    'mailsift.yaml': 'workers:\n  normal:\n    count: 2\n',
    'local.d/mailsift.yaml': '\nworkers:\n  normal:\n    count: 0\nactions:\n  add_heder: 5\n',
    'local.d/groups.yaml': 'headers: { max_score: "lots" }\n',
  });
  const byPath = new Map(issues.map((i) => [i.path, i]));
  const count = byPath.get('workers.normal.count');
  assert.ok(count, JSON.stringify(issues));
  assert.match(count.file, /local\.d[/\\]mailsift\.yaml$/);
  assert.equal(count.line, 4);
  assert.match(byPath.get('actions.add_heder')!.expected, /did you mean "add_header"/);
  const group = byPath.get('headers.max_score');
  assert.ok(group);
  assert.match(group.file, /local\.d[/\\]groups\.yaml$/);
  assert.equal(group.found, '"lots"');
  assert.equal(issues.length, 3);
});

test('the same action under two spellings is an error', async () => {
  const issues = await issuesOf({ 'mailsift.yaml': 'actions:\n  add_header: 6\n  "add header": 7\n' });
  assert.equal(issues.length, 1);
  assert.equal(issues[0]!.path, 'actions.add header');
});

test('zstd dictionaries: a missing file, an id that contradicts the file and corrupt tables are errors', async () => {
  const trained = TRAINED_DICTIONARY;
  const issues = await issuesOf({
    'in.dict': trained,
    'mailsift.yaml': 'workers:\n  normal:\n    zstd_input_dictionary: { file: in.dict, id: 7 }\n    zstd_output_dictionary: nope.dict\n',
  });
  const paths = issues.map((i) => i.path).sort();
  assert.deepEqual(paths, ['workers.normal.zstd_input_dictionary.id', 'workers.normal.zstd_output_dictionary']);
  assert.match(issues.find((i) => i.path.endsWith('.id'))!.expected, /4242/);

  const raw = await issuesOf({ 'raw.dict': 'some raw content', 'mailsift.yaml': 'workers:\n  normal:\n    zstd_output_dictionary: raw.dict\n' });
  assert.match(raw[0]!.expected, /trained zstd dictionary/);
  assert.equal(raw[0]!.line, 3);

  // The magic and id of a trained dictionary, then tables zstd cannot read.
  const corrupt = Buffer.concat([trained.subarray(0, 8), Buffer.alloc(100, 0xff)]);
  const bad = await issuesOf({ 'bad.dict': corrupt, 'mailsift.yaml': 'workers:\n  normal:\n    zstd_input_dictionary: bad.dict\n' });
  assert.equal(bad.length, 1);
  assert.equal(bad[0]!.path, 'workers.normal.zstd_input_dictionary');
  assert.match(bad[0]!.found, /^"bad\.dict" \(.+\)$/);

  const ok = await load({ 'in.dict': trained, 'mailsift.yaml': 'workers:\n  normal:\n    zstd_input_dictionary: in.dict\n    zstd_output_dictionary: { file: in.dict, id: 4242 }\n' });
  assert.equal(ok.workers.normal.dictionaries.input?.id, 4242);
  assert.equal(ok.workers.normal.dictionaries.output?.id, 4242);
  assert.deepEqual(ok.workers.normal.dictionaries.output?.data, trained);
});

test('a missing directory and a non-map document are errors', async () => {
  await assert.rejects(loadConfig('/nonexistent/mailsift-conf'), (err: unknown) => isConfigError(err) && /configuration directory/.test(err.message));
  const issues = await issuesOf({ 'mailsift.yaml': '- a\n- b\n' });
  assert.match(issues[0]!.expected, /map of settings/);
});

/** readConfig with the built-in modules; the issues as `file:line:col path: expected / found` lines. */
async function checkAll(files: Record<string, string | Buffer>, runtime = false, prepare?: (dir: string) => Promise<void>): Promise<{ lines: string[]; issues: readonly ConfigIssue[] }> {
  const dir = await makeConfDir(files);
  try {
    await prepare?.(dir);
    const report = await readConfig(dir, { modules: builtinModules, runtime, plugins: runtime });
    assert.equal(report.config, undefined, 'a configuration with issues yields none');
    const lines = report.issues.map((i) => `${relative(dir, i.file) || i.file}:${i.line ?? '-'}:${i.column ?? '-'} ${i.path}: ${i.expected} / ${i.found}`).sort();
    return { lines, issues: report.issues };
  } finally {
    await removeConfDir(dir);
  }
}

test('a YAML error in one module file does not hide a schema error in another', async () => {
  const { lines } = await checkAll({
    'local.d/phishing.yaml': 'strict_domains: [a\nexceptions: []\n',
    'local.d/hfilter.yaml': '\nhelo_enabeld: false\n',
  });
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.match(lines[0]!, /^local\.d\/hfilter\.yaml:2:1 helo_enabeld: a known key \(did you mean "helo_enabled"\?\)/);
  assert.match(lines[1]!, /^local\.d\/phishing\.yaml:\d+:\d+ : valid YAML \/ /);
});

test('an invalid mailsift.yaml does not hide module files, disabled_modules or groups.yaml', async () => {
  const { lines } = await checkAll({
    'mailsift.yaml': 'logging:\n  level: loud\ndisabled_modules: [gtube, hfliter]\n',
    'local.d/gtube.yaml': 'enabeld: false\n',
    'local.d/groups.yaml': 'headers: { max_scor: 1 }\n',
    'override.d/url_checks.yaml': 'omograph: yes please\n',
  });
  assert.deepEqual(lines, [
    'local.d/groups.yaml:1:12 headers.max_scor: a known key (did you mean "max_score"?) / unknown key "max_scor"',
    'local.d/gtube.yaml:1:1 enabeld: a known key (did you mean "enabled"?) / unknown key "enabeld"',
    'mailsift.yaml:2:10 logging.level: one of: "debug", "info", "warn", "error", "silent" / "loud"',
    'mailsift.yaml:3:27 disabled_modules[1]: a module name (did you mean "hfilter"?) / "hfliter"',
    'override.d/url_checks.yaml:1:11 omograph: true or false / "yes please"',
  ]);
});

test('a YAML error in mailsift.yaml does not hide the module files either', async () => {
  const { lines } = await checkAll({ 'mailsift.yaml': 'actions:\n  reject: [15\n', 'local.d/received.yaml': 'good_hosts: [mail]\n' });
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.match(lines[0]!, /^local\.d\/received\.yaml:1:1 good_hosts: a known key \(did you mean "good_host"\?\)/);
  assert.match(lines[1]!, /^mailsift\.yaml:\d+:\d+ : valid YAML/);
});

test('a composite expression that does not parse is an issue at its key, with the others', async () => {
  const { lines } = await checkAll({
    'mailsift.yaml': 'composites:\n  GOOD: { expression: "A & B" }\n  BAD:\n    expression: "A & (B"\n',
    'local.d/mime.yaml': 'bad_extension: { exe: 1 }\n',
  });
  assert.deepEqual(lines, [
    'local.d/mime.yaml:1:1 bad_extension: a known key (did you mean "bad_extensions"?) / unknown key "bad_extension"',
    'mailsift.yaml:4:17 composites.BAD.expression: a composite expression (missing closing parenthesis) / "A & (B"',
  ]);
});

test('files mailsift would not read are issues: .yml, Rspamd .conf/.inc, a module file outside local.d', async () => {
  const { lines } = await checkAll({
    'local.d/gtube.yml': 'gtube_patterns: all\n',
    'override.d/dkim.conf': 'check_local = true;\n',
    'local.d/worker-normal.inc': 'count = 2;\n',
    'hfilter.yaml': 'helo_enabled: false\n',
    'mailsift.yml': 'logging: { level: debug }\n',
    'local.d/README.md': 'notes are fine\n',
  });
  assert.deepEqual(lines, [
    'hfilter.yaml:-:- : module options in local.d/hfilter.yaml or override.d/hfilter.yaml (a module\'s file here is not read) / "hfilter.yaml"',
    'local.d/gtube.yml:-:- : a file named local.d/gtube.yaml (a .yml file is not read) / "gtube.yml"',
    'local.d/worker-normal.inc:-:- : YAML in local.d/worker-normal.yaml (Rspamd\'s .conf and .inc files are not read) / "worker-normal.inc"',
    'mailsift.yml:-:- : a file named mailsift.yaml (a .yml file is not read) / "mailsift.yml"',
    'override.d/dkim.conf:-:- : YAML in override.d/dkim.yaml (Rspamd\'s .conf and .inc files are not read) / "dkim.conf"',
  ]);
});

test('Redis store settings: addresses are checked, and settings the client would ignore are errors', async () => {
  const { lines } = await checkAll({
    'mailsift.yaml': [
      'stores:',
      '  backend: redis',
      '  redis:',
      '    servers: ["127.0.0.1:6379", "127.0.0.2:6379"]',
      '  bayes:',
      '    redis: { servers: "localhost:99999" }',
      '  fuzzy:',
      '    redis: { cluster: true, db: 3, servers: ["[::1]:7000", "::1", "host"] }',
      '  kv:',
      '    redis: { servers: "a:1", sentinels: ["s b"] }',
      '',
    ].join('\n'),
  });
  assert.deepEqual(lines, [
    'mailsift.yaml:10:42 stores.kv.redis.sentinels[0]: an address "host", "host:port" or "[v6]:port" / "s b"',
    'mailsift.yaml:4:14 stores.redis.servers: one server (several are the seed nodes of a Cluster: set cluster: true; Sentinels go in sentinels) / a list (2 items)',
    'mailsift.yaml:6:23 stores.bayes.redis.servers[0]: an address "host", "host:port" or "[v6]:port" / "localhost:99999"',
    'mailsift.yaml:8:33 stores.fuzzy.redis.db: db 0 with cluster: true (a Cluster has only db 0) / 3',
  ]);
});

test('runtime checks: a data_dir the SQLite store cannot use names the key, the path and why', async () => {
  // data_dir is a file.
  let r = await checkAll({ 'mailsift.yaml': 'logging: { level: info }\ndata_dir: plain-file\n', 'plain-file': 'x' }, true);
  assert.equal(r.lines.length, 1, r.lines.join('\n'));
  assert.match(r.lines[0]!, /^mailsift\.yaml:2:11 data_dir: a directory mailsift can create and write its SQLite store in \/ \S+\/plain-file is a file, not a directory \(SQLite store \S+\/plain-file\/mailsift\.sqlite\)$/);
  // Under a file, several levels down; and reported even though mailsift.yaml has another error.
  r = await checkAll({ 'mailsift.yaml': 'logging: { level: loud }\n', 'local.d/mailsift.yaml': 'data_dir: plain-file/a/b\n', 'plain-file': 'x' }, true);
  assert.equal(r.lines.length, 2, r.lines.join('\n'));
  assert.match(r.lines[0]!, /^local\.d\/mailsift\.yaml:1:11 data_dir: .* \/ \S+\/plain-file is a file, not a directory \(SQLite store \S+\/plain-file\/a\/b\/mailsift\.sqlite\)$/);
  assert.match(r.lines[1]!, /^mailsift\.yaml:1:19 logging\.level:/);
  // The database file itself is a directory, set by stores.sqlite.path (the key named is that
  // one; a relative path is under data_dir).
  r = await checkAll({ 'mailsift.yaml': 'stores:\n  sqlite:\n    path: db-dir\n', 'data/db-dir/keep': '' }, true);
  assert.deepEqual(
    r.lines.map((l) => l.replace(/ \/ \S+\/db-dir/, ' / …/db-dir').replace(/store \S+\/db-dir/, 'store …/db-dir')),
    ['mailsift.yaml:3:11 stores.sqlite.path: a database file mailsift can create and write / …/db-dir is a directory, not a database file (SQLite store …/db-dir)'],
  );
  // Without the runtime option (tests, tools reading a config) the file system is not judged.
  const dir = await makeConfDir({ 'mailsift.yaml': 'data_dir: plain-file\n', 'plain-file': 'x' });
  try {
    assert.equal((await readConfig(dir, { modules: builtinModules })).issues.length, 0);
  } finally {
    await removeConfDir(dir);
  }
});

test('runtime checks: a controller plugin file that does not load is an issue naming the file', async () => {
  const { lines } = await checkAll(
    {
      'local.d/controller.mjs': 'export const plugins = {\n  broken: (\n};\n',
      'controller/extra.mjs': 'export const plugins = { good: { hi: { handler() {} } }, bad: { 1: { handler: 5 } } };\n',
      'controller/none.mjs': 'export const nothing = 1;\n',
    },
    true,
  );
  assert.equal(lines.length, 3, lines.join('\n'));
  assert.match(lines[0]!, /^controller\/extra\.mjs:-:- plugins\.bad\.1: a controller plugin file that loads \/ controller plugin endpoint skipped: bad name or no handler function$/);
  assert.match(lines[1]!, /^controller\/none\.mjs:-:- : a controller plugin file that loads \/ controller plugin file exports no `plugins`$/);
  assert.match(lines[2]!, /^local\.d\/controller\.mjs:-:- : a controller plugin file that loads \/ cannot load controller plugin file: .+/);
});

test('a `__proto__` key is an error at its line, in any file and at any depth; it changes no prototype', async () => {
  const issues = await issuesOf({
    'mailsift.yaml': 'actions:\n  reject: 15\n',
    'local.d/mailsift.yaml': 'workers:\n  __proto__:\n    normal: { count: 1 }\n',
    'local.d/rbl.yaml': 'rbls:\n  __proto__:\n    rbl: evil.example.net\n',
  });
  const proto = issues.filter((i) => i.found === '"__proto__"');
  assert.deepEqual(proto.map((i) => [i.path, i.line, i.column]).sort(), [['rbls.__proto__', 2, 3], ['workers.__proto__', 2, 3]]);
  assert.ok(proto.every((i) => /local\.d[/\\](mailsift|rbl)\.yaml$/.test(i.file)), JSON.stringify(proto));
  assert.equal(({} as Record<string, unknown>).normal, undefined);
});

test('deepMerge keeps a `__proto__` key as an entry of the merged map', () => {
  const over = JSON.parse('{"a":{"__proto__":{"injected":1},"b":2}}') as Record<string, unknown>;
  const merged = deepMerge({ a: { c: 3 } }, over) as { a: Record<string, unknown> };
  assert.deepEqual(Object.keys(merged.a).sort(), ['__proto__', 'b', 'c']);
  assert.equal(merged.a.injected, undefined, 'the key did not become the prototype');
  assert.equal(Object.getPrototypeOf(merged.a), Object.prototype);
});
