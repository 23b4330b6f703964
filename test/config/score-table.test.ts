// conf/groups.yaml is the score table (issue: scores live in conf/): every symbol the built-in
// modules can insert is listed there under its group with a score and a description, so an
// administrator reads and edits scores in one place and /symbols shows the same values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { builtinSymbols } from '../../bench/sync-scores.js';

interface Entry { score?: number; description?: string }
type Table = Record<string, { symbols?: Record<string, Entry | number> }>;

test('every built-in symbol is in conf/groups.yaml with its group, a score and a description', async () => {
  const table = parse(await readFile('conf/groups.yaml', 'utf8')) as Table;
  const listed = new Map<string, { group: string; entry: Entry | number }>();
  for (const [group, g] of Object.entries(table)) for (const [name, entry] of Object.entries(g.symbols ?? {})) listed.set(name, { group, entry });
  const symbols = await builtinSymbols('conf');
  assert.ok(symbols.length > 300, `only ${symbols.length} symbols listed by the engine`);
  const missing = symbols.filter((s) => !listed.has(s.name)).map((s) => s.name);
  assert.deepEqual(missing, [], 'run `npx tsx bench/sync-scores.ts` to add them');
  for (const s of symbols) {
    const { group, entry } = listed.get(s.name)!;
    assert.equal(group, s.group, `${s.name}: group`);
    assert.ok(typeof entry === 'object' && typeof entry.score === 'number', `${s.name}: a score`);
    assert.ok(typeof entry === 'object' && entry.description, `${s.name}: a description`);
    // The engine runs with the table's score: conf wins over the module's default.
    assert.equal(s.score, entry.score, `${s.name}: score in use`);
  }
});
