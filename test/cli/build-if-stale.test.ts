import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, existsSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// `npm start` runs this script before serving: it must compile a fresh checkout, skip the build
// when nothing changed (a second start is ready at once) and rebuild after an edit.
const script = resolve('scripts/build-if-stale.mjs');

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailsift-build-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, outDir: 'dist', rootDir: '.' }, include: ['src/**/*.ts'] }),
  );
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const answer: number = 41;\n');
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  return dir;
}

function run(dir: string) {
  const r = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

test('start builds a fresh checkout, skips an unchanged one, rebuilds after an edit', () => {
  const dir = project();
  try {
    const first = run(dir);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stderr, /not built yet: compiling TypeScript/);
    assert.ok(existsSync(join(dir, 'dist', 'src', 'a.js')));

    const second = run(dir);
    assert.equal(second.status, 0);
    assert.equal(second.stderr, '', 'an unchanged tree is not rebuilt');

    writeFileSync(join(dir, 'src', 'a.ts'), 'export const answer: number = 42;\n');
    const later = new Date(Date.now() + 5000);
    utimesSync(join(dir, 'src', 'a.ts'), later, later);
    const third = run(dir);
    assert.equal(third.status, 0, third.stderr);
    assert.match(third.stderr, /sources changed since the last build/);
    assert.match(readFileSync(join(dir, 'dist', 'src', 'a.js'), 'utf8'), /42/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed build is not marked as built: the next start tries again', () => {
  const dir = project();
  try {
    writeFileSync(join(dir, 'src', 'a.ts'), 'export const answer: number = "forty-two";\n');
    const first = run(dir);
    assert.notEqual(first.status, 0);
    assert.match(first.stderr, /build failed/);
    const second = run(dir);
    assert.notEqual(second.status, 0, 'still failing, still trying');
    assert.match(second.stderr, /not built yet/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
