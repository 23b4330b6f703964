// Every schema that reads user config is strict, and a misspelt key in any module's file is
// reported with file:line:column and a suggestion. The modules come from the registry, so a
// module added later with a loose schema (z.object, z.looseObject, .passthrough) fails here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ZodType } from 'zod';
import { readConfig } from '../../src/config/load.js';
import { Groups, MainConfig } from '../../src/config/schema.js';
import { allowedKeys } from '../../src/config/suggest.js';
import { builtinModules } from '../../src/modules/index.js';
import { DEFAULT_COMPOSITES } from '../../src/modules/composites/defaults.js';
import { makeConfDir, removeConfDir } from './conf-dir.js';

/** The parts of zod's definition the walk follows. */
interface Def {
  type: string;
  shape?: Record<string, ZodType>;
  catchall?: ZodType;
  innerType?: ZodType;
  in?: ZodType;
  out?: ZodType;
  options?: ZodType[];
  valueType?: ZodType;
  element?: ZodType;
  items?: ZodType[];
  rest?: ZodType | null;
  left?: ZodType;
  right?: ZodType;
  getter?: () => ZodType;
}

const defOf = (s: ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Key paths of every object in the schema that accepts keys it does not name. */
function looseObjects(schema: ZodType, at = '(top)', seen = new Set<ZodType>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const d = defOf(schema);
  const inner = (s: ZodType | undefined | null, path = at): string[] => (s ? looseObjects(s, path, seen) : []);
  switch (d.type) {
    case 'object': {
      const own = d.catchall && defOf(d.catchall).type === 'never' ? [] : [at];
      return [...own, ...Object.entries(d.shape ?? {}).flatMap(([k, v]) => inner(v, at === '(top)' ? k : `${at}.${k}`))];
    }
    case 'pipe':
      return [...inner(d.in), ...inner(d.out)];
    case 'union':
      return (d.options ?? []).flatMap((o) => inner(o));
    case 'record':
      return inner(d.valueType, `${at}.*`);
    case 'array':
      return inner(d.element, `${at}[]`);
    case 'tuple':
      return [...(d.items ?? []).flatMap((i) => inner(i, `${at}[]`)), ...inner(d.rest, `${at}[]`)];
    case 'intersection':
      return [...inner(d.left), ...inner(d.right)];
    case 'lazy':
      return d.getter ? inner(d.getter()) : [];
    default:
      return d.innerType ? inner(d.innerType) : [];
  }
}

test('the walk finds a loose object at any depth (it can fail)', async () => {
  const { z } = await import('zod');
  assert.deepEqual(looseObjects(z.strictObject({ a: z.record(z.string(), z.object({ b: z.number() })).optional() })), ['a.*']);
  assert.deepEqual(looseObjects(z.strictObject({ a: z.array(z.union([z.string(), z.looseObject({})])) })), ['a[]']);
  assert.deepEqual(looseObjects(z.strictObject({ a: z.strictObject({}).default({}) })), []);
});

test('mailsift.yaml and groups.yaml schemas are strict at every depth', () => {
  assert.deepEqual(looseObjects(MainConfig), []);
  assert.deepEqual(looseObjects(Groups), []);
});

test('every module in the registry has a config schema, strict at every depth', () => {
  assert.ok(builtinModules.length >= 26, `${builtinModules.length} modules`);
  for (const mod of builtinModules) {
    assert.ok(mod.config, `module ${mod.name} has no config schema: its local.d file would take any key`);
    assert.deepEqual(looseObjects(mod.config), [], `module ${mod.name}: loose objects at these key paths`);
  }
});

/** The key with two neighbouring letters swapped (the commonest typo). */
function misspell(key: string): string {
  for (let i = Math.floor(key.length / 2); i < key.length - 1; i++) {
    if (key[i] !== key[i + 1] && key[i] !== '_' && key[i + 1] !== '_') return key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
  }
  return `${key}x`;
}

test('a misspelt key in any module file is reported with file:line:column and a suggestion', async () => {
  const files: Record<string, string> = {};
  const expected = new Map<string, { key: string; wrong: string }>();
  for (const mod of builtinModules) {
    // The module's longest key (the least ambiguous to misspell), or the `enabled` every module file takes.
    const keys = allowedKeys(mod.config!, []).sort((a, b) => b.length - a.length);
    const key = keys[0] ?? 'enabled';
    const wrong = misspell(key);
    files[`local.d/${mod.name}.yaml`] = `# ${mod.name}\n${wrong}: 1\n`;
    expected.set(mod.name, { key, wrong });
  }
  const dir = await makeConfDir(files);
  try {
    const report = await readConfig(dir, { modules: builtinModules });
    assert.equal(report.config, undefined);
    for (const [name, { key, wrong }] of expected) {
      const found = report.issues.filter((i) => i.file.endsWith(`local.d/${name}.yaml`));
      assert.equal(found.length, 1, `${name}: ${JSON.stringify(found)}`);
      const [issue] = found;
      assert.equal(issue!.path, wrong, name);
      assert.deepEqual([issue!.line, issue!.column], [2, 1], name);
      assert.equal(issue!.expected, `a known key (did you mean "${key}"?)`, name);
      assert.equal(issue!.found, `unknown key "${wrong}"`, name);
    }
    assert.equal(report.issues.length, builtinModules.length, JSON.stringify(report.issues, null, 1));
  } finally {
    await removeConfDir(dir);
  }
});

test('`enabled` misspelt in a module file suggests `enabled` (the loader reads it, not the module)', async () => {
  const dir = await makeConfDir({ 'local.d/gtube.yaml': 'enabeld: false\n', 'local.d/maillist.yaml': 'enabled: false\nenable: true\n' });
  try {
    const { issues } = await readConfig(dir, { modules: builtinModules });
    assert.deepEqual(
      issues.map((i) => [i.file.replace(/.*local\.d\//, ''), i.line, i.column, i.path, i.expected]).sort(),
      [
        ['gtube.yaml', 1, 1, 'enabeld', 'a known key (did you mean "enabled"?)'],
        ['maillist.yaml', 2, 1, 'enable', 'a known key (did you mean "enabled"?)'],
      ],
    );
  } finally {
    await removeConfDir(dir);
  }
});

test('nested keys and names in module files: misspelt routine options, routine names, composites and rules', async () => {
  const dir = await makeConfDir({
    'local.d/milter_headers.yaml': 'use: [x-spamd-bar, x-spamd-bra]\nroutines:\n  x-spamd-bar: { heder: X-Bar }\n  x-spam-bar: {}\nfooter: { txt: hi }\n',
    'local.d/composites.yaml': 'disabled: [AUTH_NA, AUTH_NAA]\n',
    'local.d/header_regexps.yaml': 'disabled_rules: [FORGED_OUTLOOK_HTM]\n',
    'local.d/rbl.yaml': 'rbls:\n  spamhaus:\n    ipv44: false\n',
    'local.d/multimap.yaml': 'rules:\n  MY_MAP:\n    type: from\n    data: [a@example.com]\n    scroe: 1\n',
  });
  try {
    const { issues } = await readConfig(dir, { modules: builtinModules });
    const got = issues.map((i) => `${i.file.replace(/.*local\.d\//, '')}:${i.line}:${i.column} ${i.path}: ${i.expected}`).sort();
    assert.deepEqual(got, [
      // The default composites' names (counted, so that adding one does not break this test).
      `composites.yaml:1:21 disabled[1]: one of ${Object.keys(DEFAULT_COMPOSITES).length} names (did you mean "AUTH_NA"?)`,
      'header_regexps.yaml:1:18 disabled_rules[0]: one of 89 names (did you mean "FORGED_OUTLOOK_HTML"?)',
      'milter_headers.yaml:1:20 use[1]: one of 19 names (did you mean "x-spamd-bar"?)',
      'milter_headers.yaml:3:18 routines.x-spamd-bar.heder: a known key (did you mean "header"?)',
      'milter_headers.yaml:4:3 routines.x-spam-bar: a known key (did you mean "x-spamd-bar"?)',
      'milter_headers.yaml:5:11 footer.txt: a known key (did you mean "text"?)',
      'multimap.yaml:5:5 rules.MY_MAP.scroe: a known key (did you mean "score"?)',
      'rbl.yaml:3:5 rbls.spamhaus.ipv44: a known key (did you mean "ipv4"?)',
    ]);
  } finally {
    await removeConfDir(dir);
  }
});
