// `npx tsx bench/sync-scores.ts [conf-dir]`: writes every built-in symbol that conf/groups.yaml
// does not list yet into it, under its group, with the module's default score and description.
// conf/groups.yaml is the score table an administrator reads and edits; the defaults in each
// module's symbols.ts only seed it. Entries already in the file are kept as they are (a bare
// number gains the description), and so are its comments. test/config/score-table.test.ts fails
// when a symbol is missing, so run this after adding symbols.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMap, parseDocument, YAMLMap } from 'yaml';
import { loadConfig } from '../src/config/load.js';
import { createEngine } from '../src/engine/index.js';
import { builtinModules } from '../src/modules/index.js';
import { createMapRegistry } from '../src/maps/index.js';
import type { SymbolListing } from '../src/engine/index.js';

/** Every symbol the built-in modules and the shipped config define, as the engine lists them. */
export async function builtinSymbols(confDir: string): Promise<SymbolListing[]> {
  const cfg = await loadConfig(confDir);
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  // Map paths of the shipped rules are relative to the configuration directory, as in a server.
  const engine = await createEngine(cfg.engine, builtinModules, { log: quiet, maps: createMapRegistry({ baseDir: cfg.dir, log: quiet }) });
  return engine.symbols();
}

async function main(): Promise<void> {
  const confDir = process.argv[2] ?? 'conf';
  const file = join(confDir, 'groups.yaml');
  const doc = parseDocument(await readFile(file, 'utf8'));
  const root: unknown = doc.contents;
  if (!isMap<unknown, unknown>(root)) throw new Error(`${file}: expected a map of groups`);
  let added = 0;
  for (const s of await builtinSymbols(confDir)) {
    let group: unknown = root.get(s.group, true);
    if (!isMap<unknown, unknown>(group)) {
      group = new YAMLMap<unknown, unknown>();
      root.set(s.group, group);
    }
    const g = group as YAMLMap<unknown, unknown>;
    let symbols: unknown = g.get('symbols', true);
    if (!isMap<unknown, unknown>(symbols)) {
      symbols = new YAMLMap<unknown, unknown>();
      g.set('symbols', symbols);
    }
    const table = symbols as YAMLMap<unknown, unknown>;
    const entry: unknown = table.get(s.name, true);
    const description = s.description ?? '';
    if (entry === undefined) {
      const m = doc.createNode({ score: s.score, description }) as YAMLMap;
      m.flow = true;
      table.set(s.name, m);
      added++;
    } else if (!isMap(entry)) {
      // A tuned bare score: keep the number, add what the symbol means.
      const m = doc.createNode({ score: s.score, description }) as YAMLMap;
      m.flow = true;
      table.set(s.name, m);
    }
  }
  await writeFile(file, doc.toString({ lineWidth: 0 }));
  console.log(`${file}: ${added} symbols added`);
  // The engine's resolver and map timers would keep a one-shot script alive.
  process.exit(0);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
