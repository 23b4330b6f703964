// Static files (the web UI from the Debian rspamd package) through a real controller: the
// 3.4 recordings replayed, MIME types, validators, and path traversal attempts of every kind.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CONTROLLER_FIXTURES, readGolden } from './edit-fixtures.js';
import { rawRequest, startRig, type Rig } from './edit-harness.js';
import { BUILTIN_WEBUI_PATH, builtinWebuiDir } from '../../src/workers/controller/static.js';

const WWW = '/usr/share/rspamd/www';
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

let rig: Rig;
let site: Rig;
before(async () => {
  rig = await startRig({ controllerYaml: [`static_dir: ${WWW}`] });
  // A private static dir with a symlink that leaves it and a directory without index.html.
  site = await startRig({
    noPasswords: true,
    controllerYaml: ['static_dir: site'],
    files: { 'site/index.html': '<p>hi</p>', 'site/app.svg': '<svg/>', 'site/sub/x.woff2': 'w', 'secret.txt': 'top secret' },
  });
  await symlink(join(site.dir, 'secret.txt'), join(site.dir, 'site/leak.txt'));
  await symlink('/etc', join(site.dir, 'site/etc'));
  await mkdir(join(site.dir, 'site/empty'));
  await writeFile(join(site.dir, 'site/inside-target.txt'), 'ok');
  await symlink(join(site.dir, 'site/inside-target.txt'), join(site.dir, 'site/inside-link.txt'));
});
after(async () => {
  await rig.close();
  await site.close();
});

describe('serving the Rspamd web UI', { skip: existsSync(WWW) ? false : `${WWW} missing (Debian package rspamd)` }, () => {
  for (const name of ['static_index', 'static_root', 'static_js', 'static_png_headers_only', 'static_post']) {
    it(`${name} as recorded from 3.4`, async () => {
      const g = readGolden(name);
      const r = await rawRequest(rig.controllerPort, g.method, g.path, g.headers, g.body);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), g.replyHeaders.get('content-type'));
      assert.equal(r.headers.get('content-length'), g.replyHeaders.get('content-length'));
      const want = /md5 ([0-9a-f]{32})/.exec(readFileSync(join(CONTROLLER_FIXTURES, `${name}.md`), 'utf8'))![1];
      assert.equal(md5(r.body), want, 'the same bytes as 3.4 served');
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.ok(r.headers.get('etag'));
    });
  }

  it('a directory without index.html and traversal attempts are the router 404', async () => {
    for (const name of ['static_css_dir', 'static_traversal']) {
      const g = readGolden(name);
      const r = await rawRequest(rig.controllerPort, g.method, g.path, g.headers, g.body);
      assert.equal(r.status, 404, name);
      assert.equal(r.reason, g.reason);
      assert.equal(r.body.toString(), g.replyBody);
    }
  });

  it('answers 304 when the validator matches', async () => {
    const first = await rawRequest(rig.controllerPort, 'GET', '/js/main.js');
    const r = await rawRequest(rig.controllerPort, 'GET', '/js/main.js', { 'If-None-Match': first.headers.get('etag')! });
    assert.equal(r.status, 304);
    assert.equal(r.body.length, 0);
  });
});

describe('path safety and types on a private static dir', () => {
  const attempts = [
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/%2E%2E%2Fsecret.txt',
    '/sub/..%2f..%2fsecret.txt',
    '/..%5csecret.txt',
    '/leak.txt',
    '/etc/passwd',
    '/index.html%00.png',
    '/%',
    '/empty',
    '/empty/',
    '/nothing.html',
  ];
  for (const p of attempts) {
    it(`refuses ${p}`, async () => {
      const r = await rawRequest(site.controllerPort, 'GET', p);
      assert.equal(r.status, 404);
      assert.equal(r.body.toString(), 'Not found');
      assert.ok(!r.body.toString().includes('secret') && !r.body.toString().includes('root:'));
    });
  }

  it('serves files, symlinks inside the dir, directories with index.html, with registered types', async () => {
    const root = await rawRequest(site.controllerPort, 'GET', '/');
    assert.equal(root.body.toString(), '<p>hi</p>');
    assert.equal(root.headers.get('content-type'), 'text/html');
    assert.equal((await rawRequest(site.controllerPort, 'GET', '/app.svg')).headers.get('content-type'), 'image/svg+xml');
    assert.equal((await rawRequest(site.controllerPort, 'GET', '/sub/x.woff2')).headers.get('content-type'), 'font/woff2');
    assert.equal((await rawRequest(site.controllerPort, 'GET', '/inside-link.txt')).body.toString(), 'ok');
    assert.equal((await rawRequest(site.controllerPort, 'GET', '/sub/../index.html')).status, 200);
  });

  it('OPTIONS answers the CORS preflight on any path without a password', async () => {
    const r = await rawRequest(site.controllerPort, 'OPTIONS', '/saveactions');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('access-control-allow-methods'), 'POST, GET, OPTIONS');
    assert.equal(r.headers.get('access-control-allow-headers'), 'Content-Type,Password,Map,Weight,Flag');
  });
});

describe("mailsift's own web UI when no static_dir is set", () => {
  it('is dist/webui under the package root, found from the compiled or the source tree, once it is built', async () => {
    const root = await mkdtemp(join(tmpdir(), 'mailsift-pkg-'));
    try {
      await writeFile(join(root, 'package.json'), '{}');
      const compiled = join(root, 'dist/src/workers/controller');
      const source = join(root, 'src/workers/controller');
      await mkdir(compiled, { recursive: true });
      await mkdir(source, { recursive: true });
      assert.equal(builtinWebuiDir(compiled), undefined, 'not built: no UI');
      await mkdir(join(root, BUILTIN_WEBUI_PATH), { recursive: true });
      await writeFile(join(root, BUILTIN_WEBUI_PATH, 'index.html'), '<!doctype html>');
      assert.equal(builtinWebuiDir(compiled), join(root, BUILTIN_WEBUI_PATH));
      assert.equal(builtinWebuiDir(source), join(root, BUILTIN_WEBUI_PATH));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
