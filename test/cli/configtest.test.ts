import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli } from './run-cli.js';

async function configtest(dir: string): Promise<{ code: number | null; out: string }> {
  const run = runCli(['configtest', '-c', dir]);
  const { code } = await run.exited;
  return { code, out: run.output() };
}

test('configtest: the shipped conf/ is OK', async () => {
  const r = await configtest('conf');
  assert.equal(r.code, 0, r.out);
  // Modules with nothing to do in the shipped config (no keys, no servers) say so in a note.
  assert.match(r.out, /syntax OK\n$/);
  for (const line of r.out.trim().split('\n').slice(0, -1)) assert.match(line, /^module \S+ is off: /);
  assert.doesNotMatch(r.out, /module bayes is off/, 'the shipped config gives Bayes its store');
});

test('configtest: every error in every file, exit status 1', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': 'logging:\n  level: loud\nactions:\n  reject: "high"\n',
    'local.d/mailsift.yaml': 'workers:\n  normal:\n    max_message: -1\n',
  });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.out, /syntax OK/);
    assert.match(r.out, /mailsift\.yaml:2:10: logging\.level: expected one of: .*found "loud"/);
    assert.match(r.out, /mailsift\.yaml:4:11: actions\.reject: expected a number or a map, found "high"/);
    assert.match(r.out, /local\.d\/mailsift\.yaml:3:18: workers\.normal\.max_message: expected a non-negative size.*found -1/);
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest: module configs are checked against the modules and their schemas', async () => {
  const dir = await makeConfDir({
    'local.d/gtube.yaml': 'gtube_patterns: sometimes\n',
    'local.d/gtueb.yaml': 'gtube_patterns: all\n',
  });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 1);
    assert.match(r.out, /local\.d\/gtube\.yaml:1:17: gtube_patterns: expected one of: "reject", "all", "disabled", found "sometimes"/);
    assert.match(r.out, /local\.d\/gtueb\.yaml: expected a module's file name \(did you mean "gtube\.yaml"\?\)/);
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest: modules switched off and valid module config pass, with a note per module off', async () => {
  const dir = await makeConfDir({ 'local.d/gtube.yaml': 'gtube_patterns: disabled\n', 'local.d/mime.yaml': 'enabled: false\n' });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /module gtube is off: config/);
    assert.match(r.out, /module mime is off: disabled in config/);
    assert.match(r.out, /syntax OK\n$/);
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest: a missing directory is an error', async () => {
  const r = await configtest('/nonexistent/mailsift');
  assert.equal(r.code, 1);
  assert.match(r.out, /expected a configuration directory/);
});

/** `serve` on `dir`: it must refuse to start (status 1, nothing listening); returns its output. */
test('configtest: a Redis store that does not answer is a note naming its address and config section', async () => {
  // Port 1 on loopback refuses at once; the configuration itself is valid, so the status is 0.
  const dir = await makeConfDir({ 'mailsift.yaml': 'stores:\n  bayes:\n    backend: redis\n    redis: { servers: "127.0.0.1:1", connect_timeout: 0.5 }\n' });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /stores: redis store not reachable yet at 127\.0\.0\.1:1 db 0 \(stores\.bayes\.redis in mailsift\.yaml\): connect ECONNREFUSED 127\.0\.0\.1:1/);
    assert.match(r.out, /syntax OK\n$/);
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest: a setting a module cannot use when it sets up is an error blaming the module\'s file', async () => {
  const dir = await makeConfDir({
    'local.d/arc.yaml': 'seal:\n  domain: example.com\n  selector: s1\n  path: no-such-key.pem\n',
    'local.d/fuzzy_check.yaml': 'rules:\n  local:\n    servers: "127.0.0.1:11335"\n    encryption_key: "not a key"\n',
  });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /local\.d\/arc\.yaml: expected settings module arc can use, found arc: cannot read the sealing key; sealing off \(path=no-such-key\.pem error=ENOENT/);
    assert.match(r.out, /local\.d\/fuzzy_check\.yaml: expected settings module fuzzy_check can use, found fuzzy rule local: encryption_key is not a valid public key/);
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest: map entries a rule cannot use are a note naming the map kind and how many were skipped', async () => {
  const dir = await makeConfDir({ 'local.d/multimap.yaml': 'rules:\n  SUBJ:\n    type: header\n    header: Subject\n    regexp: true\n    data: ["/(unclosed/", "/fine/"]\n' });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^maps: map entries skipped: not valid for the map kind \(.*kind=regexp skipped=1\)$/m);
  } finally {
    await removeConfDir(dir);
  }
});
