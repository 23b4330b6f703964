// Child process for sqlite-concurrency.test.ts: learns `count` messages into the SQLite file in
// `dir`, as a second worker process would, and exits 0 when every learn resolved.
// argv: dir, worker tag, count, first message index

import { openStores } from '../../src/storage/index.js';
import { storesConfig, quietLog } from './helpers.js';
import { tokensFrom } from './contract.js';

const [dir, tag, countArg, firstArg] = process.argv.slice(2);
const count = Number(countArg);
const first = Number(firstArg);
const stores = await openStores({ dataDir: dir as string, stores: storesConfig({}) }, quietLog);
const scope = { classifier: 'bayes', user: '' };
// Both processes start learning on the parent's word, so their writes really overlap.
process.stdout.write('ready\n');
await new Promise((r) => process.stdin.once('data', r));
const started = Date.now();
let firstWrite = 0;
for (let i = first; i < first + count; i++) {
  // Shared tokens (seed 1) collide between the two processes; per-message tokens do not.
  const tokens = [...tokensFrom(1, 50), ...tokensFrom(1000 + i, 50)];
  const r = await stores.bayes.learn(scope, `${tag}-${i}`, tokens, i % 2 === 0 ? 'spam' : 'ham');
  if (r !== 'learned') throw new Error(`learn ${i}: ${r}`);
  if (!firstWrite) firstWrite = Date.now();
  await stores.kv.incrBy('learns', 1);
  await stores.history.push({ unix_time: i, 'message-id': `${tag}-${i}` });
}
process.stdout.write(`${JSON.stringify({ started, firstWrite, ended: Date.now() })}\n`);
await stores.close();
process.stdin.destroy();
