// configtest and serve on the same broken configuration directories: every problem in every file,
// named with its file and key. Split from configtest.test.ts so neither file outruns the runner's
// per-file time-out on a loaded machine (each case starts the CLI two or three times).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { makeConfDir, removeConfDir } from '../config/conf-dir.js';
import { runCli } from './run-cli.js';

async function configtest(dir: string): Promise<{ code: number | null; out: string }> {
  const run = runCli(['configtest', '-c', dir]);
  const { code } = await run.exited;
  return { code, out: run.output() };
}

async function serveRefuses(dir: string, args: string[] = ['--single'], as?: { uid: number; gid: number }): Promise<string> {
  const srv = runCli(['serve', ...args, '-c', dir], as);
  try {
    const { code } = await srv.exited;
    assert.equal(code, 1, srv.output());
    assert.equal(srv.lines.filter((l) => /^listening/.test(l.msg)).length, 0, 'nothing listens');
    return srv.output();
  } finally {
    srv.child.kill('SIGKILL');
  }
}

const EPHEMERAL = 'workers:\n  normal: { bind: "127.0.0.1:0" }\n  controller: { bind: "127.0.0.1:0" }\n';

test('configtest: misspelt keys in module files (gtube, hfilter, phishing) are errors with file:line:col and a suggestion', async () => {
  const dir = await makeConfDir({
    'local.d/gtube.yaml': 'enabeld: false\n',
    'local.d/hfilter.yaml': 'helo_enabled: true\nurl_enable: false\n',
    'local.d/phishing.yaml': 'strict_domain: [paypal.com]\n',
  });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 1, r.out);
    assert.doesNotMatch(r.out, /syntax OK/);
    assert.match(r.out, /local\.d\/gtube\.yaml:1:1: enabeld: expected a known key \(did you mean "enabled"\?\), found unknown key "enabeld"/);
    assert.match(r.out, /local\.d\/hfilter\.yaml:2:1: url_enable: expected a known key \(did you mean "url_enabled"\?\), found unknown key "url_enable"/);
    assert.match(r.out, /local\.d\/phishing\.yaml:1:1: strict_domain: expected a known key \(did you mean "strict_domains"\?\), found unknown key "strict_domain"/);
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest and serve: a YAML error in one file and a schema error in another are both reported', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': EPHEMERAL,
    'local.d/multimap.yaml': 'rules:\n  BAD_FROM:\n    type: from\n   data: [a@example.com]\n',
    'local.d/rbl.yaml': 'rbls:\n  spamhaus:\n    enabled: no thanks\n',
  });
  try {
    for (const out of [(await configtest(dir)).out, await serveRefuses(dir)]) {
      assert.match(out, /local\.d\/multimap\.yaml:\d+:\d+: expected valid YAML, found /);
      assert.match(out, /local\.d\/rbl\.yaml:3:14: rbls\.spamhaus\.enabled: expected true or false, found "no thanks"/);
    }
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest and serve: an error in mailsift.yaml and one in a local.d module file are both reported', async () => {
  const dir = await makeConfDir({
    'mailsift.yaml': `${EPHEMERAL}actions:\n  add_heder: 5\n`,
    'local.d/dkim.yaml': 'min_key_bits: 256\n',
    'override.d/received.yaml': 'god_host: [mail]\n',
  });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 1, r.out);
    for (const out of [r.out, await serveRefuses(dir, ['--workers', '1'])]) {
      assert.match(out, /mailsift\.yaml:5:3: actions\.add_heder: expected a known key \(did you mean "add_header"\?\), found unknown key "add_heder"/);
      assert.match(out, /local\.d\/dkim\.yaml:1:15: min_key_bits: expected a number >= 512, found 256/);
      assert.match(out, /override\.d\/received\.yaml:1:1: god_host: expected a known key \(did you mean "good_host"\?\), found unknown key "god_host"/);
    }
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest and serve: a data_dir that is a file names the key, the path and the file at fault', async () => {
  const dir = await makeConfDir({ 'mailsift.yaml': `${EPHEMERAL}data_dir: state\n`, state: 'not a directory\n' });
  try {
    const r = await configtest(dir);
    assert.equal(r.code, 1, r.out);
    const want = new RegExp(`mailsift\\.yaml:4:11: data_dir: expected a directory mailsift can create and write its SQLite store in, found ${dir}/state is a file, not a directory \\(SQLite store ${dir}/state/mailsift\\.sqlite\\)`);
    assert.match(r.out, want);
    assert.match(await serveRefuses(dir), want);
    assert.match(await serveRefuses(dir, ['--workers', '1']), want);
  } finally {
    await removeConfDir(dir);
  }
});

test('configtest and serve: a data_dir that cannot be written (or created) names the key and the directory', async () => {
  // Mode bits do not stop root: as root, the CLI runs as nobody.
  const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
  const dir = await makeConfDir({ 'conf/mailsift.yaml': `${EPHEMERAL}data_dir: ../locked/missing/data\n`, 'locked/keep': '' });
  await chmod(dir, 0o755);
  await chmod(join(dir, 'locked'), 0o555);
  try {
    const conf = join(dir, 'conf');
    const run = runCli(['configtest', '-c', conf], as);
    const { code } = await run.exited;
    assert.equal(code, 1, run.output());
    const want = new RegExp(
      `mailsift\\.yaml:4:11: data_dir: expected a directory mailsift can create and write its SQLite store in, found ${dir}/locked/missing/data does not exist and cannot be created: ${dir}/locked is not writable \\(EACCES\\)`,
    );
    assert.match(run.output(), want);
    assert.match(await serveRefuses(conf, ['--single'], as), want);
  } finally {
    await chmod(join(dir, 'locked'), 0o755);
    await removeConfDir(dir);
  }
});

test('configtest and serve: a store file SQLite cannot open names the path and the key (the store\'s own error)', async () => {
  // The directory is fine and the file writable, so only opening it can tell: not a database.
  const dir = await makeConfDir({ 'mailsift.yaml': EPHEMERAL, 'data/mailsift.sqlite': 'x'.repeat(4096) });
  try {
    const want = new RegExp(`data_dir: cannot open the SQLite store ${dir}/data/mailsift\\.sqlite: file is not a database; set data_dir in mailsift\\.yaml`);
    const r = await configtest(dir);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, want);
    assert.match(await serveRefuses(dir), want);
    assert.match(await serveRefuses(dir, ['--workers', '1']), want);
  } finally {
    await removeConfDir(dir);
  }
});

test('a controller plugin file that does not load: configtest names it as an error; serve starts without it and logs why', async () => {
  const dir = await makeConfDir({ 'mailsift.yaml': EPHEMERAL, 'local.d/controller.mjs': 'export const plugins = {\n  hello: {\n};\n' });
  try {
    const want = /local\.d\/controller\.mjs: expected a controller plugin file that loads, found cannot load controller plugin file: /;
    const r = await configtest(dir);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, want);
    const srv = runCli(['serve', '--single', '-c', dir]);
    try {
      await srv.waitFor((l) => l.worker === 'controller' && /^listening on /.test(l.msg), 'the controller to listen', 90_000);
      const line = srv.lines.find((l) => /^cannot load controller plugin file/.test(l.msg));
      assert.ok(line, srv.output());
      assert.match(String(line.file), /local\.d\/controller\.mjs$/);
    } finally {
      srv.child.kill('SIGKILL');
      await srv.exited;
    }
  } finally {
    await removeConfDir(dir);
  }
});
