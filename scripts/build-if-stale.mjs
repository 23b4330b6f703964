#!/usr/bin/env node
// Compiles the TypeScript sources into dist/ only when they changed since the last build, so a
// second `npm start` is ready in a moment instead of recompiling for 20 s (minutes on a loaded
// machine). Usage: node scripts/build-if-stale.mjs [--force] [project root, default: this repository]
//
// Staleness is a fingerprint of every input tsc reads from the project (path, size, mtime of the
// .ts files under the tsconfig's include roots, tsconfig.json, package-lock.json), stored in
// dist/.build-stamp after a successful build: a checkout, an edit or an `npm install` changes it.
// The web UI (webui/, built by Vite into dist/webui/) has its own fingerprint and stamp
// (dist/.webui-stamp), so a UI edit rebuilds only the UI and a server edit only the server.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const force = args.includes('--force');
const rootArg = args.find((a) => a !== '--force');
const root = resolve(rootArg ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const stampPath = join(root, 'dist', '.build-stamp');
/** Source roots looked at: the first path segment of each tsconfig `include` pattern. */
const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
const sourceRoots = [...new Set((tsconfig.include ?? ['src']).map((p) => p.split('/')[0]))];

function* tsFiles(dir, exts = ['.ts']) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && !e.name.startsWith('.')) yield* tsFiles(p, exts);
    } else if (exts.some((x) => e.name.endsWith(x))) yield p;
  }
}

function fingerprint(files) {
  const hash = createHash('sha256');
  files.sort();
  for (const f of files) {
    if (!existsSync(f)) continue;
    const s = statSync(f);
    hash.update(`${f}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

const serverFiles = [join(root, 'tsconfig.json'), join(root, 'package-lock.json')];
for (const r of sourceRoots) serverFiles.push(...tsFiles(join(root, r)));
const webuiDir = join(root, 'webui');
const webuiFiles = [join(root, 'package-lock.json'), ...tsFiles(webuiDir, ['.ts', '.tsx', '.css', '.html', '.mjs', '.json', '.svg'])];

buildServer();
buildWebui();

function buildServer() {
  const want = fingerprint(serverFiles);
  const have = existsSync(stampPath) ? readFileSync(stampPath, 'utf8').trim() : '';
  if (have === want && !force) return;
  if (!force) {
    process.stderr.write(
      have ? 'sources changed since the last build: compiling TypeScript into dist/ (about 20 s)…\n' : 'not built yet: compiling TypeScript into dist/ (about 20 s)…\n',
    );
  }
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  const started = Date.now();
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    process.stderr.write('the TypeScript build failed (errors above); dist/ was not marked as built\n');
    process.exit(run.status ?? 1);
  }
  mkdirSync(dirname(stampPath), { recursive: true });
  writeFileSync(stampPath, `${want}\n`);
  if (!force) process.stderr.write(`built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

/** The web UI with Vite (a devDependency): without it (a production install) the controller serves no UI of its own. */
function buildWebui() {
  if (!existsSync(join(webuiDir, 'vite.config.mjs'))) return;
  const webuiStamp = join(root, 'dist', '.webui-stamp');
  const want = fingerprint(webuiFiles);
  const have = existsSync(webuiStamp) ? readFileSync(webuiStamp, 'utf8').trim() : '';
  if (have === want && !force && existsSync(join(root, 'dist', 'webui', 'index.html'))) return;
  let vite;
  try {
    vite = join(dirname(createRequire(join(root, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
  } catch {
    process.stderr.write('vite is not installed (npm install without --omit=dev): the web UI is not built\n');
    return;
  }
  if (!force) process.stderr.write('building the web UI into dist/webui/…\n');
  const run = spawnSync(process.execPath, [vite, 'build', '--config', join(webuiDir, 'vite.config.mjs')], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    process.stderr.write('the web UI build failed (errors above); dist/webui was not marked as built\n');
    process.exit(run.status ?? 1);
  }
  mkdirSync(dirname(webuiStamp), { recursive: true });
  writeFileSync(webuiStamp, `${want}\n`);
}
