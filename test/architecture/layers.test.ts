// The layer rules of .dependency-cruiser.cjs (docs/layers.md): src/ has no import that points up
// a floor, no module reaches past the plugin API's door, and the check itself catches a planted
// upward import, so a broken rule set cannot pass by checking nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const REPO = process.cwd();
const options: ICruiseOptions = { ...(await extractDepcruiseOptions(resolve(REPO, '.dependency-cruiser.cjs'))), validate: true };
const tsConfig = extractTSConfig(resolve(REPO, 'tsconfig.json'));

async function cruiseTree(baseDir: string): Promise<ICruiseResult> {
  const out = await cruise(['src'], { ...options, baseDir }, undefined, { tsConfig });
  assert.equal(typeof out.output, 'object', 'a cruise result object');
  return out.output as ICruiseResult;
}

const errors = (r: ICruiseResult): IViolation[] => r.summary.violations.filter((v) => v.rule.severity === 'error');
const describe = (v: IViolation): string => `${v.rule.name}: ${v.from} -> ${v.to}`;

test('src/ keeps to its floors: no upward import, no module past the door', async () => {
  const result = await cruiseTree(REPO);
  // The cruise really followed the imports (a resolver that found nothing would pass every rule).
  assert.ok(result.summary.totalCruised > 300, `cruised ${result.summary.totalCruised} files`);
  assert.ok((result.summary.totalDependenciesCruised ?? 0) > 1000, `followed ${result.summary.totalDependenciesCruised} imports`);
  assert.deepEqual(errors(result).map(describe), []);
});

test('the check fails on an upward import, a module past the door and a module importing another', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailsift-layers-'));
  try {
    const files: Record<string, string> = {
      // core (floor 0) reaching up into the plugin API
      'src/core/logger.ts': "import type { Door } from '../plugin-api/index.js';\nexport type Logger = Door;\n",
      'src/plugin-api/index.ts': "export type Door = string;\n",
      // a module importing storage directly, and another module's folder
      'src/modules/alpha/index.ts': "import type { Store } from '../../storage/types.js';\nimport { beta } from '../beta/index.js';\nexport const alpha: Store = beta;\n",
      'src/modules/beta/index.ts': "export const beta = 'b';\n",
      'src/storage/types.ts': "export type Store = string;\n",
      // a folder with no floor
      'src/engine/index.ts': "import { x } from '../attic/x.js';\nexport const y = x;\n",
      'src/attic/x.ts': "export const x = 1;\n",
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(dir, dirname(path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    const found = errors(await cruiseTree(dir)).map(describe).sort();
    assert.deepEqual(found, [
      'layer-core: src/core/logger.ts -> src/plugin-api/index.ts',
      'module-door: src/modules/alpha/index.ts -> src/storage/types.ts',
      'module-to-module: src/modules/alpha/index.ts -> src/modules/beta/index.ts',
      'unknown-folder: src/engine/index.ts -> src/attic/x.ts',
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
