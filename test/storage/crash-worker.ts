// Child process for crash-safety.test.ts: learns messages into the SQLite file in `dir` until
// it is killed, printing "ok <digest> <class>" after each learn resolved.
// argv: dir

import { openStores } from '../../src/storage/index.js';
import { storesConfig, quietLog } from './helpers.js';
import { tokensFrom } from './contract.js';

const stores = await openStores({ dataDir: process.argv[2] as string, stores: storesConfig({}) }, quietLog);
const scope = { classifier: 'bayes', user: '' };
for (let i = 0; ; i++) {
  const cls = i % 3 === 0 ? 'ham' : 'spam';
  // Every message carries the shared tokens, so their counts must equal the learn counters.
  await stores.bayes.learn(scope, `crash-${i}`, [...tokensFrom(1, 20), ...tokensFrom(500 + i, 200)], cls);
  process.stdout.write(`ok crash-${i} ${cls}\n`);
}
