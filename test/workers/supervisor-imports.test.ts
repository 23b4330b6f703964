// The supervisor process never loads the engine's code (src/workers/config-process.ts): its
// memory was a third module code it never ran. This follows the static imports from the
// supervisor's entry (the `mailsift` command line) through the source tree and fails when one of
// them reaches the engine, the configuration loader or a worker role; those are loaded with
// `await import()` where a command or a worker needs them.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Files of ours no static import from the supervisor may reach. */
const ENGINE_SIDE = ['src/engine/index.ts', 'src/config/load.ts', 'src/workers/config-check.ts', 'src/workers/in-process.ts', 'src/workers/normal.ts', 'src/workers/controller.ts', 'src/workers/proxy.ts'];

/** Packages the engine side uses and the supervisor has no need of. */
const ENGINE_PACKAGES = ['mailauth', 'zod', 'postal-mime', 'linkify-it', 'tldts', 'iconv-lite', 'yaml'];

/** Static `import … from '…'` and `export … from '…'`, not `import type` (erased) nor `import()`. */
const STATIC_IMPORT = /^(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s+'([^']+)';|^import\s+'([^']+)';/gms;

interface Graph {
  files: Set<string>;
  packages: Set<string>;
  /** How each file was first reached, to name the chain in a failure. */
  via: Map<string, string>;
}

function staticGraph(...entries: string[]): Graph {
  const g: Graph = { files: new Set(entries), packages: new Set(), via: new Map() };
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(STATIC_IMPORT)) {
      const spec = m[1] ?? m[2]!;
      if (spec.startsWith('node:')) continue;
      if (!spec.startsWith('.')) {
        g.packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
        continue;
      }
      const target = relative(ROOT, join(ROOT, dirname(file), spec.replace(/\.js$/, '.ts')));
      assert.ok(existsSync(join(ROOT, target)), `${file} imports ${spec}, not found as ${target}`);
      if (g.files.has(target)) continue;
      g.files.add(target);
      g.via.set(target, file);
      queue.push(target);
    }
  }
  return g;
}

function chain(g: Graph, file: string): string {
  const path = [file];
  for (let f = g.via.get(file); f !== undefined; f = g.via.get(f)) path.unshift(f);
  return path.join(' → ');
}

describe('the supervisor process', () => {
  const g = staticGraph('src/cli/mailsift.ts');

  it('reaches the supervisor and its configuration process by static imports', () => {
    // The walk itself must work, or the checks below would pass on nothing.
    assert.ok(g.files.has('src/workers/supervisor.ts'));
    assert.ok(g.files.has('src/workers/config-process.ts'));
    assert.ok(g.files.has('src/workers/stats-wiring.ts'));
    assert.ok(g.packages.has('pino'));
  });

  it('does not import the engine, the configuration loader or a worker role statically', () => {
    for (const f of ENGINE_SIDE) assert.ok(!g.files.has(f), `the supervisor loads ${f}: ${chain(g, f)}`);
  });

  it('does not import the engine side\'s packages', () => {
    for (const p of ENGINE_PACKAGES) assert.ok(!g.packages.has(p), `the supervisor loads the package ${p}`);
  });

  it('while the child that checks the configuration does', () => {
    const child = staticGraph('src/workers/config-process-main.ts');
    for (const f of ['src/engine/index.ts', 'src/config/load.ts', 'src/workers/config-check.ts']) assert.ok(child.files.has(f), f);
  });
});

describe('a worker process', () => {
  // The entry installs the signal handlers (operator-signals.ts), then imports its roles' code
  // with `await import()`: loading that graph takes a while, and a SIGUSR1 may arrive meanwhile.
  const entry = staticGraph('src/workers/worker-main.ts');
  const g = staticGraph('src/workers/worker-main.ts', 'src/workers/in-process.ts');

  it('installs its signal handlers before its roles\' code loads', () => {
    assert.ok(entry.files.has('src/workers/operator-signals.ts'));
    assert.ok(!entry.files.has('src/workers/in-process.ts'), `the entry loads in-process.ts statically: ${chain(entry, 'src/workers/in-process.ts')}`);
    assert.match(readFileSync(join(ROOT, 'src/workers/worker-main.ts'), 'utf8'), /await import\('\.\/in-process\.js'\)/);
  });

  it('reaches its roles\' code, and not the command line, the supervisor or start-up-only packages', () => {
    assert.ok(g.files.has('src/workers/in-process.ts'));
    assert.ok(g.files.has('src/config/load.ts'));
    assert.ok(g.packages.has('zod'));
    // The worker's entry replaces the command line (src/workers/worker-main.ts).
    for (const f of ['src/cli/mailsift.ts', 'src/workers/supervisor.ts']) assert.ok(!g.files.has(f), `a worker loads ${f}: ${chain(g, f)}`);
    // commander: the command line's; esbuild: only a TypeScript plugin needs it (imported then);
    // @noble/curves: X25519 is node:crypto's (src/crypto/x25519.ts).
    for (const p of ['commander', 'esbuild', '@noble/curves']) assert.ok(!g.packages.has(p), `a worker loads the package ${p}`);
  });
});
